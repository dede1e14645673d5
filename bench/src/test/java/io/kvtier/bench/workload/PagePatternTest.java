package io.kvtier.bench.workload;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo's byte checker must say "no" to wrong bytes, or every "0 corrupt" it reports means nothing. */
class PagePatternTest
{
    private static final int LENGTH = 16 << 10;

    @Test
    void shouldMatchOnlyTheBytesOfItsOwnKey()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment page = arena.allocate(LENGTH);
            PagePattern.fill(page, 7, 9, LENGTH);
            assertThat(PagePattern.matches(page, 7, 9, LENGTH)).isTrue();
            assertThat(PagePattern.matches(page, 7, 10, LENGTH)).as("another key's pattern").isFalse();
            assertThat(PagePattern.matches(page, 8, 9, LENGTH)).as("another namespace's pattern").isFalse();
            final MemorySegment other = arena.allocate(LENGTH);
            PagePattern.fill(other, 7, 10, LENGTH);
            assertThat(PagePattern.matches(other, 7, 9, LENGTH)).as("a whole page of a neighbouring key").isFalse();
        }
    }

    @Test
    void shouldRejectAPageWithAnySingleByteChanged()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment page = arena.allocate(LENGTH);
            for (final int offset : new int[] {0, 1, 7, 8, LENGTH / 2 + 3, LENGTH - 8, LENGTH - 1})
            {
                PagePattern.fill(page, 3, 4, LENGTH);
                page.set(ValueLayout.JAVA_BYTE, offset, (byte)(page.get(ValueLayout.JAVA_BYTE, offset) ^ 0x10));
                assertThat(PagePattern.matches(page, 3, 4, LENGTH)).as("byte %d flipped", offset).isFalse();
            }
            page.fill((byte)0);
            assertThat(PagePattern.matches(page, 3, 4, LENGTH)).as("a zeroed page").isFalse();
        }
    }
}
