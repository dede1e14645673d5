package io.kvtier.client.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ResponseEncoder#entries}, the engine's one pass over a response's entries, writes the bytes that
 * {@link ResponseEncoder#entry} writes one entry at a time, an entry that names no page carrying no
 * generation; and refuses slots outside the arrays before it writes anything.
 */
class ResponseEntriesTest
{
    private static final int SLOTS = 41;

    @Test
    void onePassWritesWhatEntryWritesOneByOne()
    {
        final SplittableRandom random = new SplittableRandom(21);
        final int[] pageIds = new int[SLOTS];
        final int[] generations = new int[SLOTS];
        final byte[] statuses = new byte[SLOTS];
        for (int i = 0; i < SLOTS; i++)
        {
            pageIds[i] = random.nextInt(4) == 0 ? -1 : random.nextInt(Integer.MAX_VALUE);
            generations[i] = random.nextInt(); // a slot without a page may still hold a stale generation
            statuses[i] = (byte)random.nextInt(16);
        }
        final int count = SLOTS - 5;
        final long length = ResponseDescriptor.length(count);
        final MemorySegment onePass = Arena.ofAuto().allocate(length + 3, 8).asSlice(3); // any alignment
        final MemorySegment oneByOne = Arena.ofAuto().allocate(length, 8);

        new ResponseEncoder().wrap(onePass, 0).entries(5, count, pageIds, generations, statuses);
        final ResponseEncoder single = new ResponseEncoder().wrap(oneByOne, 0);
        for (int i = 0; i < count; i++)
        {
            final int slot = 5 + i;
            single.entry(i, pageIds[slot], pageIds[slot] < 0 ? 0 : generations[slot], statuses[slot]);
        }

        assertThat(onePass.asSlice(0, length).mismatch(oneByOne)).isEqualTo(-1L);
        final ResponseDecoder decoded = new ResponseDecoder().wrap(onePass, 0);
        for (int i = 0; i < count; i++)
        {
            assertThat(decoded.entryPageId(i)).isEqualTo(pageIds[5 + i]);
            assertThat(decoded.entryGeneration(i)).isEqualTo(pageIds[5 + i] < 0 ? 0 : generations[5 + i]);
        }
    }

    @Test
    void slotsOutsideTheArraysAreRefusedBeforeAnythingIsWritten()
    {
        final MemorySegment response = Arena.ofAuto().allocate(ResponseDescriptor.length(8), 8);
        final ResponseEncoder encoder = new ResponseEncoder().wrap(response, 0);

        assertThatThrownBy(() -> encoder.entries(2, 8, new int[8], new int[8], new byte[8])).isInstanceOf(IndexOutOfBoundsException.class)
            .hasMessageContaining("slots 2..10");
        assertThatThrownBy(() -> encoder.entries(0, 8, new int[8], new int[8], new byte[7])).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(response.asSlice(ResponseDescriptor.HEADER_LENGTH).mismatch(MemorySegment.ofArray(new byte[8 * ResponseDescriptor.ENTRY_LENGTH])))
            .isEqualTo(-1L);
    }
}
