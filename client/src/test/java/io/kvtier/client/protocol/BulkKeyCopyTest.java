package io.kvtier.client.protocol;

import io.kvtier.client.PageKeyChain;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The bulk copies of a request's keys (the engine's {@link RequestDecoder#keysInto}, the client's
 * {@link RequestEncoder#keys}) agree with the per-key reads and writes of the protocol: bytes 0..7 of a
 * key are its high half and 8..15 its low half, both big-endian, whatever the host's order; a key not
 * wholly within the record reads as 0; positions outside the chain are refused before anything is copied.
 */
class BulkKeyCopyTest
{
    private static final int KEYS = 37;

    private static PageKeyChain randomChain(final long seed, final int n)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final PageKeyChain chain = new PageKeyChain(n + 8);
        for (int i = 0; i < n; i++)
        {
            chain.add(random.nextLong(), random.nextLong());
        }
        return chain;
    }

    @Test
    void theEnginesCopyReadsWhatTheDecoderReadsKeyByKey()
    {
        final SplittableRandom random = new SplittableRandom(21);
        final int length = (int)RequestDescriptor.expectedLength(MessageType.LOOKUP, KEYS, 0);
        final MemorySegment record = Arena.ofAuto().allocate(length + 5, 8);
        for (long b = 0; b < record.byteSize(); b++)
        {
            record.set(ValueLayout.JAVA_BYTE, b, (byte)random.nextInt());
        }
        // At an odd offset, as a record in a ring may not be: nothing about the copy needs alignment.
        final RequestDecoder decoder = new RequestDecoder().wrap(record.asSlice(3), 0, length);
        final PageKeyChain chain = randomChain(1, KEYS + 4);

        decoder.keysInto(chain, 4, KEYS);

        for (int i = 0; i < KEYS; i++)
        {
            assertThat(chain.high(4 + i)).as("high half of key %d", i).isEqualTo(decoder.keyHigh(i));
            assertThat(chain.low(4 + i)).as("low half of key %d", i).isEqualTo(decoder.keyLow(i));
        }
        // Bytes 0..7 big-endian: the first byte of the body is the top byte of key 0's high half.
        assertThat((byte)(chain.high(4) >>> 56)).isEqualTo(record.get(ValueLayout.JAVA_BYTE, 3 + RequestDescriptor.HEADER_LENGTH));
        assertThat((byte)chain.low(4)).isEqualTo(record.get(ValueLayout.JAVA_BYTE, 3 + RequestDescriptor.HEADER_LENGTH + 15));
    }

    @Test
    void keysBeyondTheRecordReadAsZeroAndTheSlotsBeforeThemKeepTheirs()
    {
        final PageKeyChain sent = randomChain(2, KEYS);
        final MemorySegment record = Arena.ofAuto().allocate(RequestDescriptor.expectedLength(MessageType.LOOKUP, KEYS, 0), 8);
        new RequestEncoder().wrap(record, 0).keys(sent, 0, KEYS);
        // A record cut two and a half keys short of its Count.
        final int length = RequestDescriptor.HEADER_LENGTH + (KEYS - 3) * RequestDescriptor.KEY_LENGTH + 8;
        final PageKeyChain chain = randomChain(3, KEYS + 1);
        final long before = chain.high(0);

        new RequestDecoder().wrap(record, 0, length).keysInto(chain, 1, KEYS);

        assertThat(chain.high(0)).isEqualTo(before);
        for (int i = 0; i < KEYS - 3; i++)
        {
            assertThat(chain.high(1 + i)).isEqualTo(sent.high(i));
            assertThat(chain.low(1 + i)).isEqualTo(sent.low(i));
        }
        for (int i = KEYS - 3; i < KEYS; i++)
        {
            assertThat(chain.high(1 + i)).as("key %d", i).isZero();
            assertThat(chain.low(1 + i)).as("key %d", i).isZero();
        }
    }

    @Test
    void theClientsCopyWritesWhatTheEncoderWritesKeyByKey()
    {
        final PageKeyChain chain = randomChain(4, KEYS + 2);
        final long length = RequestDescriptor.expectedLength(MessageType.LOOKUP, KEYS, 0);
        final MemorySegment bulk = Arena.ofAuto().allocate(length, 8);
        final MemorySegment oneByOne = Arena.ofAuto().allocate(length, 8);

        new RequestEncoder().wrap(bulk, 0).keys(chain, 2, KEYS);
        final RequestEncoder single = new RequestEncoder().wrap(oneByOne, 0);
        for (int i = 0; i < KEYS; i++)
        {
            single.key(i, chain.high(2 + i), chain.low(2 + i));
        }

        assertThat(bulk.mismatch(oneByOne)).isEqualTo(-1L);
    }

    @Test
    void positionsOutsideTheChainAreRefusedBeforeAnythingIsCopied()
    {
        final PageKeyChain chain = randomChain(5, 4);
        final MemorySegment bytes = Arena.ofAuto().allocate(16L * 8, 8);
        final long last = chain.high(3);

        assertThatThrownBy(() -> chain.copyFrom(2, bytes, 0, 3)).isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("chain of 4");
        assertThatThrownBy(() -> chain.copyFrom(-1, bytes, 0, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> chain.copyTo(3, 2, bytes, 0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> chain.copyFrom(0, bytes, 8L * 16 - 8, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(chain.high(3)).isEqualTo(last);
    }
}
