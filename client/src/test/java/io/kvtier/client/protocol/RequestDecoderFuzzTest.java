package io.kvtier.client.protocol;

import io.kvtier.client.testing.FuzzTries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random, truncated, oversized and mutated request records, put in a real ring by a producer that
 * does not respect the protocol: the consumer and the validator never throw, and every record is
 * either accepted or given one of the protocol's error codes. An accepted record's fields are also
 * within what the engine relies on (slots in range, a body of exactly Count entries).
 */
@AddLifecycleHook(FuzzTries.class)
class RequestDecoderFuzzTest
{
    private static final int CAPACITY = 4096;
    private static final int MAX_KEYS = 16;
    private static final AtomicLong RUNS = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();

    @Property(tries = 20_000)
    void anyBytesAreAcceptedOrNamed(@ForAll("records") final byte[] record, @ForAll("lengthFields") final int lengthField,
                                    @ForAll("tails") final int tailBytes)
    {
        RUNS.incrementAndGet();
        final MemorySegment file = Arena.ofAuto().allocate(4096L + CAPACITY, 64);
        final long dataOffset = 4096;
        MemorySegment.copy(record, 0, file, java.lang.foreign.ValueLayout.JAVA_BYTE, dataOffset, Math.min(record.length, CAPACITY));
        if (lengthField >= 0)
        {
            file.set(LittleEndian.INT, dataOffset, lengthField);
        }
        final long tail = tailBytes == -1 ? RecordDescriptor.align(Math.max(8, Math.min(record.length, CAPACITY))) : tailBytes;
        LittleEndian.LONG_HANDLE.setRelease(file, 64L, tail);
        final RingConsumer consumer = new RingConsumer(file, dataOffset, CAPACITY, 64, 128);
        final long at = consumer.poll();
        if (at < 0)
        {
            assertThat(at).isIn(RingConsumer.EMPTY, RingConsumer.SHORTER_THAN_HEADER, RingConsumer.DOES_NOT_FIT, RingConsumer.MISPLACED_PADDING);
            return;
        }
        final RequestDecoder decoder = new RequestDecoder().wrap(file, at, consumer.currentLength());
        final ErrorCode code = RequestValidator.validate(decoder, 3, MAX_KEYS, 2, RequestDescriptor.maxMessageLength(MAX_KEYS));
        assertThat(code).isNotNull();
        if (code == ErrorCode.OK)
        {
            ACCEPTED.incrementAndGet();
            assertThat(decoder.firstSlot()).isNotNegative();
            assertThat(decoder.count()).isNotNegative();
            assertThat((long)decoder.firstSlot() + decoder.count()).isLessThanOrEqualTo(MAX_KEYS);
            assertThat((long)decoder.limit()).isEqualTo(RequestDescriptor.expectedLength(decoder.type(), decoder.count(), decoder.flags()));
            for (int i = 0; i < decoder.count(); i++)
            {
                decoder.keyHigh(i);
                decoder.commitLength(i);
            }
            if (decoder.type() == MessageType.LOOKUP_AND_LOCK && RequestValidator.reserveLimitValid(decoder))
            {
                assertThat(decoder.reserveLimit()).isBetween(RequestDescriptor.RESERVE_ALL, decoder.count());
            }
            else if (decoder.type() != MessageType.LOOKUP_AND_LOCK)
            {
                assertThat(decoder.intAt(RequestDescriptor.RESERVED_OFFSET)).as("a reserved word accepted only as 0").isZero();
            }
        }
        else
        {
            assertThat(code).isIn(ErrorCode.MALFORMED, ErrorCode.UNKNOWN_TYPE, ErrorCode.STALE_REQUEST_ID, ErrorCode.SLOT_RANGE,
                ErrorCode.NAMESPACE_DENIED, ErrorCode.TOO_LONG);
        }
        consumer.advanceRelease();
    }

    @Provide
    Arbitrary<byte[]> records()
    {
        final Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(600);
        final Arbitrary<byte[]> mutated = Combinators.combine(Arbitraries.of(MessageType.LOOKUP, MessageType.ACQUIRE, MessageType.RELEASE,
                MessageType.RESERVE, MessageType.COMMIT, MessageType.FLUSH, MessageType.STATS, 0, 1, 12, 15, MessageType.LOOKUP_AND_LOCK,
                MessageType.COMMIT_AND_RELEASE, 20),
            Arbitraries.integers().between(-1, MAX_KEYS), Arbitraries.integers().between(-1, MAX_KEYS / 2),
            Arbitraries.longs().between(0, 40), Arbitraries.integers().between(0, 2), Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(0)),
                Tuple.of(1, Arbitraries.integers().between(0, 3))),
            Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(-1)), Tuple.of(1, Arbitraries.integers().between(0, 300))),
            Arbitraries.integers().between(0, 255))
            .as((type, first, count, id, namespace, flags, flipAt, flipTo) -> wellFormed(type, first, count, id, namespace, flags, flipAt, flipTo));
        return Arbitraries.oneOf(random, mutated);
    }

    private static byte[] wellFormed(final int type, final int first, final int count, final long id, final int namespace, final int flags,
                                     final int flipAt, final int flipTo)
    {
        final long expected = RequestDescriptor.expectedLength(type, Math.max(0, count), flags);
        final int length = (int)Math.max(32, Math.min(1024, expected));
        // (a record whose Length cannot be right keeps 32 bytes and is named MALFORMED or SLOT_RANGE)
        final byte[] bytes = new byte[length];
        final MemorySegment s = MemorySegment.ofArray(bytes);
        new RequestEncoder().wrap(s, 0).header(length, type, id, first, count, namespace, flags);
        if (flipAt >= 0 && flipAt < length)
        {
            bytes[flipAt] = (byte)flipTo;
        }
        return bytes;
    }

    @Provide
    Arbitrary<Integer> lengthFields()
    {
        // -1: keep the record's own Length; else force one, including lies and extremes
        return Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(-1)), Tuple.of(2, Arbitraries.integers().between(-16, 5000)),
            Tuple.of(1, Arbitraries.of(Integer.MIN_VALUE, Integer.MAX_VALUE, 0, 7, 8, 31, 32)));
    }

    @Provide
    Arbitrary<Integer> tails()
    {
        // -1: exactly the record's bytes, as an honest producer would publish
        return Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(-1)), Tuple.of(1, Arbitraries.of(0, 8, 32, 64, 1024, CAPACITY, CAPACITY + 8, -8)),
            Tuple.of(2, Arbitraries.integers().between(0, 2 * CAPACITY)));
    }

    @AfterContainer
    static void report()
    {
        // The number docs/TESTING.md quotes: inputs run per build.
        System.out.println("RequestDecoderFuzzTest: " + RUNS.get() + " records run, " + ACCEPTED.get() + " accepted, the rest named an error code");
    }
}
