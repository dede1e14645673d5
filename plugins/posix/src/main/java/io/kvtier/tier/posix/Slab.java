package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.KeyIds;
import io.kvtier.tier.support.StartupScan;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The slab layout's shared state ({@code layout = slab}): the extent files and their descriptors, which
 * slot holds which key's frame, the free slots, and the slots readers are using. The format is
 * {@link SlabDescriptor}'s; the workers' {@link SlabFileStore}s move the bytes.
 *
 * <h2>Slots</h2>
 * Every slot is one of: free; being written (taken by a write, not yet anyone's frame); a key's frame
 * (verified: written by this run or checked against its CRC32C; or unverified: found by the start-up
 * scan and not read yet); retired (no longer a key's frame, but readers that pinned it before are still
 * reading it); or quarantined (its tombstone could not be written, so it is never reused this run). A
 * slot goes back to free only after its tombstone (zeros over its frame header) was written, by whoever let go
 * of it last: the remove, eviction or rewrite that retired it, or its last reader. Because a slot in use
 * by a reader is never reused, a read never sees another key's bytes; because every frame is retired
 * through a tombstone, a deleted or replaced frame is never found again by a later scan.
 *
 * <h2>Space</h2>
 * Slots are all one size, so a freed one is reused as it is and nothing needs compacting; extents are
 * made on demand, each preallocated whole ({@code posix_fallocate}), up to the slots the index can hold,
 * and never shrink. Which frames to drop when the tier is full is the {@code FileIndex}'s choice, as for
 * the files layout: an eviction reaches the slab as the removal of a key.
 *
 * <p>Thread-safe: every change of slot state is under this object's monitor, held for no I/O; making an
 * extent is under a lock of its own, so reads and writes go on meanwhile.
 */
final class Slab
{
    static final byte FREE = 0;
    static final byte WRITING = 1;
    static final byte VERIFIED = 2;
    static final byte UNVERIFIED = 3;
    static final byte RETIRED = 4;
    static final byte QUARANTINED = 5;

    /** {@link #retire}: the key had no frame. */
    static final int NOT_MAPPED = -2;
    /** {@link #retire} and {@link #unpin}: readers hold the slot; the last of them clears it. */
    static final int PENDING = -1;

    private final String name;
    /** Whether extents are allocated when made, or only sized. */
    private final boolean preallocate;
    private final LibC libc;
    private final Path dir;
    private final Arena arena;
    private final DirectIo direct;
    private final boolean fsync;
    private final System.Logger logger;
    private final IoErrorLog errors;
    /** Bytes of a slot: the objects' less their last block when they are two blocks or more ({@link SlabDescriptor#slotBytes}). */
    final long slotBytes;
    /** Bytes an object takes at most: the object size rounded to a block. */
    final long objectBytes;
    final int slotsPerExtent;
    final int maxExtents;
    private final int[] bufferedFds;
    private final int[] directFds;
    private final byte[] state;
    private final int[] readers;
    private final int[] lengths;
    private final int[] storedCrcs;
    /** Each frame's {@link SlabDescriptor} form: whole, trimmed or spilled. */
    private final byte[] forms;
    private final KeyIds keys;
    /**
     * The free slots, a bit each. A write takes the lowest, so that writes fill the slab from its start
     * and the slots of a batch ascend whatever order they were freed in (a stack of freed slots hands a
     * batch of removals back in descending order): the device sees runs in file order, as fio's sequential
     * jobs give it.
     */
    private final BitSet free;
    private int freeCount;
    /** No slot below this one is free: where the search for the lowest free slot starts. */
    private int lowestFree;
    private int extents;
    private long sequence;
    private final Object growLock = new Object();
    /** Below this many free slots, the grower makes the next extent ahead of the writes that need it. */
    private final int lowWater;
    private Thread grower;
    private boolean growRequested;
    private boolean closed;
    private final MemorySegment zeroBlock;
    private final MemorySegment pathBuffer;
    private final MemorySegment extentHeader;
    private int lockFd = -1;
    private long tombstonesWritten;

    /**
     * @param name        the tier's name, for messages
     * @param libc        the libc front
     * @param dir         the tier's directory
     * @param objectSize  the engine's page frame size
     * @param extentBytes the most bytes of one extent file ({@code extent-size})
     * @param maxSlots    the most slots (frames, writes in flight and retired slots together)
     * @param direct      whether O_DIRECT is in use
     * @param fsync       whether to make a new extent's header and every tombstone durable before going on
     * @param arena       where the native buffers come from
     * @param logger      where start-up findings go
     * @param errors      where I/O failures go, rate-limited
     */
    Slab(final String name, final LibC libc, final Path dir, final long objectSize, final long extentBytes, final int maxSlots,
         final DirectIo direct, final boolean fsync, final Arena arena, final System.Logger logger, final IoErrorLog errors)
    {
        this(name, libc, dir, objectSize, extentBytes, maxSlots, direct, fsync, true, arena, logger, errors);
    }

    /**
     * @param preallocate whether a new extent's blocks are allocated when it is made ({@code posix_fallocate}), else it is
     *                    only sized ({@code ftruncate}): for a filesystem without {@code fallocate}, where glibc would write
     *                    into every 4 KiB block instead
     */
    Slab(final String name, final LibC libc, final Path dir, final long objectSize, final long extentBytes, final int maxSlots,
         final DirectIo direct, final boolean fsync, final boolean preallocate, final Arena arena, final System.Logger logger,
         final IoErrorLog errors)
    {
        this.preallocate = preallocate;
        this.name = name;
        this.libc = libc;
        this.dir = dir;
        this.arena = arena;
        this.direct = direct;
        this.fsync = fsync;
        this.logger = logger;
        this.errors = errors;
        objectBytes = SlabDescriptor.objectBytes(objectSize);
        slotBytes = SlabDescriptor.slotBytes(objectSize);
        // A small tier's one extent is only as large as its slots need.
        final long wanted = Math.max(1, Math.min(SlabDescriptor.slotsFitting(extentBytes, slotBytes), maxSlots));
        slotsPerExtent = (int)wanted;
        lowWater = Math.max(1, slotsPerExtent / 4);
        maxExtents = (int)((maxSlots + (long)slotsPerExtent - 1) / slotsPerExtent);
        final int slots = Math.multiplyExact(maxExtents, slotsPerExtent);
        bufferedFds = new int[maxExtents];
        directFds = new int[maxExtents];
        java.util.Arrays.fill(bufferedFds, -1);
        java.util.Arrays.fill(directFds, -1);
        state = new byte[slots];
        readers = new int[slots];
        lengths = new int[slots];
        storedCrcs = new int[slots];
        forms = new byte[slots];
        keys = new KeyIds(arena, slots);
        free = new BitSet(slots);
        zeroBlock = arena.allocate(SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
        pathBuffer = arena.allocate(4096);
        extentHeader = arena.allocate(SlabDescriptor.HEADER_BLOCK, SlabDescriptor.HEADER_BLOCK);
    }

    /** An extent is at most this share of its filesystem: a whole one preallocated must not take all of it. */
    static final int EXTENTS_PER_FILESYSTEM = 8;

    /**
     * How large the extents of a slab are, before it opens: those already in {@code dir} keep their size
     * (found in the lowest-numbered whole extent header of this page size), so that neither a changed
     * {@code extent-size} nor a resized filesystem deletes the pages they hold; a new slab's extents are
     * {@code extentBytes}, but no more than an eighth of the filesystem, since an extent is preallocated
     * whole and one that cannot be made leaves the tier unable to write anything.
     *
     * @param dir         the tier's directory
     * @param objectSize  the engine's page frame size
     * @param extentBytes the configured {@code extent-size}
     * @param totalBytes  the size of the filesystem holding {@code dir}, or 0 when unknown
     * @return the size of one extent file to pass to the constructor, and why when it is not {@code extentBytes}
     */
    static ExtentSize extentSize(final Path dir, final long objectSize, final long extentBytes, final long totalBytes)
    {
        final long slotBytes = SlabDescriptor.slotBytes(objectSize);
        final int existing = existingSlotsPerExtent(dir, slotBytes, SlabDescriptor.objectBytes(objectSize));
        if (existing > 0)
        {
            final long bytes = SlabDescriptor.extentBytes(existing, slotBytes);
            return new ExtentSize(bytes, SlabDescriptor.slotsFitting(extentBytes, slotBytes) == existing ? ""
                : "the extents already in " + dir + " hold " + existing + " slots each (" + bytes + " bytes), and new ones are made alike"
                    + " so that their pages stay; a changed size applies once the directory is empty");
        }
        final long share = totalBytes / EXTENTS_PER_FILESYSTEM;
        if (totalBytes > 0 && extentBytes > share && share >= SlabDescriptor.extentBytes(1, slotBytes))
        {
            return new ExtentSize(share, "its filesystem holds " + totalBytes + " bytes, and an extent (preallocated whole) is made no larger"
                + " than 1/" + EXTENTS_PER_FILESYSTEM + " of it: " + share + " bytes, not " + extentBytes);
        }
        return new ExtentSize(extentBytes, "");
    }

    /** The bytes of one extent file a slab is opened with, and why when they are not the configured ones. */
    record ExtentSize(long bytes, String why)
    {
    }

    /** @return the slots of the lowest-numbered extent in {@code dir} whose header is whole and of this slot size, else -1 */
    private static int existingSlotsPerExtent(final Path dir, final long slotBytes, final long objectBytes)
    {
        final List<Path> found;
        try
        {
            found = extentFiles(dir);
        }
        catch (final IOException ex)
        {
            return -1; // the scan that follows lists it again, and says what is wrong
        }
        final HeaderCrc crc = new HeaderCrc();
        final java.nio.ByteBuffer block = java.nio.ByteBuffer.allocate((int)SlabDescriptor.HEADER_BLOCK);
        for (final Path file : found)
        {
            block.clear();
            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ))
            {
                while (block.hasRemaining() && channel.read(block, block.position()) > 0)
                {
                    // a header block is read whole, or found torn below
                }
            }
            catch (final IOException ex)
            {
                continue;
            }
            if (block.hasRemaining())
            {
                continue;
            }
            final int slots = SlabDescriptor.extentSlots(MemorySegment.ofArray(block.array()), crc, slotBytes, objectBytes,
                SlabDescriptor.extentNumber(file.getFileName().toString()));
            if (slots > 0)
            {
                return slots;
            }
        }
        return -1;
    }

    /** @return the extent files in {@code dir}, in the order of their numbers */
    private static List<Path> extentFiles(final Path dir) throws IOException
    {
        final List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir))
        {
            for (final Path file : files)
            {
                if (SlabDescriptor.extentNumber(file.getFileName().toString()) >= 0)
                {
                    found.add(file);
                }
            }
        }
        found.sort(Comparator.naturalOrder());
        return found;
    }

    /** @return bytes of one extent file up to its tail area: what is preallocated */
    long extentFileBytes()
    {
        return SlabDescriptor.extentBytes(slotsPerExtent, slotBytes);
    }

    // ------------------------------------------------------------------------------------------------
    // Start-up
    // ------------------------------------------------------------------------------------------------

    /** What the start-up scan found, for the tier's log line. */
    record ScanReport(List<StartupScan.Page> pages, int extents, int extentsDeleted, int staleFrames, int tornFrames)
    {
    }

    /**
     * Takes the directory's lock, opens the extents found in it (deleting those of another geometry, a
     * torn header, or a number beyond the capacity), reads every slot's header and keeps, per key, the
     * newest whole frame; older frames of the same key are cleared, and where a crash left several, the
     * stored bytes are checked newest first so that a torn newer one never hides a whole older one.
     *
     * @return the frames kept, oldest first (the order {@code FileIndex.adopt} wants), and what was dropped
     * @throws IOException when the directory cannot be listed
     * @throws IllegalStateException naming the lock file when another process uses the directory
     */
    ScanReport scan() throws IOException
    {
        lock();
        final CRC32C crc = new CRC32C();
        final HeaderCrc headerCrc = new HeaderCrc();
        final MemorySegment header = arena.allocate(SlabDescriptor.HEADER_BLOCK, SlabDescriptor.HEADER_BLOCK);
        final List<Path> found = extentFiles(dir);
        MemorySegment table = null;
        int deleted = 0;
        final List<long[]> candidates = new ArrayList<>();
        for (final Path file : found)
        {
            final int number = SlabDescriptor.extentNumber(file.getFileName().toString());
            final String why = openExisting(file, number, header, headerCrc);
            if (why != null)
            {
                logger.log(System.Logger.Level.WARNING, "posix tier " + name + ": deleting slab extent " + file + ": " + why);
                Files.deleteIfExists(file);
                deleted++;
                continue;
            }
            extents++;
            final int fd = bufferedFds[number];
            // The extent's header table in one read; a table that cannot be read whole leaves its slots free.
            if (table == null)
            {
                table = arena.allocate(SlabDescriptor.tableBytes(slotsPerExtent), SlabDescriptor.HEADER_BLOCK);
            }
            final boolean tableRead = libc.preadFully(fd, table, SlabDescriptor.HEADER_BLOCK) == table.byteSize();
            for (int i = 0; tableRead && i < slotsPerExtent; i++)
            {
                final int slot = number * slotsPerExtent + i;
                final MemorySegment head = table.asSlice((long)i * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
                if (SlabDescriptor.isFrame(head, headerCrc) && fits(SlabDescriptor.frameForm(head), SlabDescriptor.frameLength(head)))
                {
                    candidates.add(new long[] {SlabDescriptor.frameKeyHigh(head), SlabDescriptor.frameKeyLow(head),
                        SlabDescriptor.frameSequence(head), slot, SlabDescriptor.frameLength(head),
                        SlabDescriptor.frameStoredCrc(head) & 0xFFFFFFFFL, SlabDescriptor.frameForm(head)});
                    state[slot] = UNVERIFIED;
                }
            }
        }
        // Per key, newest first.
        candidates.sort(Comparator.<long[]>comparingLong(c -> c[0]).thenComparingLong(c -> c[1]).thenComparing((a, b) -> Long.compare(b[2], a[2])));
        final List<long[]> kept = new ArrayList<>();
        int stale = 0;
        int torn = 0;
        MemorySegment scratch = null;
        for (int from = 0; from < candidates.size(); )
        {
            int to = from + 1;
            while (to < candidates.size() && candidates.get(to)[0] == candidates.get(from)[0] && candidates.get(to)[1] == candidates.get(from)[1])
            {
                to++;
            }
            long[] winner = null;
            for (int c = from; c < to; c++)
            {
                final long[] candidate = candidates.get(c);
                sequence = Math.max(sequence, candidate[2]);
                final int slot = (int)candidate[3];
                if (winner != null)
                {
                    stale++;
                    clearAtStart(slot);
                    continue;
                }
                if (to - from == 1)
                {
                    winner = candidate;
                    continue;
                }
                // Several whole headers: a crash came between a rewrite and the clearing of the old slot.
                if (scratch == null)
                {
                    scratch = arena.allocate(objectBytes, SlabDescriptor.HEADER_BLOCK);
                }
                if (readStored(slot, (int)candidate[6], scratch.asSlice(0, candidate[4]))
                    && (crcOf(scratch.asSlice(0, SlabDescriptor.storedBytes((int)candidate[6], candidate[4], slotBytes)), crc) & 0xFFFFFFFFL) == candidate[5])
                {
                    winner = candidate;
                    state[slot] = VERIFIED;
                }
                else
                {
                    torn++;
                    clearAtStart(slot);
                }
            }
            if (winner != null)
            {
                kept.add(winner);
            }
            from = to;
        }
        kept.sort(Comparator.comparingLong(c -> c[2]));
        final List<StartupScan.Page> pages = new ArrayList<>(kept.size());
        for (final long[] frame : kept)
        {
            final int slot = (int)frame[3];
            keys.putIfAbsent(frame[0], frame[1], slot);
            lengths[slot] = (int)frame[4];
            storedCrcs[slot] = (int)frame[5];
            forms[slot] = (byte)frame[6];
            // The slot's sequence stands in for the files layout's modification time: older frames are evicted first.
            pages.add(new StartupScan.Page(new PageKey(frame[0], frame[1]), frame[4], frame[2]));
        }
        sequence++;
        for (int slot = 0; slot < state.length; slot++)
        {
            if (state[slot] == FREE && bufferedFds[slot / slotsPerExtent] >= 0)
            {
                markFree(slot);
            }
        }
        return new ScanReport(pages, extents, deleted, stale, torn);
    }

    /** @return whether a frame header's form and length describe an object this slab's slots hold */
    private boolean fits(final int form, final long length)
    {
        return switch (form)
        {
            case SlabDescriptor.FORM_WHOLE -> length > 0 && length <= slotBytes;
            case SlabDescriptor.FORM_TRIMMED, SlabDescriptor.FORM_SPILLED -> length > slotBytes && length <= objectBytes;
            default -> false;
        };
    }

    /** Reads a frame's stored bytes at start (its slot's, and a spilled frame's tail block): whether all of them came. */
    private boolean readStored(final int slot, final int form, final MemorySegment object)
    {
        final int fd = bufferedFds[slot / slotsPerExtent];
        final long inSlot = Math.min(object.byteSize(), slotBytes);
        if (libc.preadFully(fd, object.asSlice(0, inSlot), payloadOffset(slot)) != inSlot)
        {
            return false;
        }
        final long rest = object.byteSize() - inSlot;
        return form != SlabDescriptor.FORM_SPILLED || libc.preadFully(fd, object.asSlice(inSlot, rest), tailOffset(slot)) == rest;
    }

    private static int crcOf(final MemorySegment payload, final CRC32C crc)
    {
        crc.reset();
        crc.update(payload.asByteBuffer());
        return (int)crc.getValue();
    }

    /** A slot whose frame lost at start: cleared now, or quarantined when that fails. */
    private void clearAtStart(final int slot)
    {
        state[slot] = tombstone(slot) ? FREE : QUARANTINED;
    }

    /** @return null when the extent was opened, else why it is deleted instead */
    private String openExisting(final Path file, final int number, final MemorySegment header, final HeaderCrc crc)
    {
        if (number >= maxExtents)
        {
            return "its number " + number + " is beyond the " + maxExtents + " extents the capacity (tier." + name + "."
                + PosixSettings.INDEX_ENTRIES + " slots) needs";
        }
        final int fd = libc.open(path(file), LibC.O_RDWR | LibC.O_CLOEXEC, 0);
        if (fd < 0)
        {
            return "opening it failed: " + libc.strerror(-fd);
        }
        final MemorySegment head = header.asSlice(0, SlabDescriptor.EXTENT_CRC_OFFSET + 4);
        final int slots = libc.preadFully(fd, head, 0) == head.byteSize()
            ? SlabDescriptor.extentSlots(head, crc, slotBytes, objectBytes, number) : -1;
        if (slots != slotsPerExtent)
        {
            libc.close(fd);
            return slots < 0
                ? SlabDescriptor.isEarlierFormat(head, crc)
                    ? "it is of slab format " + SlabDescriptor.extentVersion(head) + ", which format " + SlabDescriptor.VERSION
                        + " (an engine frame's last block kept in its 128-byte header) does not read"
                    : "its header is torn or describes another slot size (pages of another size, or another format)"
                : "it holds " + slots + " slots where tier." + name + "." + PosixSettings.EXTENT_SIZE + " now gives " + slotsPerExtent;
        }
        if (libc.size(fd) < extentFileBytes())
        {
            final int rc = size(fd);
            if (rc < 0)
            {
                libc.close(fd);
                return "it is shorter than its slots and preallocating the rest failed: " + libc.strerror(-rc);
            }
        }
        bufferedFds[number] = fd;
        directFds[number] = openDirect(file);
        return null;
    }

    private int openDirect(final Path file)
    {
        if (!direct.active())
        {
            return -1;
        }
        final int fd = libc.open(path(file), LibC.O_RDWR | LibC.O_CLOEXEC | LibC.O_DIRECT, 0);
        return fd < 0 ? -1 : fd;
    }

    private void lock()
    {
        final Path file = dir.resolve(SlabDescriptor.LOCK_FILE);
        final int fd = libc.open(path(file), LibC.O_RDWR | LibC.O_CREAT | LibC.O_CLOEXEC, 0644);
        if (fd < 0)
        {
            throw new IllegalStateException("cannot open the slab's lock file " + file + ": " + libc.strerror(-fd));
        }
        final int rc = libc.ofdLock(fd, LibC.F_WRLCK, 0, 0);
        if (rc < 0)
        {
            libc.close(fd);
            throw new IllegalStateException("the slab in " + dir + " is in use by another process (it holds a lock on " + file
                + "); a slab is one engine's alone: give each engine its own directory, or use tier." + name + "."
                + PosixSettings.LAYOUT + "=files with tier." + name + "." + PosixSettings.SHARED + "=true to share one");
        }
        lockFd = fd;
    }

    private MemorySegment path(final Path file)
    {
        final byte[] bytes = file.toString().getBytes(StandardCharsets.UTF_8);
        LibC.putCString(pathBuffer, 0, bytes, bytes.length);
        return pathBuffer;
    }

    // ------------------------------------------------------------------------------------------------
    // Slots
    // ------------------------------------------------------------------------------------------------

    /**
     * Takes a free slot for a write, making a new extent when none is free and the capacity allows one.
     *
     * @return the slot, or -1 when the slab is full
     */
    int allocate()
    {
        synchronized (this)
        {
            if (freeCount > 0)
            {
                return take();
            }
        }
        synchronized (growLock)
        {
            final int number;
            synchronized (this)
            {
                if (freeCount > 0)
                {
                    return take();
                }
                number = nextExtentNumber();
                if (number < 0)
                {
                    return -1;
                }
            }
            if (!makeExtent(number))
            {
                return -1;
            }
            synchronized (this)
            {
                addExtent(number);
                return take();
            }
        }
    }

    private int take()
    {
        final int slot = free.nextSetBit(lowestFree);
        free.clear(slot);
        freeCount--;
        lowestFree = slot + 1;
        state[slot] = WRITING;
        requestGrowthIfLow();
        return slot;
    }

    /** Called with the monitor held: wakes the grower when free slots run low and another extent may be made. */
    private void requestGrowthIfLow()
    {
        if (grower != null && !growRequested && freeCount < lowWater && extents < maxExtents)
        {
            growRequested = true;
            notifyAll();
        }
    }

    /**
     * Starts the thread that makes extents ahead of need, so that a write seldom waits for a
     * {@code posix_fallocate} (on tmpfs, that zeroes the whole extent's memory). Call once, after {@link #scan}.
     *
     * @param threadName the thread's name
     */
    void startGrower(final String threadName)
    {
        final Thread thread = new Thread(this::growAhead, threadName);
        thread.setDaemon(true);
        synchronized (this)
        {
            grower = thread;
            requestGrowthIfLow();
        }
        thread.start();
    }

    private void growAhead()
    {
        while (true)
        {
            synchronized (this)
            {
                while (!growRequested && !closed)
                {
                    try
                    {
                        wait();
                    }
                    catch (final InterruptedException ex)
                    {
                        return;
                    }
                }
                if (closed)
                {
                    return;
                }
            }
            synchronized (growLock)
            {
                final int number;
                synchronized (this)
                {
                    number = closed || freeCount >= lowWater ? -1 : nextExtentNumber();
                }
                if (number >= 0 && makeExtent(number))
                {
                    synchronized (this)
                    {
                        addExtent(number);
                    }
                }
                synchronized (this)
                {
                    growRequested = false;
                    // A failed attempt is not repeated at once: the next write that finds the slab low asks again.
                }
            }
        }
    }

    /** Called with the monitor held: counts a new extent and frees its slots. */
    private void addExtent(final int number)
    {
        extents++;
        for (int i = 0; i < slotsPerExtent; i++)
        {
            markFree(number * slotsPerExtent + i);
        }
    }

    /** Called with the monitor held: a slot joins the free ones. */
    private void markFree(final int slot)
    {
        free.set(slot);
        freeCount++;
        lowestFree = Math.min(lowestFree, slot);
    }

    /** Gives an extent file its whole length: allocated, or only sized ({@link #preallocate}). @return 0 or -errno */
    private int size(final int fd)
    {
        return preallocate ? libc.posixFallocate(fd, 0, extentFileBytes()) : libc.ftruncate(fd, extentFileBytes());
    }

    private int nextExtentNumber()
    {
        for (int e = 0; e < maxExtents; e++)
        {
            if (bufferedFds[e] < 0)
            {
                return e;
            }
        }
        return -1;
    }

    private boolean makeExtent(final int number)
    {
        final Path file = dir.resolve(SlabDescriptor.extentName(number));
        final int fd = libc.open(path(file), LibC.O_RDWR | LibC.O_CREAT | LibC.O_TRUNC | LibC.O_CLOEXEC, 0644);
        if (fd < 0)
        {
            logFailure("creating slab extent " + file, -fd);
            return false;
        }
        int rc = size(fd);
        if (rc == 0)
        {
            extentHeader.fill((byte)0);
            SlabDescriptor.putExtentHeader(extentHeader, new HeaderCrc(), slotBytes, objectBytes, slotsPerExtent, number);
            final long written = libc.pwriteFully(fd, extentHeader, 0);
            rc = written == extentHeader.byteSize() ? (fsync ? libc.fdatasync(fd) : 0) : (int)Math.min(written, -LibC.EIO);
        }
        if (rc != 0)
        {
            logFailure("preallocating slab extent " + file + " (" + extentFileBytes() + " bytes)", -rc);
            libc.close(fd);
            libc.unlink(path(file));
            return false;
        }
        final int directFd = openDirect(file);
        // Published to readers of these arrays by the monitor that hands out the extent's slots.
        bufferedFds[number] = fd;
        directFds[number] = directFd;
        return true;
    }

    /**
     * @return the sequence number of its frame: higher than any frame's written or found before
     */
    synchronized long nextSequence()
    {
        return sequence++;
    }

    /**
     * Makes a written slot the key's frame.
     *
     * @param keyHigh    the key's high half
     * @param keyLow     the key's low half
     * @param slot       a slot from {@link #allocate}, its frame written
     * @param length     the object's length
     * @param storedCrc  the CRC32C of its stored bytes ({@link SlabDescriptor#storedBytes})
     * @param form       its form ({@link SlabDescriptor#FORM_WHOLE}, ...)
     * @return the key's previous slot for the caller to clear ({@link #clear}), or {@link #PENDING} when
     *         there was none or its readers will
     */
    synchronized int publish(final long keyHigh, final long keyLow, final int slot, final int length, final int storedCrc, final int form)
    {
        final int previous = unmapLocked(keyHigh, keyLow);
        keys.putIfAbsent(keyHigh, keyLow, slot);
        lengths[slot] = length;
        storedCrcs[slot] = storedCrc;
        forms[slot] = (byte)form;
        state[slot] = VERIFIED;
        return previous == NOT_MAPPED ? PENDING : previous;
    }

    /**
     * Takes the key's frame away (a remove or an eviction).
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return its slot for the caller to clear, {@link #PENDING} when its readers will, or {@link #NOT_MAPPED}
     */
    synchronized int retire(final long keyHigh, final long keyLow)
    {
        return unmapLocked(keyHigh, keyLow);
    }

    /**
     * Takes the key's frame away only if it is still in {@code slot} (a read found it torn).
     *
     * @return as {@link #retire}
     */
    synchronized int retireIf(final long keyHigh, final long keyLow, final int slot)
    {
        return keys.find(keyHigh, keyLow) == slot ? unmapLocked(keyHigh, keyLow) : NOT_MAPPED;
    }

    private int unmapLocked(final long keyHigh, final long keyLow)
    {
        final int slot = keys.find(keyHigh, keyLow);
        if (slot == KeyIds.NONE)
        {
            return NOT_MAPPED;
        }
        keys.remove(keyHigh, keyLow);
        state[slot] = RETIRED;
        return readers[slot] == 0 ? slot : PENDING;
    }

    /**
     * Pins the key's frame for a read, so its slot is not reused until {@link #unpin}.
     *
     * @return the slot, or -1 when the key has no frame
     */
    synchronized int pin(final long keyHigh, final long keyLow)
    {
        final int slot = keys.find(keyHigh, keyLow);
        if (slot == KeyIds.NONE)
        {
            return -1;
        }
        readers[slot]++;
        return slot;
    }

    /**
     * @param slot a pinned slot
     * @return the slot for the caller to clear when it was retired meanwhile and this was its last reader, else {@link #PENDING}
     */
    synchronized int unpin(final int slot)
    {
        return --readers[slot] == 0 && state[slot] == RETIRED ? slot : PENDING;
    }

    /** @return whether a pinned slot's stored bytes still have to be checked against its CRC32C (found at start, not read since) */
    synchronized boolean unverified(final int slot)
    {
        return state[slot] == UNVERIFIED;
    }

    /** Records that a pinned slot's stored bytes matched their CRC32C. */
    synchronized void verified(final int slot)
    {
        if (state[slot] == UNVERIFIED)
        {
            state[slot] = VERIFIED;
        }
    }

    /** @return a slot's object length; stable while the slot is pinned or being written */
    synchronized int length(final int slot)
    {
        return lengths[slot];
    }

    /** @return the CRC32C of a slot's stored bytes; stable while the slot is pinned */
    synchronized int storedCrc(final int slot)
    {
        return storedCrcs[slot];
    }

    /** @return a slot's form ({@link SlabDescriptor#FORM_WHOLE}, ...); stable while the slot is pinned */
    synchronized int form(final int slot)
    {
        return forms[slot];
    }

    /**
     * What the slab holds for a key.
     *
     * @return OK for a frame of that size, CORRUPT for one of another size, NOT_FOUND
     */
    synchronized TierStatus exists(final long keyHigh, final long keyLow, final long expectedSize)
    {
        final int slot = keys.find(keyHigh, keyLow);
        if (slot == KeyIds.NONE)
        {
            return TierStatus.NOT_FOUND;
        }
        return lengths[slot] == expectedSize ? TierStatus.OK : TierStatus.CORRUPT;
    }

    /**
     * Clears a slot nobody uses any more (retired and unpinned, or written and abandoned) and frees it:
     * writes its tombstone first, and quarantines the slot instead when that fails.
     *
     * @param slot the slot
     */
    void clear(final int slot)
    {
        if (tombstone(slot))
        {
            release(slot);
        }
        else
        {
            synchronized (this)
            {
                state[slot] = QUARANTINED;
            }
        }
    }

    /**
     * Frees a retired, unpinned slot whose tombstone the caller wrote ({@link SlabFileStore#flushEvictions}: a run of
     * neighbouring slots in one write): what {@link #clear} does after its own write.
     *
     * @param slot the slot
     */
    synchronized void freeTombstoned(final int slot)
    {
        tombstonesWritten++;
        release(slot);
    }

    /**
     * Frees a slot no scan takes for a frame: one taken by {@link #allocate} and never written (it still holds what
     * it held when it was free), or one whose tombstone was written ({@link #clear}, {@link #freeTombstoned}).
     *
     * @param slot the slot
     */
    synchronized void release(final int slot)
    {
        state[slot] = FREE;
        markFree(slot);
    }

    /** Writes zeros over a slot's frame header, so that no scan finds its frame again: through the page cache, as every header is. */
    private boolean tombstone(final int slot)
    {
        final int extent = slot / slotsPerExtent;
        long written = libc.pwriteFully(bufferedFds[extent], zeroBlock, frameOffset(slot));
        if (written == zeroBlock.byteSize() && fsync)
        {
            // With fsync on, a power loss must not bring a cleared frame back either.
            final int rc = libc.fdatasync(bufferedFds[extent]);
            written = rc == 0 ? written : rc;
        }
        if (written == zeroBlock.byteSize())
        {
            synchronized (this)
            {
                tombstonesWritten++;
            }
            return true;
        }
        logFailure("clearing slot " + slot + " of " + dir.resolve(SlabDescriptor.extentName(extent))
            + " (it is not reused until the next start)", written < 0 ? (int)-written : LibC.EIO);
        return false;
    }

    /**
     * @param slot      a slot
     * @param useDirect whether the transfer would go with O_DIRECT
     * @return the descriptor to move its bytes through: the O_DIRECT one when asked for and open
     */
    int fd(final int slot, final boolean useDirect)
    {
        final int extent = slot / slotsPerExtent;
        return useDirect && directFds[extent] >= 0 ? directFds[extent] : bufferedFds[extent];
    }

    /** @return where a slot's frame header starts in its extent (in the header table) */
    long frameOffset(final int slot)
    {
        return SlabDescriptor.headerOffset(slot % slotsPerExtent);
    }

    /** @return where a slot's bytes start in its extent */
    long payloadOffset(final int slot)
    {
        return SlabDescriptor.payloadOffset(slot % slotsPerExtent, slotsPerExtent, slotBytes);
    }

    /** @return where a slot's tail block is in its extent: a spilled frame's last block */
    long tailOffset(final int slot)
    {
        return SlabDescriptor.tailOffset(slot % slotsPerExtent, slotsPerExtent, slotBytes);
    }

    /** @return the extent file holding a slot, for messages */
    Path extentOf(final int slot)
    {
        return dir.resolve(SlabDescriptor.extentName(slot / slotsPerExtent));
    }

    /** @return free slots in the extents made so far */
    synchronized int freeSlots()
    {
        return freeCount;
    }

    /** @return extents open */
    synchronized int extents()
    {
        return extents;
    }

    /** @return tombstones written since start, the scan's included */
    synchronized long tombstonesWritten()
    {
        return tombstonesWritten;
    }

    /** @return the slot holding a key's frame, or -1; for tests */
    synchronized int slotOf(final long keyHigh, final long keyLow)
    {
        return keys.find(keyHigh, keyLow);
    }

    private void logFailure(final String what, final int errno)
    {
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.ERROR, "posix tier " + name + ": " + what + " failed: " + libc.strerror(errno));
        }
    }

    /** Stops the grower, closes the extents and gives up the directory's lock; called once no worker runs. */
    void close()
    {
        final Thread thread;
        synchronized (this)
        {
            closed = true;
            thread = grower;
            notifyAll();
        }
        if (thread != null && thread != Thread.currentThread())
        {
            try
            {
                // At most one posix_fallocate in progress.
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        for (int e = 0; e < maxExtents; e++)
        {
            if (directFds[e] >= 0)
            {
                libc.close(directFds[e]);
                directFds[e] = -1;
            }
            if (bufferedFds[e] >= 0)
            {
                libc.close(bufferedFds[e]);
                bufferedFds[e] = -1;
            }
        }
        if (lockFd >= 0)
        {
            libc.close(lockFd);
            lockFd = -1;
        }
    }
}
