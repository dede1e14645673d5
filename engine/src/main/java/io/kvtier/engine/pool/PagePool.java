package io.kvtier.engine.pool;

import io.kvtier.collections.KeyTable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
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
    /** A block of zeroes to clear page tails from; never written. */
    private static final MemorySegment ZEROS = Arena.global().allocate(64 << 10, 4096).asReadOnly();

    /** A heartbeat older than this means the pool's creator is gone even if its PID was reused. */
    public static final long HEARTBEAT_STALE_MS = 5_000;

    private final Path path;
    private final Arena arena;
    private final FileChannel channel;
    private final PoolFile ownedFile;
    private final MemorySegment file;
    private final MemorySegment data;
    private final PagePoolDescriptor.Layout layout;
    private final MemorySegment[] frames;
    private final MemorySegment[] payloads;
    private final PageChecksum checksum;
    private final KeyTable index;
    private final boolean owner;
    private boolean closed;

    private PagePool(final Path path, final Arena arena, final FileChannel channel, final PoolFile ownedFile, final MemorySegment file,
                     final PagePoolDescriptor.Layout layout, final KeyTable index, final boolean owner)
    {
        this.path = path;
        this.arena = arena;
        this.channel = channel;
        this.ownedFile = ownedFile;
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
     * Creates the pool file, or replaces one left by a dead engine (see {@link PoolFile}).
     *
     * @param path          the pool file
     * @param pageSize      payload bytes per page
     * @param pageCount     pages
     * @param indexEntries  entries of the key index
     * @param clientSlots   processes that may pin pages directly
     * @param clientTimeout a client silent this long loses its pins
     * @return the owned pool
     * @throws PoolOwnedException if a live engine owns the file
     * @throws PoolPathException  if the path is a directory, a file that is not a pool, or on a
     *                            filesystem too small for the pool
     * @throws IOException        if the file cannot be created or mapped
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                  final java.time.Duration clientTimeout) throws IOException
    {
        final PagePoolDescriptor.Layout layout = PagePoolDescriptor.layout(pageSize, pageCount, indexEntries, clientSlots);
        for (int attempt = 0; ; attempt++)
        {
            final PoolFile owned = PoolFile.prepare(path, layout.fileLength());
            final Arena arena = Arena.ofShared();
            try
            {
                final MemorySegment file = owned.channel().map(FileChannel.MapMode.READ_WRITE, 0, layout.fileLength(), arena);
                final MemorySegment indexRegion = file.asSlice(layout.indexOffset(), layout.indexLength());
                final KeyTable index = KeyTable.format(indexRegion, indexEntries);
                formatHeader(file, layout, owned.epoch(), (int)Math.min(Integer.MAX_VALUE, clientTimeout.toMillis()));
                if (owned.publish())
                {
                    return new PagePool(path, arena, owned.channel(), owned, file, layout, index, true);
                }
                if (attempt > 8)
                {
                    throw new IOException("pool.path = \"" + path + "\" kept being created by another process while this engine started");
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                owned.abandon();
                throw ex;
            }
            // Another engine created the pool first: drop ours and look again (it will be refused as owned).
            arena.close();
            owned.abandon();
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
                header.get(INT_LE, PagePoolDescriptor.CLIENT_SLOT_COUNT_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.CLIENT_SLOTS_OFFSET_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.METADATA_OFFSET_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.PIN_TABLE_OFFSET_OFFSET),
                header.get(LONG_LE, PagePoolDescriptor.PIN_TABLE_LENGTH_OFFSET),
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

    private static void formatHeader(final MemorySegment file, final PagePoolDescriptor.Layout layout, final long epoch, final int clientTimeoutMs)
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
        file.set(LONG_LE, PagePoolDescriptor.EPOCH_OFFSET, epoch);
        file.set(INT_LE, PagePoolDescriptor.CLIENT_SLOT_COUNT_OFFSET, layout.clientSlots());
        file.set(INT_LE, PagePoolDescriptor.CLIENT_TIMEOUT_MS_OFFSET, clientTimeoutMs);
        file.set(LONG_LE, PagePoolDescriptor.CLIENT_SLOTS_OFFSET_OFFSET, layout.clientSlotsOffset());
        file.set(LONG_LE, PagePoolDescriptor.PIN_TABLE_OFFSET_OFFSET, layout.pinTableOffset());
        file.set(LONG_LE, PagePoolDescriptor.PIN_TABLE_LENGTH_OFFSET, layout.pinTableLength());
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
        checkOwner();
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
        checkOwner();
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
        checkOwner();
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

    private void checkOwner()
    {
        if (!owner)
        {
            throw new IllegalStateException("pins in the page state word belong to the engine; a process attached to the pool pins through"
                + " PoolClient, whose pins carry an owner and are reclaimed if it dies");
        }
    }

    /**
     * Evicts a page seen SERVING with no pins in {@code word}: SERVING → EVICTING, then, unless a
     * client process holds a pin on it in the pin table, EVICTING → FREE with the next generation (so
     * stale handles fail); otherwise the word goes back to SERVING. The engine thread is the only
     * caller, and the only writer of EVICTING words.
     *
     * @param page a page
     * @param word its state word as last read
     * @return whether the page is now FREE
     */
    public boolean evictIfUnpinned(final int page, final long word)
    {
        if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) != 0)
        {
            return false;
        }
        final int generation = PageStateWord.generation(word);
        final long evicting = PageStateWord.word(generation, 0, PageStateWord.EVICTING);
        if (!LONG_HANDLE.compareAndSet(file, entry(page) + STATE_WORD_OFFSET, word, evicting))
        {
            return false;
        }
        // compareAndSet above and the volatile reads below pair with the client's CAS of its pin entry
        // followed by its volatile re-read of this word: one of the two sides sees the other.
        if (hasClientPinsVolatile(page))
        {
            LONG_HANDLE.setVolatile(file, entry(page) + STATE_WORD_OFFSET, word);
            return false;
        }
        LONG_HANDLE.setVolatile(file, entry(page) + STATE_WORD_OFFSET, PageStateWord.word(generation + 1, 0, PageStateWord.FREE));
        return true;
    }

    /**
     * @param page a page
     * @return whether any client slot holds a pin on it (volatile reads of every entry)
     */
    public boolean hasClientPinsVolatile(final int page)
    {
        final int slots = layout.clientSlots();
        final long base = PinTableDescriptor.entryOffset(layout.pinTableOffset(), slots, page, 0);
        for (int slot = 0; slot < slots; slot++)
        {
            if (PinTableDescriptor.count((int)INT_HANDLE.getVolatile(file, base + (long)slot * PinTableDescriptor.ENTRY_LENGTH)) != 0)
            {
                return true;
            }
        }
        return false;
    }

    /** @return client slots in the pool */
    public int clientSlots()
    {
        return layout.clientSlots();
    }

    private long slotOffset(final int slot)
    {
        return ClientSlotDescriptor.slotOffset(layout.clientSlotsOffset(), slot);
    }

    /**
     * @param slot a client slot
     * @return its slot word, read volatile
     */
    public long clientSlotWordVolatile(final int slot)
    {
        return (long)LONG_HANDLE.getVolatile(file, slotOffset(slot) + ClientSlotDescriptor.SLOT_WORD_OFFSET);
    }

    /**
     * @param slot     a client slot
     * @param expected the word believed current
     * @param update   the new word
     * @return whether the swap happened
     */
    public boolean compareAndSetClientSlotWord(final int slot, final long expected, final long update)
    {
        return LONG_HANDLE.compareAndSet(file, slotOffset(slot) + ClientSlotDescriptor.SLOT_WORD_OFFSET, expected, update);
    }

    /**
     * @param slot a client slot
     * @return its client's last heartbeat, epoch ms
     */
    public long clientHeartbeatAcquire(final int slot)
    {
        return (long)LONG_HANDLE.getAcquire(file, slotOffset(slot) + ClientSlotDescriptor.HEARTBEAT_OFFSET);
    }

    /**
     * @param slot        a client slot the caller holds
     * @param epochMillis the current time
     */
    public void clientHeartbeatRelease(final int slot, final long epochMillis)
    {
        LONG_HANDLE.setRelease(file, slotOffset(slot) + ClientSlotDescriptor.HEARTBEAT_OFFSET, epochMillis);
    }

    /**
     * @param slot a client slot
     * @return its flags
     */
    public int clientFlagsAcquire(final int slot)
    {
        return (int)INT_HANDLE.getAcquire(file, slotOffset(slot) + ClientSlotDescriptor.FLAGS_OFFSET);
    }

    /**
     * @param slot  a client slot the caller holds
     * @param flags its flags
     */
    public void clientFlagsRelease(final int slot, final int flags)
    {
        INT_HANDLE.setRelease(file, slotOffset(slot) + ClientSlotDescriptor.FLAGS_OFFSET, flags);
    }

    /**
     * @param slot        a client slot the caller holds
     * @param epochMillis when it was claimed
     */
    public void clientClaimedAt(final int slot, final long epochMillis)
    {
        file.set(LONG_LE, slotOffset(slot) + ClientSlotDescriptor.CLAIMED_AT_OFFSET, epochMillis);
    }

    private long pinEntry(final int page, final int slot)
    {
        return PinTableDescriptor.entryOffset(layout.pinTableOffset(), layout.clientSlots(), page, slot);
    }

    /**
     * @param page a page
     * @param slot a client slot
     * @return the slot's pin entry for the page, read volatile
     */
    public int pinEntryVolatile(final int page, final int slot)
    {
        return (int)INT_HANDLE.getVolatile(file, pinEntry(page, slot));
    }

    /**
     * @param page     a page
     * @param slot     a client slot
     * @param expected the entry believed current
     * @param update   the new entry
     * @return whether the swap happened
     */
    public boolean compareAndSetPinEntry(final int page, final int slot, final int expected, final int update)
    {
        return INT_HANDLE.compareAndSet(file, pinEntry(page, slot), expected, update);
    }

    /** @return the state word of a page read volatile, for the client side of the pin protocol */
    long stateWordVolatile(final int page)
    {
        return (long)LONG_HANDLE.getVolatile(file, entry(page) + STATE_WORD_OFFSET);
    }

    /** @return the pool's epoch: it changes when a new file replaces a dead engine's pool */
    public long epoch()
    {
        return file.get(LONG_LE, PagePoolDescriptor.EPOCH_OFFSET);
    }

    /** @return the pool state (open, closed, superseded), read with acquire semantics */
    public int poolStateAcquire()
    {
        return (int)INT_HANDLE.getAcquire(file, (long)PagePoolDescriptor.POOL_STATE_OFFSET);
    }

    /** @return the client timeout recorded in the header, ms */
    public int clientTimeoutMillis()
    {
        return file.get(INT_LE, PagePoolDescriptor.CLIENT_TIMEOUT_MS_OFFSET);
    }

    /** @return the descriptor holding the owner's lock, -1 for a client or without native access */
    public int lockFd()
    {
        return ownedFile == null ? -1 : ownedFile.lockFd();
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
            zeroTail(frame, length, layout.pageSize());
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

    /**
     * Checks, without touching the payload, that a WRITING page was sealed for its key and length:
     * what the engine thread checks at commit, the CRC32C having been computed by the committer.
     *
     * @param page    a WRITING page
     * @param keyHigh its key's high half
     * @param keyLow  its key's low half
     * @param length  the payload length the writer declared
     * @return whether trailer and metadata carry that key and length
     */
    public boolean isSealed(final int page, final long keyHigh, final long keyLow, final int length)
    {
        final MemorySegment frame = frames[page];
        final long t = layout.pageSize();
        return frame.get(LONG_LE, t + PageFrameDescriptor.MAGIC_OFFSET) == PageFrameDescriptor.MAGIC
            && frame.get(INT_LE, t + PageFrameDescriptor.FRAME_VERSION_OFFSET) == PageFrameDescriptor.FRAME_VERSION
            && frame.get(LONG_LE, t + PageFrameDescriptor.KEY_HIGH_OFFSET) == keyHigh
            && frame.get(LONG_LE, t + PageFrameDescriptor.KEY_LOW_OFFSET) == keyLow
            && frame.get(LONG_LE, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET) == length
            && payloadLength(page) == length;
    }

    /** Zeroes {@code [from, to)} of a frame by copies from a small zero block: a slice to fill would be an allocation per commit. */
    private static void zeroTail(final MemorySegment frame, final long from, final long to)
    {
        long at = from;
        // Up to the next 8-byte boundary one byte at a time, then whole longs, then the zero block.
        while (at < to && (at & 7) != 0)
        {
            frame.set(ValueLayout.JAVA_BYTE, at++, (byte)0);
        }
        while (at + ZEROS.byteSize() <= to)
        {
            MemorySegment.copy(ZEROS, 0, frame, at, ZEROS.byteSize());
            at += ZEROS.byteSize();
        }
        if (at < to)
        {
            MemorySegment.copy(ZEROS, 0, frame, at, to - at);
        }
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
     * Unmaps the file. The owner marks the pool closed, deletes the file if it is still the one at its
     * path, and drops its lock; clients that still map it keep their mapping until they unmap.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (owner)
        {
            INT_HANDLE.setRelease(file, (long)PagePoolDescriptor.POOL_STATE_OFFSET, PagePoolDescriptor.STATE_CLOSED);
        }
        arena.close();
        if (ownedFile != null)
        {
            ownedFile.close(true);
        }
        else
        {
            try
            {
                channel.close();
            }
            catch (final IOException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "could not close pool file {0}: {1}", path, ex.getMessage());
            }
        }
    }
}
