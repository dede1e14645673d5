package io.kvtier.spi;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpiVersionTest
{
    private static final SpiVersion ENGINE = new SpiVersion(2, 3);

    @Test
    void shouldRunPluginsOfTheSameMajorUpToItsOwnMinor()
    {
        assertThat(ENGINE.runs(new SpiVersion(2, 0))).isTrue();
        assertThat(ENGINE.runs(new SpiVersion(2, 3))).isTrue();
    }

    @Test
    void shouldRefuseANewerMinorAnotherMajorAndNoVersion()
    {
        assertThat(ENGINE.runs(new SpiVersion(2, 4))).as("newer minor").isFalse();
        assertThat(ENGINE.runs(new SpiVersion(1, 3))).as("older major").isFalse();
        assertThat(ENGINE.runs(new SpiVersion(3, 0))).as("newer major").isFalse();
        assertThat(ENGINE.runs(SpiVersion.UNDECLARED)).as("undeclared").isFalse();
    }

    @Test
    void shouldParseWhatItPrints()
    {
        assertThat(SpiVersion.parse(" 2.3 ")).isEqualTo(ENGINE);
        assertThat(SpiVersion.parse(ENGINE.toString())).isEqualTo(ENGINE);
        assertThat(SpiVersion.current()).isEqualTo(new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR));
    }

    @Test
    void shouldRejectTextThatIsNotMajorDotMinor()
    {
        for (final String text : new String[] {"2", "2.", ".3", "two.three", "2.3.1", "-1.0", ""})
        {
            assertThatThrownBy(() -> SpiVersion.parse(text)).as(text).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"" + text + "\"").hasMessageContaining("major.minor");
        }
    }

    @Test
    void shouldLeaveAProviderThatOverridesNothingUndeclared()
    {
        final StorageTierProvider provider = new StorageTierProvider()
        {
            @Override
            public String type()
            {
                return "bare";
            }

            @Override
            public StorageTier create(final TierConfig config, final TierContext context)
            {
                throw new UnsupportedOperationException();
            }
        };
        assertThat(provider.spiVersion().isDeclared()).isFalse();
    }
}
