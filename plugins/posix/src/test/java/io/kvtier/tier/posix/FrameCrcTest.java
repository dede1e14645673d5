package io.kvtier.tier.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FrameCrc}'s CRC32C of a payload from a known prefix's: the same value as the whole payload's
 * CRC32C, whatever the split, in the engine's transfer memory and outside it.
 */
class FrameCrcTest
{
    private static final int LENGTH = 3 * 4096 + 123;

    @Test
    void shouldCombineTwoRunsIntoTheCrc32cOfBothAtEverySplit()
    {
        final byte[] bytes = randomBytes(LENGTH, 1);
        final int whole = crc(bytes, 0, bytes.length);
        for (final int split : new int[] {0, 1, 7, 8, 4095, 4096, 4097, LENGTH - 1, LENGTH})
        {
            final int first = crc(bytes, 0, split);
            final int second = crc(bytes, split, bytes.length - split);
            assertThat(FrameCrc.combine(first, second, bytes.length - split)).as("split at %d", split).isEqualTo(whole);
        }
    }

    @Test
    void shouldCombineOverLongRunsOfZeros()
    {
        // The pool's unused payload tail is zeros: lengths of many MiB go through the high powers.
        final int zeros = 9 << 20;
        final byte[] head = randomBytes(100, 2);
        final byte[] all = new byte[head.length + zeros];
        System.arraycopy(head, 0, all, 0, head.length);
        assertThat(FrameCrc.combine(crc(head, 0, head.length), crc(all, head.length, zeros), zeros)).isEqualTo(crc(all, 0, all.length));
    }

    @Test
    void shouldExtendAKnownPrefixToTheWholePayloadInsideAndOutsideTheTransferMemory()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(4L * LENGTH, 4096);
            final byte[] bytes = randomBytes(LENGTH, 3);
            final MemorySegment payload = region.asSlice(LENGTH, LENGTH).copyFrom(MemorySegment.ofArray(bytes));
            final MemorySegment elsewhere = arena.allocate(LENGTH).copyFrom(payload);
            final int whole = crc(bytes, 0, LENGTH);
            final FrameCrc inRegion = new FrameCrc(Optional.of(region), LENGTH);
            final FrameCrc noRegion = new FrameCrc(Optional.empty(), LENGTH);
            for (final long known : new long[] {1, 4096, LENGTH - 4096, LENGTH})
            {
                final int prefix = crc(bytes, 0, (int)known);
                assertThat(inRegion.of(payload, LENGTH, known, prefix)).as("%d bytes known, transfer memory", known).isEqualTo(whole);
                assertThat(noRegion.of(elsewhere, LENGTH, known, prefix)).as("%d bytes known, elsewhere", known).isEqualTo(whole);
            }
            // Nothing known, or a count the payload does not have: the whole payload is read, the value given is not used.
            for (final long known : new long[] {0, -1, LENGTH + 1})
            {
                assertThat(inRegion.of(payload, LENGTH, known, 0xBAD)).as("%d bytes known", known).isEqualTo(whole);
            }
        }
    }

    private static byte[] randomBytes(final int length, final long seed)
    {
        final byte[] bytes = new byte[length];
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)random.nextInt();
        }
        return bytes;
    }

    private static int crc(final byte[] bytes, final int from, final int length)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, from, length);
        return (int)crc.getValue();
    }
}
