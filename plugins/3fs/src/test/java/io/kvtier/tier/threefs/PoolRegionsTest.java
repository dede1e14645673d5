package io.kvtier.tier.threefs;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** Reading /proc/self/maps, which decides whether a page can be moved with no copy. */
class PoolRegionsTest
{
    @Test
    void shouldParseFileBackedAndAnonymousMappings()
    {
        final PoolRegions.Mapping shm = PoolRegions.parse("7f0000000000-7f0000400000 rw-s 00000000 00:19 1234   /dev/shm/kvtier-pool");
        final PoolRegions.Mapping offset = PoolRegions.parse("7f0000000000-7f0000001000 rw-s 00002000 00:19 1234 /dev/shm/x");
        final PoolRegions.Mapping anonymous = PoolRegions.parse("7f1000000000-7f1000021000 rw-p 00000000 00:00 0");
        final PoolRegions.Mapping heap = PoolRegions.parse("55d4c9a2b000-55d4c9a4c000 rw-p 00000000 00:00 0                          [heap]");

        assertThat(shm).isEqualTo(new PoolRegions.Mapping(0x7f0000000000L, 0x7f0000400000L, 0, "/dev/shm/kvtier-pool"));
        assertThat(offset.offset()).isEqualTo(0x2000);
        assertThat(anonymous.path()).isNull();
        assertThat(heap.path()).as("pseudo-paths are not files").isNull();
        assertThat(PoolRegions.parse("garbage")).isNull();
    }

    @Test
    void shouldFindTheMappingOfAnAddressInThisProcess()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment segment = arena.allocate(1 << 20, 4096);

            final PoolRegions.Mapping mapping = PoolRegions.mappingOf(segment.address());

            assertThat(mapping).isNotNull();
            assertThat(mapping.start()).isLessThanOrEqualTo(segment.address());
            assertThat(mapping.end()).isGreaterThan(segment.address());
        }
    }
}
