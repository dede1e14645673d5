package io.kvtier.spi;

import java.lang.foreign.MemorySegment;

/**
 * One asynchronous batch of keys handed to a {@link StorageTier}. The engine owns and reuses batch
 * objects, so reading keys and completing them allocates nothing.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>The tier completes every index in {@code [0, size())} exactly once with
 *       {@link #complete(int, TierStatus)}, from any thread, in any order, possibly before the
 *       submitting call returns. One key's failure never stops the others.</li>
 *   <li>Ownership goes back key by key: once key {@code i} is completed, its segment belongs to the
 *       engine again, which may verify it, hand it to a reader or reuse it at once. The tier must not
 *       read or write that segment afterwards (not through a reference it kept either), nor call
 *       {@link #keyHigh}, {@link #keyLow} or {@link #segment} for {@code i}. Once the last key is
 *       completed the whole batch is the engine's: the tier must not touch it at all.</li>
 *   <li>For {@code read}, {@link #segment(int)} is the destination; a tier writes only inside it, and
 *       only {@link TierStatus#OK} makes its contents meaningful. For {@code write} it is the source,
 *       read-only to the tier. For {@code exists} and {@code remove} it is
 *       {@link MemorySegment#NULL}.</li>
 * </ul>
 */
public interface TierBatch
{
    /** @return the number of keys in the batch */
    int size();

    /**
     * @param index a key's position in the batch
     * @return the high 64 bits of the key
     */
    long keyHigh(int index);

    /**
     * @param index a key's position in the batch
     * @return the low 64 bits of the key
     */
    long keyLow(int index);

    /**
     * Allocates a key object; prefer {@link #keyHigh(int)} and {@link #keyLow(int)} on hot paths.
     *
     * @param index a key's position in the batch
     * @return the key
     */
    default PageKey key(final int index)
    {
        return new PageKey(keyHigh(index), keyLow(index));
    }

    /**
     * @param index a key's position in the batch
     * @return the pool slice to read into or write from: for {@code read} and {@code write}, a slice of
     *         exactly the object's length, aligned to 4 KiB; otherwise {@link MemorySegment#NULL}
     */
    MemorySegment segment(int index);

    /**
     * For a {@code write}: how many leading bytes of {@link #segment(int)} the engine already knows the
     * CRC32C of ({@link #knownCrc32c(int)}), because it computed it when the page was committed. A tier
     * that keeps a checksum of what it stores may extend that one over the rest of the segment instead
     * of reading the whole segment again (CRC32C values combine: the CRC32C of two runs of bytes follows
     * from each run's CRC32C and the second run's length). The value is the engine's record of the
     * bytes, not a proof: a tier that serves only what matches its checksum still checks what it reads
     * back, and a wrong value can only make an object fail that check (a miss), never pass off other
     * bytes as it. Added in SPI 1.1.
     *
     * @param index a key's position in the batch
     * @return a count from 0 (nothing known, the default, and always for other operations) to the
     *         segment's length
     */
    default long knownCrc32cBytes(final int index)
    {
        return 0;
    }

    /**
     * @param index a key's position in the batch
     * @return the CRC32C ({@link java.util.zip.CRC32C}'s value, as an int) of the first
     *         {@link #knownCrc32cBytes(int)} bytes of the key's segment; meaningless when that is 0
     */
    default int knownCrc32c(final int index)
    {
        return 0;
    }

    /**
     * For a {@code write}: whether the bytes of the segment's last {@link TrailerBlock#BYTES} after its first
     * {@link TrailerBlock#TRAILER_BYTES} are padding, which the engine declares zeros and never reads: it seals an
     * engine frame's trailer into that block's first bytes and checks only the trailer and the payload when it reads
     * the frame back. A tier that keeps engine frames compactly ({@link TrailerBlock}) may then keep the compact form
     * without reading the padding to see that it is zeros ({@link TrailerBlock#storedLength(MemorySegment, boolean)}),
     * and a read gives zeros back for it ({@link TrailerBlock#restore}), whatever it held when written. The check
     * reads 4 KiB of memory the engine has not touched since the frame was last used, usually cold: about 1.4 µs a
     * frame against 0.09 µs for the trailer alone on the project's 2-vCPU host ({@code TrailerBlockCheckBenchmark}).
     * False, the default and always for other operations
     * and for segments shorter than two blocks: every byte of the segment is the object's and a read gives it back
     * as written. Added in SPI 1.3.
     *
     * @param index a key's position in the batch
     * @return whether the segment's trailer block past its trailer is padding
     */
    default boolean trailerBlockIsPadding(final int index)
    {
        return false;
    }

    /**
     * Reports the outcome of one key.
     *
     * @param index  a key's position in the batch
     * @param status the outcome; {@link TierStatus#OK} for a present key in {@code exists}
     * @throws IllegalStateException if the key was already completed
     */
    void complete(int index, TierStatus status);
}
