package io.kvtier.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlotAllocatorTest
{
    @Test
    void shouldHandOutDisjointRunsAndReuseFreedOnes()
    {
        final SlotAllocator slots = new SlotAllocator(130);
        final int a = slots.allocate(64);
        final int b = slots.allocate(64);
        assertThat(a).isZero();
        assertThat(b).isEqualTo(64);
        assertThat(slots.allocate(3)).as("only 2 slots left").isEqualTo(-1);
        assertThat(slots.allocate(2)).isEqualTo(128);
        slots.free(a, 64);
        assertThat(slots.inUse()).isEqualTo(66);
        assertThat(slots.allocate(10)).isZero();
        assertThat(slots.allocate(54)).isEqualTo(10);
        assertThat(slots.allocate(1)).isEqualTo(-1);
    }

    @Test
    void shouldRefuseRunsItCannotHold()
    {
        final SlotAllocator slots = new SlotAllocator(8);
        assertThat(slots.allocate(0)).isEqualTo(-1);
        assertThat(slots.allocate(9)).isEqualTo(-1);
        assertThat(slots.allocate(8)).isZero();
    }
}
