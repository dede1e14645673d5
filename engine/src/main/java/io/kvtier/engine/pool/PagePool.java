package io.kvtier.engine.pool;

import io.kvtier.collections.KeyTable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.kvtier.engine.pool.PageMetadataDescriptor.HIT_COUNT_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.KEY_HIGH_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.KEY_LOW_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.LAST_ACCESS_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.LEASE_DEADLINE_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.OWNER_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.PAYLOAD_CRC_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.PAYLOAD_LENGTH_OFFSET;
import static io.kvtier.engine.pool.PageMetadataDescriptor.STATE_WORD_OFFSET;

/**
 * The mapped pool file: page frames, their metadata, the key index region and the counters.
 *
 * <p>{@link #create} makes and owns the file (one engine per file, enforced with an exclusive file
 * lock plus the creator's PID and heartbeat in the header); {@link #attach} maps an existing pool the
 * way a co-located client does, without owning it.
 *
 * <p>Frame and payload slices are made once per page at start, so handing a page to a tier or a
 * client allocates nothing.
 */
public final class PagePool implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(PagePool.class.getName());

    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_HANDLE = LONG_LE.varHandle();
    private static final VarHandle INT_HANDLE = INT_LE.varHandle();

    /** A heartbeat older than this means the pool's creator is gone even if its PID was reused. */
    public static final long HEARTBEAT_STALE_MS = 5_000;

    private final Path path;
    private final Arena arena;
    private final FileChannel channel;
    private final FileLock lock;
    private final MemorySegment file;
    private final MemorySegment data;
    private final PagePoolDescriptor.Layout layout;
    private final MemorySegment[] frames;
    private final MemorySegment[] payloads;
    private final PageChecksum checksum;
    private final KeyTable index;
    private final boolean owner;
    private boolean closed;

    private PagePool(final Path path, final Arena arena, final FileChannel channel, final FileLock lock, final MemorySegment file,
                     final PagePoolDescriptor.Layout layout, final KeyTable index, final boolean owner)
    {
        this.path = path;
        this.arena = arena;
        this.channel = channel;
        this.lock = lock;
        this.file = file;
        this.layout = layout;
        this.index = index;
        this.owner = owner;
        this.data = file.asSlice(layout.dataOffset(), (long)layout.pageCount() * layout.frameLength());
        this.frames = new MemorySegment[layout.pageCount()];
        this.payloads = new MemorySegment[layout.pageCount()];
        for (int page = 0; page < layout.pageCount(); page++)
        {
            frames[page] = data.asSlice((long)page * layout.frameLength(), layout.frameLength());
            payloads[page] = frames[page].asSlice(0, layout.pageSize());
        }
        this.checksum = new PageChecksum(data, layout.frameLength(), layout.pageCount());
    }

    /**
     * Creates the pool file, or takes over one left by a dead engine.
     *
     * @param path         the pool file
     * @param pageSize     payload bytes per page
     * @param pageCount    pages
     * @param indexEntries entries of the key index
     * @return the owned pool
     * @throws PoolOwnedException if a live engine owns the file
     * @throws IOException        if the file cannot be created or mapped
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries) throws IOException
    {
        final PagePoolDescriptor.Layout layout = PagePoolDescriptor.layout(pageSize, pageCount, indexEntries);
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock = null;
        try
        {
            try
            {
                lock = channel.tryLock();
            }
            catch (final OverlappingFileLockException ex)
            {
                lock = null;
            }
            if (lock == null)
            {
                throw new PoolOwnedException(describeOwner(path, channel)
                    + "; stop that engine or set pool.path to another file");
            }
            reportPrevious(path, channel);
            channel.truncate(0);
            channel.truncate(layout.fileLength());
            final Arena arena = Arena.ofShared();
            final MemorySegment file;
            try
            {
                file = channel.map(FileChannel.MapMode.READ_WRITE, 0, layout.fileLength(), arena);
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                throw ex;
            }
            final MemorySegment indexRegion = file.asSlice(layout.indexOffset(), layout.indexLength());
            final KeyTable index = KeyTable.format(indexRegion, indexEntries);
            formatHeader(file, layout);
            return new PagePool(path, arena, channel, lock, file, layout, index, true);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (lock != null)
            {
                try
                {
                    lock.release();
                }
                catch (final IOException ignored)
                {
                    // closing the channel below releases it anyway
                }
            }
            channel.close();
            throw ex;
        }
    }

    /**
     * Maps an existing pool as a client does: reads its layout from the header, owns nothing.
     *
     * @param path the pool file
     * @return the attached pool
     * @throws IOException           if the file cannot be mapped
     * @throws IllegalStateException if the file is not a ready pool of this layout version
     */
    public static PagePool attach(final Path path) throws IOException
    {
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        final Arena arena = Arena.ofShared();
        try
        {
            final long size = channel.size();
            if (size < PagePoolDescriptor.HEADER_LENGTH)
            {
                throw new IllegalStateException(path + " is " + size + " bytes, too small to be a kvtier pool");
            }
            final MemorySegment header = channel.map(FileChannel.MapMode.READ_ONLY, 0, PagePoolDescriptor.HEADER_LENGTH, arena);
            checkHeader(path, header);
            final long fileLength = header.get(LONG_LE, PagePoolDescriptor.FILE_LENGTH_OFFSET);
            final PagePoolDescriptor.Layout layout = new PagePoolDescriptor.Layout(
                header.get(LONG_LE, PagePoolDescriptor.PAGE_SIZE_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.FRAME_LENGTH_OFFSET),
                (int)header.get(LONG_LE, PagePoolDescriptor.PAGE_COUNT_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.METADATA_OFFSET_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.INDEX_OFFSET_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.INDEX_LENGTH_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.DATA_OFFSET_OFFSET),
                fileLength);
            final MemorySegment file = channel.map(FileChannel.MapMode.READ_WRITE, 0, fileLength, arena);
            final KeyTable index = KeyTable.attach(file.asSlice(layout.indexOffset(), layout.indexLength()));
            return new PagePool(path, arena, channel, null, file, layout, index, false);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            channel.close();
            throw ex;
        }
    }

    private static void checkHeader(final Path path, final MemorySegment header)
    {
        final long magic = header.get(LONG_LE, PagePoolDescriptor.MAGIC_OFFSET);
        if (magic != PagePoolDescriptor.MAGIC)
        {
            throw new IllegalStateException(path + " is not a kvtier pool (magic 0x" + Long.toHexString(magic) + ")");
        }
        final int version = (int)INT_HANDLE.getAcquire(header, (long)PagePoolDescriptor.LAYOUT_VERSION_OFFSET);
        if (version != PagePoolDescriptor.LAYOUT_VERSION)
        {
            throw new IllegalStateException(path + " has pool layout version " + version + ", this build reads version "
                + PagePoolDescriptor.LAYOUT_VERSION + (version == 0 ? " (the pool is still being created)" : ""));
        }
    }

    private static String describeOwner(final Path path, final FileChannel channel) throws IOException
    {
        if (channel.size() >= PagePoolDescriptor.HEADER_LENGTH)
        {
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment header = channel.map(FileChannel.MapMode.READ_ONLY, 0, PagePoolDescriptor.HEADER_LENGTH, arena);
                if (header.get(LONG_LE, PagePoolDescriptor.MAGIC_OFFSET) == PagePoolDescriptor.MAGIC)
                {
                    final long pid = header.get(LONG_LE, PagePoolDescriptor.CREATOR_PID_OFFSET);
                    final long beat = (long)LONG_HANDLE.getAcquire(header, (long)PagePoolDescriptor.HEARTBEAT_OFFSET);
                    return "pool file " + path + " is owned by a live engine (pid " + pid
                        + (pid == ProcessHandle.current().pid() ? ", this process" : "")
                        + ", heartbeat " + Math.max(0, System.currentTimeMillis() - beat) + " ms ago)";
                }
            }
        }
        return "pool file " + path + " is locked by another process";
    }

    private static void reportPrevious(final Path path, final FileChannel channel) throws IOException
    {
        if (channel.size() < PagePoolDescriptor.HEADER_LENGTH)
        {
            return;
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment header = channel.map(FileChannel.MapMode.READ_ONLY, 0, PagePoolDescriptor.HEADER_LENGTH, arena);
            if (header.get(LONG_LE, PagePoolDescriptor.MAGIC_OFFSET) == PagePoolDescriptor.MAGIC)
            {
                final long pid = header.get(LONG_LE, PagePoolDescriptor.CREATOR_PID_OFFSET);
                final int state = header.get(INT_LE, PagePoolDescriptor.POOL_STATE_OFFSET);
                LOG.log(System.Logger.Level.INFO, "taking over pool file {0} left by engine pid {1} ({2}); its pages are discarded",
                    path, pid, state == PagePoolDescriptor.STATE_CLOSED ? "closed cleanly" : "not running any more");
            }
        }
    }

    private static void formatHeader(final MemorySegment file, final PagePoolDescriptor.Layout layout)
    {
        file.set(LONG_LE, PagePoolDescriptor.MAGIC_OFFSET, PagePoolDescriptor.MAGIC);
        file.set(LONG_LE, PagePoolDescriptor.PAGE_SIZE_OFFSET, layout.pageSize());
        file.set(LONG_LE, PagePoolDescriptor.FRAME_LENGTH_OFFSET, layout.frameLength());
        file.set(LONG_LE, PagePoolDescriptor.PAGE_COUNT_OFFSET, layout.pageCount());
        file.set(LONG_LE, PagePoolDescriptor.METADATA_OFFSET_OFFSET, layout.metadataOffset());
        file.set(LONG_LE, PagePoolDescriptor.INDEX_OFFSET_OFFSET, layout.indexOffset());
        file.set(LONG_LE, PagePoolDescriptor.INDEX_LENGTH_OFFSET, layout.indexLength());
        file.set(LONG_LE, PagePoolDescriptor.DATA_OFFSET_OFFSET, layout.dataOffset());
        file.set(LONG_LE, PagePoolDescriptor.FILE_LENGTH_OFFSET, layout.fileLength());
        file.set(LONG_LE, PagePoolDescriptor.COUNTERS_OFFSET_OFFSET, PagePoolDescriptor.COUNTERS_OFFSET);
        file.set(LONG_LE, PagePoolDescriptor.COUNTERS_LENGTH_OFFSET, CountersDescriptor.REGION_LENGTH);
        file.set(LONG_LE, PagePoolDescriptor.CREATOR_PID_OFFSET, ProcessHandle.current().pid());
        file.set(LONG_LE, PagePoolDescriptor.START_TIME_OFFSET, System.currentTimeMillis());
        LONG_HANDLE.setRelease(file, (long)PagePoolDescriptor.HEARTBEAT_OFFSET, System.currentTimeMillis());
        file.set(INT_LE, PagePoolDescriptor.POOL_STATE_OFFSET, PagePoolDescriptor.STATE_OPEN);
        // The version goes last: a client that sees it sees every field above.
        INT_HANDLE.setRelease(file, (long)PagePoolDescriptor.LAYOUT_VERSION_OFFSET, PagePoolDescriptor.LAYOUT_VERSION);
    }

    /** @return the pool file */
    public Path path()
    {
        return path;
    }

    /** @return payload bytes per page */
    public long pageSize()
    {
        return layout.pageSize();
    }

    /** @return bytes per frame (payload plus trailer block) */
    public long frameLength()
    {
        return layout.frameLength();
    }

    /** @return pages in the pool */
    public int pageCount()
    {
        return layout.pageCount();
    }

    /** @return where each region lies */
    public PagePoolDescriptor.Layout layout()
    {
        return layout;
    }

    /** @return the key index living in the file */
    public KeyTable index()
    {
        return index;
    }

    /** @return the counters region */
    public MemorySegment counters()
    {
        return file.asSlice(PagePoolDescriptor.COUNTERS_OFFSET, CountersDescriptor.REGION_LENGTH);
    }

    /**
     * @param page a page
     * @return its whole frame (payload and trailer block), as stored in L3
     */
    public MemorySegment frame(final int page)
    {
        return frames[page];
    }

    /**
     * @param page a page
     * @return its payload, {@link #pageSize()} bytes
     */
    public MemorySegment payload(final int page)
    {
        return payloads[page];
    }

    private long entry(final int page)
    {
        return PageMetadataDescriptor.entryOffset(layout.metadataOffset(), page);
    }

    /**
     * @param page a page
     * @return its state word, read with acquire semantics
     */
    public long stateWordAcquire(final int page)
    {
        return (long)LONG_HANDLE.getAcquire(file, entry(page) + STATE_WORD_OFFSET);
    }

    /**
     * @param page     a page
     * @param expected the word believed current
     * @param update   the new word
     * @return whether the swap happened
     */
    public boolean compareAndSetStateWord(final int page, final long expected, final long update)
    {
        return LONG_HANDLE.compareAndSet(file, entry(page) + STATE_WORD_OFFSET, expected, update);
    }

    /**
     * Pins a SERVING page of a known generation for a reader.
     *
     * @param page       a page
     * @param generation the generation the reader saw
     * @return whether the page was SERVING in that generation and is now pinned
     */
    public boolean tryPin(final int page, final int generation)
    {
        while (true)
        {
            final long word = stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.generation(word) != generation
                || PageStateWord.pins(word) == PageStateWord.MAX_PINS)
            {
                return false;
            }
            if (compareAndSetStateWord(page, word, PageStateWord.pinned(word)))
            {
                return true;
            }
        }
    }

    /**
     * Pins a SERVING page whatever its generation.
     *
     * @param page a page
     * @return whether the page was SERVING and is now pinned
     */
    public boolean tryPin(final int page)
    {
        while (true)
        {
            final long word = stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) == PageStateWord.MAX_PINS)
            {
                return false;
            }
            if (compareAndSetStateWord(page, word, PageStateWord.pinned(word)))
            {
                return true;
            }
        }
    }

    /**
     * Drops one pin.
     *
     * @param page a pinned SERVING page
     * @throws IllegalStateException if the page has no pin to drop
     */
    public void unpin(final int page)
    {
        while (true)
        {
            final long word = stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) == 0)
            {
                throw new IllegalStateException("page " + page + " has no pin to drop: " + PageStateWord.stateName(PageStateWord.state(word))
                    + " with " + PageStateWord.pins(word) + " pins");
            }
            if (compareAndSetStateWord(page, word, PageStateWord.unpinned(word)))
            {
                return;
            }
        }
    }

    /**
     * @param page a page
     * @return the key's high half
     */
    public long keyHigh(final int page)
    {
        return file.get(LONG_LE, entry(page) + KEY_HIGH_OFFSET);
    }

    /**
     * @param page a page
     * @return the key's low half
     */
    public long keyLow(final int page)
    {
        return file.get(LONG_LE, entry(page) + KEY_LOW_OFFSET);
    }

    /**
     * @param page    a page being reserved
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     */
    public void key(final int page, final long keyHigh, final long keyLow)
    {
        file.set(LONG_LE, entry(page) + KEY_HIGH_OFFSET, keyHigh);
        file.set(LONG_LE, entry(page) + KEY_LOW_OFFSET, keyLow);
    }

    /**
     * @param page a page
     * @return its committed payload length
     */
    public int payloadLength(final int page)
    {
        return file.get(INT_LE, entry(page) + PAYLOAD_LENGTH_OFFSET);
    }

    /**
     * @param page a page
     * @return its committed payload CRC32C
     */
    public int payloadCrc(final int page)
    {
        return file.get(INT_LE, entry(page) + PAYLOAD_CRC_OFFSET);
    }

    /**
     * @param page   a page being committed
     * @param length payload length
     * @param crc    payload CRC32C
     */
    public void payloadInfo(final int page, final int length, final int crc)
    {
        file.set(INT_LE, entry(page) + PAYLOAD_LENGTH_OFFSET, length);
        file.set(INT_LE, entry(page) + PAYLOAD_CRC_OFFSET, crc);
    }

    /**
     * @param page a page
     * @return the session that holds it while WRITING
     */
    public int owner(final int page)
    {
        return file.get(INT_LE, entry(page) + OWNER_OFFSET);
    }

    /**
     * @param page          a page being reserved
     * @param owner         the session writing it
     * @param deadlineNanos when the reservation lapses ({@link System#nanoTime()} clock)
     */
    public void reservation(final int page, final int owner, final long deadlineNanos)
    {
        file.set(INT_LE, entry(page) + OWNER_OFFSET, owner);
        file.set(LONG_LE, entry(page) + LEASE_DEADLINE_OFFSET, deadlineNanos);
    }

    /**
     * @param page a page
     * @return when its reservation lapses
     */
    public long leaseDeadline(final int page)
    {
        return file.get(LONG_LE, entry(page) + LEASE_DEADLINE_OFFSET);
    }

    /**
     * @param page a page
     * @return times it was acquired since it was committed
     */
    public int hitCount(final int page)
    {
        return file.get(INT_LE, entry(page) + HIT_COUNT_OFFSET);
    }

    /**
     * @param page a page
     * @param hits its hit count
     */
    public void hitCount(final int page, final int hits)
    {
        file.set(INT_LE, entry(page) + HIT_COUNT_OFFSET, hits);
    }

    /**
     * @param page  a page
     * @param nanos when it was last used ({@link System#nanoTime()} clock)
     */
    public void lastAccess(final int page, final long nanos)
    {
        file.set(LONG_LE, entry(page) + LAST_ACCESS_OFFSET, nanos);
    }

    /**
     * @param page a page
     * @return when it was last used
     */
    public long lastAccess(final int page)
    {
        return file.get(LONG_LE, entry(page) + LAST_ACCESS_OFFSET);
    }

    /**
     * Seals a written frame: zeroes the payload's unused tail (so no earlier page's bytes leak into
     * L3), computes the payload CRC32C, writes the trailer, and records length and CRC in the
     * metadata. Call before the CAS that makes the page SERVING.
     *
     * @param page    a WRITING page
     * @param keyHigh its key's high half
     * @param keyLow  its key's low half
     * @param length  payload bytes written
     * @return the payload CRC32C
     */
    public int seal(final int page, final long keyHigh, final long keyLow, final int length)
    {
        final MemorySegment frame = frames[page];
        if (length < layout.pageSize())
        {
            frame.asSlice(length, layout.pageSize() - length).fill((byte)0);
        }
        final int crc = checksum.crc(page, 0, length);
        final long t = layout.pageSize();
        frame.set(LONG_LE, t + PageFrameDescriptor.MAGIC_OFFSET, PageFrameDescriptor.MAGIC);
        frame.set(LONG_LE, t + PageFrameDescriptor.KEY_HIGH_OFFSET, keyHigh);
        frame.set(LONG_LE, t + PageFrameDescriptor.KEY_LOW_OFFSET, keyLow);
        frame.set(LONG_LE, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET, length);
        frame.set(INT_LE, t + PageFrameDescriptor.PAYLOAD_CRC_OFFSET, crc);
        frame.set(INT_LE, t + PageFrameDescriptor.FRAME_VERSION_OFFSET, PageFrameDescriptor.FRAME_VERSION);
        frame.set(LONG_LE, t + PageFrameDescriptor.PAGE_SIZE_OFFSET, layout.pageSize());
        frame.set(LONG_LE, t + PageFrameDescriptor.COMMIT_TIME_OFFSET, System.currentTimeMillis());
        frame.set(INT_LE, t + PageFrameDescriptor.TRAILER_CRC_OFFSET, checksum.crc(page, t, PageFrameDescriptor.TRAILER_CHECKED_LENGTH));
        payloadInfo(page, length, crc);
        return crc;
    }

    /** Outcome of {@link #verifyFrame}. */
    public enum FrameCheck
    {
        /** The frame is the page asked for, intact. */
        VALID,
        /** No trailer, or a trailer of another format or page size. */
        BAD_TRAILER,
        /** An intact frame of a different key: a misdirected read. */
        WRONG_KEY,
        /** The trailer or payload CRC does not match. */
        CRC_MISMATCH
    }

    /**
     * Checks a frame read from L3 before it may become visible; on success records its length and CRC
     * in the metadata. Safe to call from I/O threads (each thread has its own checksum views).
     *
     * @param page    a WRITING page holding the bytes read
     * @param keyHigh the key that was asked for, high half
     * @param keyLow  the key that was asked for, low half
     * @return what was found
     */
    public FrameCheck verifyFrame(final int page, final long keyHigh, final long keyLow)
    {
        final MemorySegment frame = frames[page];
        final long t = layout.pageSize();
        if (frame.get(LONG_LE, t + PageFrameDescriptor.MAGIC_OFFSET) != PageFrameDescriptor.MAGIC
            || frame.get(INT_LE, t + PageFrameDescriptor.FRAME_VERSION_OFFSET) != PageFrameDescriptor.FRAME_VERSION
            || frame.get(LONG_LE, t + PageFrameDescriptor.PAGE_SIZE_OFFSET) != layout.pageSize())
        {
            return FrameCheck.BAD_TRAILER;
        }
        if (checksum.crc(page, t, PageFrameDescriptor.TRAILER_CHECKED_LENGTH) != frame.get(INT_LE, t + PageFrameDescriptor.TRAILER_CRC_OFFSET))
        {
            return FrameCheck.CRC_MISMATCH;
        }
        if (frame.get(LONG_LE, t + PageFrameDescriptor.KEY_HIGH_OFFSET) != keyHigh || frame.get(LONG_LE, t + PageFrameDescriptor.KEY_LOW_OFFSET) != keyLow)
        {
            return FrameCheck.WRONG_KEY;
        }
        final long length = frame.get(LONG_LE, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET);
        if (length < 0 || length > layout.pageSize())
        {
            return FrameCheck.BAD_TRAILER;
        }
        final int crc = frame.get(INT_LE, t + PageFrameDescriptor.PAYLOAD_CRC_OFFSET);
        if (checksum.crc(page, 0, length) != crc)
        {
            return FrameCheck.CRC_MISMATCH;
        }
        payloadInfo(page, (int)length, crc);
        return FrameCheck.VALID;
    }

    /**
     * @param page a SERVING page
     * @return whether its payload still matches the CRC recorded at commit
     */
    public boolean payloadIntact(final int page)
    {
        return checksum.crc(page, 0, payloadLength(page)) == payloadCrc(page);
    }

    /**
     * Publishes liveness for clients and for a would-be second engine.
     *
     * @param epochMillis the current time
     */
    public void heartbeat(final long epochMillis)
    {
        LONG_HANDLE.setRelease(file, (long)PagePoolDescriptor.HEARTBEAT_OFFSET, epochMillis);
    }

    /** @return the last heartbeat, epoch ms */
    public long heartbeatAcquire()
    {
        return (long)LONG_HANDLE.getAcquire(file, (long)PagePoolDescriptor.HEARTBEAT_OFFSET);
    }

    /** @return the PID of the engine that created the pool */
    public long creatorPid()
    {
        return file.get(LONG_LE, PagePoolDescriptor.CREATOR_PID_OFFSET);
    }

    /** @return whether this instance created and owns the file */
    public boolean isOwner()
    {
        return owner;
    }

    /**
     * Unmaps the file. The owner marks the pool closed, releases its lock and deletes the file;
     * clients that still map it keep their mapping until they unmap.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            if (owner)
            {
                file.set(INT_LE, PagePoolDescriptor.POOL_STATE_OFFSET, PagePoolDescriptor.STATE_CLOSED);
                Files.deleteIfExists(path);
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "could not delete pool file {0}: {1}", path, ex.getMessage());
        }
        finally
        {
            arena.close();
            try
            {
                if (lock != null)
                {
                    lock.release();
                }
                channel.close();
            }
            catch (final IOException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "could not close pool file {0}: {1}", path, ex.getMessage());
            }
        }
    }
}
