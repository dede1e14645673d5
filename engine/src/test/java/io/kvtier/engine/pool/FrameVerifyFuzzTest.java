package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageFrameDescriptor;
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
import net.jqwik.api.lifecycle.BeforeContainer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * L3 objects as a tier might hand them back: a trailer of any bytes over any payload, and a sealed
 * frame damaged as storage damages it (bits flipped in the payload or the trailer, another key's
 * object in its place, a read cut short over what the page held before, the namespace tag changed).
 * {@link PageFrames#verify} never throws, says VALID only for a frame whose key, length and both
 * CRC32Cs an independent check (the JDK's {@link CRC32C} over a copy of the bytes) confirms, and never
 * says VALID for a frame whose checked bytes were damaged: what it accepts is the payload that was
 * sealed, byte for byte.
 */
@AddLifecycleHook(FuzzTries.class)
class FrameVerifyFuzzTest
{
    private static final int PAGE_SIZE = 8192;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final long FRAME = PageFrameDescriptor.frameLength(PAGE_SIZE);
    /** Trailer bytes a frame's checks cover: the 64 its CRC covers and the CRC itself. */
    private static final int CHECKED_TRAILER = PageFrameDescriptor.TRAILER_CRC_OFFSET + 4;
    private static final AtomicLong RUNS = new AtomicLong();
    private static final AtomicLong VALID = new AtomicLong();

    private static Path dir;
    private static PagePool pool;

    @BeforeContainer
    static void create() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        dir = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "kvtier-frame-fuzz") : Files.createTempDirectory("kvtier-frame-fuzz");
        pool = PagePool.create(dir.resolve("pool"), PAGE_SIZE, 2, 64, 2, Duration.ofSeconds(30));
    }

    @AfterContainer
    static void close() throws IOException
    {
        pool.close();
        Files.deleteIfExists(dir.resolve("pool"));
        Files.deleteIfExists(dir);
        // The figures docs/RELIABILITY.md quotes: inputs run per target.
        System.out.println("FrameVerifyFuzzTest: " + RUNS.get() + " frames verified, " + VALID.get() + " found VALID (each confirmed independently)");
    }

    @Property(tries = 3_000)
    void anyTrailerIsRefusedUnlessIndependentlyValid(@ForAll("payloads") final byte[] payload, @ForAll("trailers") final byte[] trailer,
                                                      @ForAll final boolean askForTheTrailersKey, @ForAll("tags") final long pageTag)
    {
        RUNS.incrementAndGet();
        final MemorySegment frame = pool.frames().frame(0);
        frame.fill((byte)0);
        MemorySegment.copy(payload, 0, frame, ValueLayout.JAVA_BYTE, 0, payload.length);
        MemorySegment.copy(trailer, 0, frame, ValueLayout.JAVA_BYTE, PAGE_SIZE, trailer.length);
        pool.metadata().namespaceTagPlain(0, pageTag);
        final long high = askForTheTrailersKey ? frame.get(LONG, PAGE_SIZE + PageFrameDescriptor.KEY_HIGH_OFFSET) : 0x0123456789ABCDEFL;
        final long low = askForTheTrailersKey ? frame.get(LONG, PAGE_SIZE + PageFrameDescriptor.KEY_LOW_OFFSET) : 0x0FEDCBA987654321L;
        final PageFrames.FrameCheck check = pool.frames().verify(0, high, low);
        assertThat(check).isEqualTo(expected(frame.toArray(ValueLayout.JAVA_BYTE), high, low, pageTag));
        if (check == PageFrames.FrameCheck.VALID)
        {
            VALID.incrementAndGet();
        }
    }

    @Property(tries = 3_000)
    void aDamagedObjectIsNeverValid(@ForAll("payloads") final byte[] payload, @ForAll("tags") final long tag, @ForAll("damages") final Damage damage)
    {
        RUNS.incrementAndGet();
        final long high = 0x1111222233334444L;
        final long low = 0x5555666677778888L;
        // The object as the engine sealed and stored it.
        final byte[] stored = sealed(1, payload, high, low, tag);
        // What the page held before the load: another key's frame.
        final byte[] before = sealed(1, new byte[] {1, 2, 3}, ~high, low, tag);
        final byte[] read = damage.apply(stored, before);
        final MemorySegment page = pool.frames().frame(1);
        MemorySegment.copy(read, 0, page, ValueLayout.JAVA_BYTE, 0, read.length);
        pool.metadata().namespaceTagPlain(1, damage.tagAtLoad(tag));
        final PageFrames.FrameCheck check = pool.frames().verify(1, high, low);
        assertThat(check).isEqualTo(expected(read, high, low, damage.tagAtLoad(tag)));
        if (damage.touchesCheckedBytes(stored, read, payload.length))
        {
            assertThat(check).as("%s", damage).isNotEqualTo(PageFrames.FrameCheck.VALID);
        }
        if (check == PageFrames.FrameCheck.VALID)
        {
            VALID.incrementAndGet();
            final byte[] served = page.asSlice(0, payload.length).toArray(ValueLayout.JAVA_BYTE);
            assertThat(served).as("the payload a VALID frame serves").isEqualTo(payload);
            assertThat(pool.metadata().payloadLengthPlain(1)).isEqualTo(payload.length);
        }
    }

    /** Seals {@code payload} for a key in a page and returns the frame's bytes. */
    private static byte[] sealed(final int page, final byte[] payload, final long high, final long low, final long tag)
    {
        final MemorySegment frame = pool.frames().frame(page);
        frame.fill((byte)0x5A);
        MemorySegment.copy(payload, 0, frame, ValueLayout.JAVA_BYTE, 0, payload.length);
        pool.metadata().namespaceTagPlain(page, tag);
        pool.frames().seal(page, high, low, payload.length);
        return frame.toArray(ValueLayout.JAVA_BYTE);
    }

    /** The verdict of docs/ipc-protocol's frame rules, worked out on a copy of the bytes with the JDK's CRC32C. */
    private static PageFrames.FrameCheck expected(final byte[] frame, final long high, final long low, final long pageTag)
    {
        final MemorySegment f = MemorySegment.ofArray(frame);
        final long t = PAGE_SIZE;
        final int version = f.get(INT, t + PageFrameDescriptor.FRAME_VERSION_OFFSET);
        if (f.get(LONG, t) != PageFrameDescriptor.MAGIC || (version != 1 && version != 2) || f.get(LONG, t + PageFrameDescriptor.PAGE_SIZE_OFFSET) != PAGE_SIZE)
        {
            return PageFrames.FrameCheck.BAD_TRAILER;
        }
        final int checked = version == 1 ? PageFrameDescriptor.TRAILER_CHECKED_LENGTH_V1 : PageFrameDescriptor.TRAILER_CHECKED_LENGTH;
        final int crcAt = version == 1 ? PageFrameDescriptor.TRAILER_CRC_OFFSET_V1 : PageFrameDescriptor.TRAILER_CRC_OFFSET;
        if (crc(frame, PAGE_SIZE, checked) != f.get(INT, t + crcAt))
        {
            return PageFrames.FrameCheck.CRC_MISMATCH;
        }
        if (f.get(LONG, t + PageFrameDescriptor.KEY_HIGH_OFFSET) != high || f.get(LONG, t + PageFrameDescriptor.KEY_LOW_OFFSET) != low)
        {
            return PageFrames.FrameCheck.WRONG_KEY;
        }
        final long length = f.get(LONG, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET);
        if (length < 0 || length > PAGE_SIZE)
        {
            return PageFrames.FrameCheck.BAD_TRAILER;
        }
        if (crc(frame, 0, (int)length) != f.get(INT, t + PageFrameDescriptor.PAYLOAD_CRC_OFFSET))
        {
            return PageFrames.FrameCheck.CRC_MISMATCH;
        }
        final long tag = version == 1 ? 0 : f.get(LONG, t + PageFrameDescriptor.NAMESPACE_TAG_OFFSET);
        return tag == pageTag ? PageFrames.FrameCheck.VALID : PageFrames.FrameCheck.WRONG_NAMESPACE;
    }

    private static int crc(final byte[] bytes, final int from, final int length)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, from, length);
        return (int)crc.getValue();
    }

    /** A way storage damages an object between its write and its read. */
    record Damage(String kind, int at, int bit, int count, long otherTag)
    {
        byte[] apply(final byte[] stored, final byte[] before)
        {
            final byte[] read = stored.clone();
            switch (kind)
            {
                case "payload-bit" ->
                {
                    for (int i = 0; i < count; i++)
                    {
                        read[(at + i * 97) % PAGE_SIZE] ^= (byte)(1 << ((bit + i) & 7));
                    }
                }
                case "trailer-bit" ->
                {
                    for (int i = 0; i < count; i++)
                    {
                        read[PAGE_SIZE + (at + i * 13) % CHECKED_TRAILER] ^= (byte)(1 << ((bit + i) & 7));
                    }
                }
                case "unchecked-bit" ->
                {
                    // Past the trailer's CRC: reserved bytes and padding no check covers.
                    read[PAGE_SIZE + CHECKED_TRAILER + at % (int)(FRAME - PAGE_SIZE - CHECKED_TRAILER)] ^= (byte)(1 << (bit & 7));
                }
                case "short-read" ->
                {
                    // A read that stops early leaves the page's earlier bytes past where it stopped.
                    final int cut = at % (int)FRAME;
                    System.arraycopy(before, cut, read, cut, read.length - cut);
                }
                case "other-object" ->
                {
                    return before.clone();
                }
                default ->
                {
                    // "namespace": the right bytes, loaded for a page of another namespace
                }
            }
            return read;
        }

        long tagAtLoad(final long tag)
        {
            return kind.equals("namespace") ? otherTag : tag;
        }

        boolean touchesCheckedBytes(final byte[] stored, final byte[] read, final int length)
        {
            for (int i = 0; i < length; i++)
            {
                if (stored[i] != read[i])
                {
                    return true;
                }
            }
            for (int i = PAGE_SIZE; i < PAGE_SIZE + CHECKED_TRAILER; i++)
            {
                if (stored[i] != read[i])
                {
                    return true;
                }
            }
            return kind.equals("namespace");
        }
    }

    @Provide
    Arbitrary<Damage> damages()
    {
        return Combinators.combine(Arbitraries.of("payload-bit", "trailer-bit", "unchecked-bit", "short-read", "other-object", "namespace"),
                Arbitraries.integers().between(0, (int)FRAME), Arbitraries.integers().between(0, 7), Arbitraries.integers().between(1, 4),
                Arbitraries.longs().filter(t -> t != 0))
            .as(Damage::new)
            .filter(d -> !d.kind().equals("namespace") || d.otherTag() != 7);
    }

    @Provide
    Arbitrary<byte[]> payloads()
    {
        return Arbitraries.integers().between(0, PAGE_SIZE).flatMap(length ->
            Arbitraries.bytes().array(byte[].class).ofSize(Math.min(length, 64)).map(seed ->
            {
                final byte[] payload = new byte[length];
                for (int i = 0; i < length; i++)
                {
                    payload[i] = seed.length == 0 ? 0 : (byte)(seed[i % seed.length] + i / seed.length);
                }
                return payload;
            }));
    }

    @Provide
    Arbitrary<Long> tags()
    {
        return Arbitraries.of(0L, 7L);
    }

    @Provide
    Arbitrary<byte[]> trailers()
    {
        final Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofSize(96);
        // A sealed trailer with fields set to what the checks must refuse, its CRC made right or left wrong.
        final Arbitrary<byte[]> crafted = Combinators.combine(Arbitraries.of(PageFrameDescriptor.MAGIC, 0L, PageFrameDescriptor.MAGIC + 1),
                Arbitraries.of(0, 1, 2, 3, -1), Arbitraries.of((long)PAGE_SIZE, 0L, PAGE_SIZE * 2L, -1L),
                Arbitraries.of(0L, 1L, (long)PAGE_SIZE, PAGE_SIZE + 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 32, (long)Integer.MAX_VALUE + 1),
                Arbitraries.of(0L, 7L, -1L), Arbitraries.integers().between(0, 2))
            .as((magic, version, pageSize, length, tag, crcs) ->
            {
                final byte[] trailer = new byte[96];
                final MemorySegment t = MemorySegment.ofArray(trailer);
                t.set(LONG, PageFrameDescriptor.MAGIC_OFFSET, magic);
                t.set(LONG, PageFrameDescriptor.KEY_HIGH_OFFSET, 0x0123456789ABCDEFL);
                t.set(LONG, PageFrameDescriptor.KEY_LOW_OFFSET, 0x0FEDCBA987654321L);
                t.set(LONG, PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET, length);
                t.set(INT, PageFrameDescriptor.FRAME_VERSION_OFFSET, version);
                t.set(LONG, PageFrameDescriptor.PAGE_SIZE_OFFSET, pageSize);
                t.set(LONG, PageFrameDescriptor.NAMESPACE_TAG_OFFSET, tag);
                if (crcs > 0)
                {
                    // The payload CRC of an empty payload (zero bytes of the page): right whenever length is 0.
                    t.set(INT, PageFrameDescriptor.PAYLOAD_CRC_OFFSET, crc(new byte[0], 0, 0));
                    final boolean first = version == 1;
                    t.set(INT, first ? PageFrameDescriptor.TRAILER_CRC_OFFSET_V1 : PageFrameDescriptor.TRAILER_CRC_OFFSET,
                        crc(trailer, 0, first ? PageFrameDescriptor.TRAILER_CHECKED_LENGTH_V1 : PageFrameDescriptor.TRAILER_CHECKED_LENGTH));
                }
                return trailer;
            });
        return Arbitraries.frequencyOf(Tuple.of(1, random), Tuple.of(3, crafted));
    }
}
