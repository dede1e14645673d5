package io.kvtier.tck;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PageArenaTest
{
    @Test
    void shouldHandOutAlignedSlicesWithGuards()
    {
        try (PageArena arena = new PageArena(PageArena.bytesFor(3, 5000)))
        {
            final MemorySegment a = arena.slice(5000);
            final MemorySegment b = arena.slice(5000);
            assertThat(a.address() % PageArena.ALIGNMENT).isZero();
            assertThat(b.address() % PageArena.ALIGNMENT).isZero();
            assertThat(b.address() - (a.address() + a.byteSize())).isGreaterThanOrEqualTo(PageArena.GUARD);
            a.fill((byte)1);
            b.fill((byte)2);
            assertThatNoException().isThrownBy(arena::assertGuardsIntact);
        }
    }

    @Test
    @SuppressWarnings("restricted")
    void shouldCatchAWriteOneBytePastASlice()
    {
        try (PageArena arena = new PageArena(PageArena.bytesFor(2, 4096)))
        {
            final MemorySegment a = arena.slice(4096);
            arena.slice(4096);
            final MemorySegment widened = a.reinterpret(4097);
            widened.set(JAVA_BYTE, 4096, (byte)~widened.get(JAVA_BYTE, 4096));
            assertThatThrownBy(arena::assertGuardsIntact).isInstanceOf(AssertionError.class).hasMessageContaining("0 bytes after the end of slice #0");
        }
    }

    @Test
    void shouldDetectContentBySeed()
    {
        try (PageArena arena = new PageArena(PageArena.bytesFor(1, 4096)))
        {
            final MemorySegment page = arena.slice(4096);
            PageBytes.fill(page, 42);
            assertThat(PageBytes.mismatch(page, 42)).isEqualTo(-1);
            page.set(JAVA_BYTE, 100, (byte)~page.get(JAVA_BYTE, 100));
            assertThat(PageBytes.mismatch(page, 42)).isEqualTo(100);
        }
    }
}
