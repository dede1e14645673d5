package io.kvtier.tier.posix;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DirectIoTest
{
    private final System.Logger logger = System.getLogger(DirectIoTest.class.getName());

    @Test
    void shouldApplyOnlyToAlignedBuffersWhileActive()
    {
        final DirectIo direct = new DirectIo(true, logger);
        assertThat(direct.appliesTo(8192, 69632)).isTrue();
        assertThat(direct.appliesTo(8192 + 512, 69632)).as("misaligned address").isFalse();
        assertThat(direct.appliesTo(8192, 69632 + 512)).as("misaligned length").isFalse();
        assertThat(new DirectIo(false, logger).appliesTo(8192, 4096)).isFalse();
    }

    @Test
    void shouldTurnOffForGoodWhenTheFilesystemRefusesIt()
    {
        final DirectIo direct = new DirectIo(true, logger);
        direct.refused("read of /x");
        direct.refused("read of /y");
        assertThat(direct.active()).isFalse();
        assertThat(direct.appliesTo(4096, 4096)).isFalse();
    }
}
