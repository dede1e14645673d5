package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.SlabTransport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * One worker's page I/O in the slab layout ({@code layout = slab}, {@link Slab}): a page is a frame in a
 * slot of a preallocated extent file, not a file of its own, so a write opens, creates and renames
 * nothing. The {@link FileStore} steps map onto slots: {@link #writeTemp} takes a free slot and writes
 * the frame there (its page in the slot, its header and trailer in the extent's header table);
 * {@link #publishTemp}, under the key's stripe lock, makes the slot the key's frame and clears the one it
 * replaces; {@link #discardTemp} clears and frees an abandoned slot; {@link #unlink} (a remove or an eviction) retires the key's slot.
 *
 * <p>With a transport ({@link SlabTransport}: an io_uring ring, or the 3FS tier's USRBIO rings), a claim's pages go
 * together, as with {@link UringFileStore}: the frame writes of up to
 * {@link #RING_PAGES} pages in one {@link SlabTransport#execute} (and with {@code fsync} their {@code fdatasync}s
 * in a second), every slot and header read of a read claim in one; slots' bytes move straight between the pool
 * slices and the extents, as READ_FIXED/WRITE_FIXED when the engine's transfer memory is registered with
 * the ring (the tier does that, as for the files layout). The frame headers of a claim's pages in
 * consecutive slots go as one write into the header table, through the page cache ({@link #addHeaderRuns}):
 * one request a page and one a run, where format 1's one vectored write of header block and payload a
 * page moved 4 KiB more each time.
 * Extents stay open, so there is no open or close per page either. A page whose batched transfer does
 * not simply succeed is done again alone ({@link SlabTransport#transfer}: {@code pread}/{@code pwrite} beside a ring), which gives its exact
 * status, logs it and turns O_DIRECT off when the filesystem refuses it (EINVAL). Without a transport every
 * page goes that way.
 *
 * <p>An engine frame's last block (its trailer and zeros) goes in the frame header
 * ({@link SlabDescriptor#FORM_TRIMMED}), so a page's write moves the page and no trailer block, and its
 * read takes the header too, checks it and puts the block back. An object whose last block holds more
 * is stored whole, that block in the slot's tail block ({@link SlabDescriptor#FORM_SPILLED}).
 *
 * <p>A frame header carries the CRC32C of the object's bytes outside it. When the writer knows the CRC32C
 * of the object's first bytes ({@link #knownCrc32c}: the engine's, recorded at commit), only the rest is read
 * for it and the two are combined ({@link FrameCrc#combine}); for a trimmed engine frame that is nothing
 * more. A wrong value given makes the frame fail its check on the first read after a restart, a miss, as a
 * torn frame does.
 *
 * <p>A read pins its slot ({@link Slab#pin}), so the slot is not reused before the read ends; the
 * stored bytes of a frame found by the start-up scan are checked against their CRC32C on its first read, and a
 * torn one is a miss (NOT_FOUND), its slot cleared.
 */
final class SlabFileStore implements FileStore
{
    /**
     * Pages of one claim with a ring. A slab page costs two SQEs and no file operation, so a claim is
     * deeper than the files layout's ({@link UringFileStore#RING_ENTRIES}): a queue of 64 pages is 64
     * transfers in flight, as deep as the device is asked to go, even with the one worker a host of 2
     * processors has (claims of 32 left it two rounds of 32, the ring drained between them); with more
     * workers a batch smaller than their claims is split among them.
     */
    static final int RING_PAGES = 64;
    /** SQ entries of a slab worker's ring: every slot and header read of a claim in one round. */
    static final int RING_ENTRIES = 2 * RING_PAGES;
    /** Operations of a claim at most: each page's slot transfer, its header or tail block, and a header write. */
    private static final int OPERATIONS_PER_PAGE = 3;

    /** Evicted slots whose tombstones one flush writes at most; a round that retires more flushes as it goes. */
    static final int EVICTED_PER_FLUSH = 64;

    private final String name;
    private final Slab slab;
    private final LibC libc;
    /** Moves a claim's bytes (a ring, or the 3FS tier's USRBIO), or null to move each page alone with pread/pwrite. */
    private final SlabTransport transport;
    private final DirectIo direct;
    private final IoErrorLog errors;
    private final boolean fsync;
    private final int batchSize;
    private final UringBatch batch;
    /** For each operation of {@link #batch}, whether it moves a page's bytes, not a frame header or tombstone. */
    private final boolean[] pageBytes;
    /** A frame header for each page of a claim, {@link SlabDescriptor#HEADER_ENTRY} bytes, written through the page cache. */
    private final MemorySegment[] headerEntries;
    private final HeaderCrc headerCrc = new HeaderCrc();
    private final FrameCrc frameCrc;
    private final int[] slots;
    private final boolean[] submitted;
    private final long[] keyHighs;
    private final long[] keyLows;
    private final int[] lengths;
    private final int[] crcs;
    private final long[] knownBytes;
    private final int[] knownCrcs;
    private final boolean[] paddings;
    /**
     * The slots an eviction round retired, whose tombstones are written at its end ({@link #flushEvictions}), neighbouring
     * slots of an extent in one write: a pwrite each had taken a sixth of the slab I/O thread's time in the demo.
     */
    private final MemorySegment zeroRun;
    private final int[] evictedSlots = new int[EVICTED_PER_FLUSH];
    private int evictedCount;
    private long tombstoneWrites;
    private final MemorySegment[] sources;
    private final int[] headerOps;
    /** The bytes of the header write each page's header went in: its run's. */
    private final long[] headerRunBytes;
    private long headerWrites;
    private final int[] payloadOps;
    /** Each page's second transfer, or -1: a trimmed frame's header read, or a spilled one's tail block. */
    private final int[] tailOps;
    private final int[] forms;
    private final int[] readSlots;
    /** Where a trimmed frame's header is read to, {@link SlabDescriptor#HEADER_ENTRY} bytes a page. */
    private final MemorySegment[] readEntries;

    /**
     * @param name           the tier's name, for messages
     * @param slab           the tier's slab
     * @param libc           the libc front
     * @param transport      this worker's batches (a ring, USRBIO), closed with the store, or null to move every page with pread/pwrite
     * @param direct         whether O_DIRECT is in use, shared by the tier's stores
     * @param fsync          whether to fdatasync a frame before it becomes the key's
     * @param arena          where the frame headers come from
     * @param transferMemory the engine's transfer memory, for checksums that allocate nothing
     * @param errors         where failures are logged
     */
    SlabFileStore(final String name, final Slab slab, final LibC libc, final SlabTransport transport, final DirectIo direct, final boolean fsync,
                  final Arena arena, final Optional<MemorySegment> transferMemory, final IoErrorLog errors)
    {
        this.name = name;
        this.slab = slab;
        this.libc = libc;
        this.transport = transport;
        this.direct = direct;
        this.fsync = fsync;
        this.errors = errors;
        batchSize = transport == null ? 1 : RING_PAGES;
        // A page's slot, tail and header transfers, then in a second round its fdatasync.
        batch = transport == null ? null : new UringBatch(OPERATIONS_PER_PAGE * batchSize);
        pageBytes = new boolean[OPERATIONS_PER_PAGE * batchSize];
        final MemorySegment entries = arena.allocate((long)batchSize * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
        final MemorySegment read = arena.allocate((long)batchSize * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
        headerEntries = new MemorySegment[batchSize];
        readEntries = new MemorySegment[batchSize];
        for (int k = 0; k < batchSize; k++)
        {
            headerEntries[k] = entries.asSlice((long)k * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
            readEntries[k] = read.asSlice((long)k * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
        }
        frameCrc = new FrameCrc(transferMemory, slab.objectBytes);
        zeroRun = arena.allocate((long)EVICTED_PER_FLUSH * SlabDescriptor.HEADER_ENTRY, SlabDescriptor.HEADER_ENTRY);
        slots = new int[batchSize];
        java.util.Arrays.fill(slots, -1);
        submitted = new boolean[batchSize];
        keyHighs = new long[batchSize];
        keyLows = new long[batchSize];
        lengths = new int[batchSize];
        crcs = new int[batchSize];
        knownBytes = new long[batchSize];
        knownCrcs = new int[batchSize];
        paddings = new boolean[batchSize];
        sources = new MemorySegment[batchSize];
        headerOps = new int[batchSize];
        headerRunBytes = new long[batchSize];
        payloadOps = new int[batchSize];
        tailOps = new int[batchSize];
        forms = new int[batchSize];
        readSlots = new int[batchSize];
    }

    @Override
    public TierStatus exists(final long keyHigh, final long keyLow, final long expectedSize)
    {
        return slab.exists(keyHigh, keyLow, expectedSize);
    }

    // ------------------------------------------------------------------------------------------------
    // Reads
    // ------------------------------------------------------------------------------------------------

    @Override
    public TierStatus read(final long keyHigh, final long keyLow, final MemorySegment destination)
    {
        final int slot = slab.pin(keyHigh, keyLow);
        if (slot < 0)
        {
            return TierStatus.NOT_FOUND;
        }
        try
        {
            final int length = slab.length(slot);
            if (length != destination.byteSize())
            {
                return TierStatus.CORRUPT;
            }
            final int form = slab.form(slot);
            final long inSlot = Math.min(length, slab.slotBytes);
            long read = pread(slot, destination, 0, inSlot, slab.payloadOffset(slot));
            long expected = inSlot;
            if (read == expected && form != SlabDescriptor.FORM_WHOLE)
            {
                final boolean trimmed = form == SlabDescriptor.FORM_TRIMMED;
                read = trimmed ? libc.preadFully(slab.fd(slot, false), readEntries[0], slab.frameOffset(slot))
                    : pread(slot, destination, inSlot, length - inSlot, slab.tailOffset(slot));
                expected = trimmed ? SlabDescriptor.HEADER_ENTRY : length - inSlot;
            }
            if (read != expected)
            {
                logFailure("reading slot " + slot + " of " + slab.extentOf(slot), read < 0 ? (int)-read : LibC.EIO,
                    read >= 0 ? " (" + read + " of " + expected + " bytes)" : "");
                return TierStatus.IO_ERROR;
            }
            if (form == SlabDescriptor.FORM_TRIMMED && !restoreTail(keyHigh, keyLow, slot, readEntries[0], destination))
            {
                return TierStatus.NOT_FOUND;
            }
            return checked(keyHigh, keyLow, slot, destination);
        }
        finally
        {
            done(slot);
        }
    }

    private long pread(final int slot, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        return transfer(false, slot, buffer, from, length, offset);
    }

    /**
     * A pread or pwrite of {@code length} bytes from {@code from} in {@code buffer}, with O_DIRECT where it applies,
     * buffered again when the filesystem refuses it.
     *
     * @return bytes moved, or {@code -errno}
     */
    private long transfer(final boolean write, final int slot, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        final boolean useDirect = appliesTo(buffer.address() + from, length, offset);
        long moved = move(write, slab.fd(slot, useDirect), buffer, from, length, offset);
        if (useDirect && moved == -LibC.EINVAL)
        {
            direct.refused((write ? "a write to " : "a read of ") + slab.extentOf(slot));
            moved = move(write, slab.fd(slot, false), buffer, from, length, offset);
        }
        return moved;
    }

    private long move(final boolean write, final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        if (transport != null)
        {
            return transport.transfer(write, fd, buffer, from, length, offset);
        }
        return write ? libc.pwriteFully(fd, buffer, from, length, offset) : libc.preadFully(fd, buffer, from, length, offset);
    }

    /**
     * Puts a trimmed frame's last block back into {@code object} from its header, read just now: a header that is not
     * the slot's frame's whole one (torn or overwritten on disk since) makes the read a miss and clears the slot.
     *
     * @return whether the object is whole
     */
    private boolean restoreTail(final long keyHigh, final long keyLow, final int slot, final MemorySegment entry, final MemorySegment object)
    {
        if (SlabDescriptor.isFrame(entry, headerCrc) && SlabDescriptor.frameKeyHigh(entry) == keyHigh && SlabDescriptor.frameKeyLow(entry) == keyLow
            && SlabDescriptor.frameLength(entry) == object.byteSize() && SlabDescriptor.frameForm(entry) == SlabDescriptor.FORM_TRIMMED
            && SlabDescriptor.frameStoredCrc(entry) == slab.storedCrc(slot))
        {
            SlabDescriptor.restoreTail(entry, object, slab.slotBytes);
            return true;
        }
        slab.retireIf(keyHigh, keyLow, slot);
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, "posix tier " + name + ": the frame header of key " + Long.toHexString(keyHigh) + ":"
                + Long.toHexString(keyLow) + " in slot " + slot + " of " + slab.extentOf(slot)
                + " is not the one written (its CRC32C, key, length or form differ on disk): a miss, and the slot is cleared");
        }
        return false;
    }

    @Override
    public int readBatchSize()
    {
        return batchSize;
    }

    @Override
    public void readPages(final long[] keyHigh, final long[] keyLow, final MemorySegment[] destinations, final int count,
                          final TierStatus[] statuses)
    {
        if (transport == null)
        {
            FileStore.super.readPages(keyHigh, keyLow, destinations, count, statuses);
            return;
        }
        batch.clear();
        try
        {
            for (int k = 0; k < count; k++)
            {
                statuses[k] = null;
                readSlots[k] = slab.pin(keyHigh[k], keyLow[k]);
                if (readSlots[k] < 0)
                {
                    statuses[k] = TierStatus.NOT_FOUND;
                    continue;
                }
                final MemorySegment destination = destinations[k];
                if (slab.length(readSlots[k]) != destination.byteSize())
                {
                    statuses[k] = TierStatus.CORRUPT;
                    continue;
                }
                addReads(k, readSlots[k], destination);
            }
            if (batch.size() > 0)
            {
                transport.execute(batch, pageBytes);
            }
            for (int k = 0; k < count; k++)
            {
                if (statuses[k] == null && readWhole(k, destinations[k].byteSize()))
                {
                    statuses[k] = forms[k] == SlabDescriptor.FORM_TRIMMED
                        && !restoreTail(keyHigh[k], keyLow[k], readSlots[k], readEntries[k], destinations[k])
                        ? TierStatus.NOT_FOUND : checked(keyHigh[k], keyLow[k], readSlots[k], destinations[k]);
                }
            }
        }
        finally
        {
            for (int k = 0; k < count; k++)
            {
                if (readSlots[k] >= 0)
                {
                    done(readSlots[k]);
                    readSlots[k] = -1;
                }
            }
        }
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == null)
            {
                // Anything but a plain success: again alone, for its exact status and log line.
                statuses[k] = read(keyHigh[k], keyLow[k], destinations[k]);
            }
        }
    }

    /** Marks operation {@code op} as a page's bytes or not, for the transport ({@link SlabTransport#execute}). */
    private int page(final int op, final boolean bytes)
    {
        pageBytes[op] = bytes;
        return op;
    }

    /** Adds a pinned slot's reads to the batch: its slot's bytes, and a trimmed frame's header or a spilled one's tail block. */
    private void addReads(final int k, final int slot, final MemorySegment destination)
    {
        final long length = destination.byteSize();
        final long inSlot = Math.min(length, slab.slotBytes);
        final long offset = slab.payloadOffset(slot);
        final long address = destination.address();
        forms[k] = slab.form(slot);
        payloadOps[k] = page(batch.add(UringBatch.READ, slab.fd(slot, appliesTo(address, inSlot, offset)), false, address, inSlot, offset), true);
        tailOps[k] = -1;
        if (forms[k] == SlabDescriptor.FORM_TRIMMED)
        {
            tailOps[k] = page(batch.add(UringBatch.READ, slab.fd(slot, false), false, readEntries[k].address(), SlabDescriptor.HEADER_ENTRY,
                slab.frameOffset(slot)), false);
        }
        else if (forms[k] == SlabDescriptor.FORM_SPILLED)
        {
            final long tail = slab.tailOffset(slot);
            tailOps[k] = page(batch.add(UringBatch.READ, slab.fd(slot, appliesTo(address + inSlot, length - inSlot, tail)), false,
                address + inSlot, length - inSlot, tail), true);
        }
    }

    /** @return whether page {@code k}'s transfers of the batch just run all came whole */
    private boolean readWhole(final int k, final long length)
    {
        final long inSlot = Math.min(length, slab.slotBytes);
        if (batch.result(payloadOps[k]) != inSlot)
        {
            return false;
        }
        return switch (forms[k])
        {
            case SlabDescriptor.FORM_TRIMMED -> batch.result(tailOps[k]) == SlabDescriptor.HEADER_ENTRY;
            case SlabDescriptor.FORM_SPILLED -> batch.result(tailOps[k]) == length - inSlot;
            default -> true;
        };
    }

    /** An object read whole: OK, unless it is a frame from before the start whose CRC32C does not match (then NOT_FOUND). */
    private TierStatus checked(final long keyHigh, final long keyLow, final int slot, final MemorySegment payload)
    {
        if (!slab.unverified(slot))
        {
            return TierStatus.OK;
        }
        if (frameCrc.of(payload, SlabDescriptor.storedBytes(slab.form(slot), payload.byteSize(), slab.slotBytes)) == slab.storedCrc(slot))
        {
            slab.verified(slot);
            return TierStatus.OK;
        }
        // A write a crash tore: its header made it to the extent, not all of its payload. The pin held keeps it until done().
        slab.retireIf(keyHigh, keyLow, slot);
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, "posix tier " + name + ": the frame of key " + Long.toHexString(keyHigh) + ":"
                + Long.toHexString(keyLow) + " in slot " + slot + " of " + slab.extentOf(slot)
                + " does not match its CRC32C (a write torn by a crash before this start): a miss, and the slot is cleared");
        }
        return TierStatus.NOT_FOUND;
    }

    private void done(final int slot)
    {
        final int clear = slab.unpin(slot);
        if (clear >= 0)
        {
            slab.clear(clear);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Writes
    // ------------------------------------------------------------------------------------------------

    @Override
    public int writeBatchSize()
    {
        return batchSize;
    }

    /**
     * Kept for the slot's next frame: its CRC32C is then extended from the engine's over the rest of the page, not
     * computed whole, and a padded trailer block is trimmed without reading it (SPI 1.3).
     */
    @Override
    public void nextWrite(final int slot, final long bytes, final int crc, final boolean padding)
    {
        knownBytes[slot] = bytes;
        knownCrcs[slot] = crc;
        paddings[slot] = padding;
    }

    @Override
    public TierStatus writeTemp(final int slot, final long keyHigh, final long keyLow, final MemorySegment source)
    {
        final TierStatus refused = stage(slot, keyHigh, keyLow, source);
        return refused != null ? refused : writeAlone(slot);
    }

    @Override
    public void writeTemps(final long[] keyHigh, final long[] keyLow, final MemorySegment[] sources, final int count,
                           final TierStatus[] statuses)
    {
        if (transport == null)
        {
            FileStore.super.writeTemps(keyHigh, keyLow, sources, count, statuses);
            return;
        }
        batch.clear();
        for (int k = 0; k < count; k++)
        {
            statuses[k] = stage(k, keyHigh[k], keyLow[k], sources[k]);
            if (statuses[k] == null)
            {
                addWrites(k);
            }
        }
        if (batch.size() == 0)
        {
            return;
        }
        addHeaderRuns(count, statuses);
        transport.execute(batch, pageBytes);
        boolean anyWritten = false;
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == null)
            {
                final long inSlot = Math.min(lengths[k], slab.slotBytes);
                final boolean whole = batch.result(headerOps[k]) == headerRunBytes[k] && batch.result(payloadOps[k]) == inSlot
                    && (tailOps[k] < 0 || batch.result(tailOps[k]) == lengths[k] - inSlot);
                statuses[k] = whole ? TierStatus.OK : TierStatus.IO_ERROR;
                anyWritten |= whole;
            }
        }
        if (fsync && anyWritten)
        {
            batch.clear();
            for (int k = 0; k < count; k++)
            {
                if (statuses[k] == TierStatus.OK)
                {
                    payloadOps[k] = page(batch.addFsync(slab.fd(slots[k], false), true), false);
                }
            }
            transport.execute(batch, pageBytes);
            for (int k = 0; k < count; k++)
            {
                if (statuses[k] == TierStatus.OK && batch.result(payloadOps[k]) != 0)
                {
                    statuses[k] = TierStatus.IO_ERROR;
                }
            }
        }
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == TierStatus.IO_ERROR && slots[k] >= 0)
            {
                // Again alone, in the slot it has, for its exact status and log line.
                statuses[k] = writeAlone(k);
            }
        }
    }

    /** Adds a staged page's writes to the batch: its slot's bytes, and a spilled frame's tail block. */
    private void addWrites(final int k)
    {
        final int slot = slots[k];
        final long offset = slab.payloadOffset(slot);
        final long address = sources[k].address();
        final long inSlot = Math.min(lengths[k], slab.slotBytes);
        submitted[k] = true;
        payloadOps[k] = page(batch.add(UringBatch.WRITE, slab.fd(slot, appliesTo(address, inSlot, offset)), false, address, inSlot, offset), true);
        tailOps[k] = -1;
        if (forms[k] == SlabDescriptor.FORM_SPILLED)
        {
            final long tail = slab.tailOffset(slot);
            tailOps[k] = page(batch.add(UringBatch.WRITE, slab.fd(slot, appliesTo(address + inSlot, lengths[k] - inSlot, tail)), false,
                address + inSlot, lengths[k] - inSlot, tail), true);
        }
    }

    /**
     * Adds the claim's frame headers to the batch: pages in consecutive slots of one extent (the lowest free slots go
     * first, so a claim's usually are) have their headers side by side in the extent's table, as they are in
     * {@link #headerEntries}, and go as one write; a claim of 64 pages is then one header write and 64 payload writes,
     * where format 1 wrote a 4 KiB header block with each payload.
     */
    private void addHeaderRuns(final int count, final TierStatus[] statuses)
    {
        int k = 0;
        while (k < count)
        {
            if (statuses[k] != null)
            {
                k++;
                continue;
            }
            final int extent = slots[k] / slab.slotsPerExtent;
            int end = k + 1;
            while (end < count && statuses[end] == null && slots[end] == slots[end - 1] + 1 && slots[end] / slab.slotsPerExtent == extent)
            {
                end++;
            }
            final long bytes = (long)(end - k) * SlabDescriptor.HEADER_ENTRY;
            final int op = page(batch.add(UringBatch.WRITE, slab.fd(slots[k], false), false, headerEntries[k].address(), bytes, slab.frameOffset(slots[k])), false);
            for (int j = k; j < end; j++)
            {
                headerOps[j] = op;
                headerRunBytes[j] = bytes;
            }
            headerWrites++;
            k = end;
        }
    }

    /**
     * Takes a slot for a page and prepares its frame header.
     *
     * @return null when the frame is ready to write, else the page's status (nothing was taken)
     */
    private TierStatus stage(final int k, final long keyHigh, final long keyLow, final MemorySegment source)
    {
        slots[k] = -1;
        submitted[k] = false;
        final long known = knownBytes[k];
        knownBytes[k] = 0;
        final boolean padding = paddings[k];
        paddings[k] = false;
        final long length = source.byteSize();
        if (length <= 0 || length > slab.objectBytes)
        {
            if (errors.shouldLog())
            {
                errors.log(System.Logger.Level.ERROR, "posix tier " + name + ": a page of " + length + " bytes does not fit the slab's "
                    + slab.objectBytes + "-byte objects (the object size the tier was started with)");
            }
            return TierStatus.IO_ERROR;
        }
        final int slot = slab.allocate();
        if (slot < 0)
        {
            return TierStatus.NO_SPACE;
        }
        slots[k] = slot;
        keyHighs[k] = keyHigh;
        keyLows[k] = keyLow;
        lengths[k] = (int)length;
        sources[k] = source;
        final int form = length <= slab.slotBytes ? SlabDescriptor.FORM_WHOLE
            : padding && length - TrailerBlock.BYTES == slab.slotBytes || SlabDescriptor.trimmable(source, slab.slotBytes)
                ? SlabDescriptor.FORM_TRIMMED : SlabDescriptor.FORM_SPILLED;
        forms[k] = form;
        crcs[k] = frameCrc.of(source, SlabDescriptor.storedBytes(form, length, slab.slotBytes), known, knownCrcs[k]);
        SlabDescriptor.putFrameHeader(headerEntries[k], headerCrc, (int)length, keyHigh, keyLow, slab.nextSequence(), crcs[k], form, source,
            slab.slotBytes);
        return null;
    }

    /** Writes a staged frame with pwrite: its exact status; on failure the slot is cleared and freed. */
    private TierStatus writeAlone(final int k)
    {
        final int slot = slots[k];
        submitted[k] = true;
        long result = libc.pwriteFully(slab.fd(slot, false), headerEntries[k], slab.frameOffset(slot));
        long expected = SlabDescriptor.HEADER_ENTRY;
        final long inSlot = Math.min(lengths[k], slab.slotBytes);
        if (result == expected)
        {
            result = write(slot, sources[k], 0, inSlot, slab.payloadOffset(slot));
            expected = inSlot;
        }
        if (result == expected && forms[k] == SlabDescriptor.FORM_SPILLED)
        {
            result = write(slot, sources[k], inSlot, lengths[k] - inSlot, slab.tailOffset(slot));
            expected = lengths[k] - inSlot;
        }
        if (result == expected && fsync)
        {
            result = libc.fdatasync(slab.fd(slot, false));
            expected = 0;
        }
        if (result == expected)
        {
            return TierStatus.OK;
        }
        final int errno = result < 0 ? (int)-result : LibC.EIO;
        logFailure("writing slot " + slot + " of " + slab.extentOf(slot), errno, result >= 0 ? " (short write)" : "");
        discardTemp(k);
        return errno == LibC.ENOSPC || errno == LibC.EDQUOT ? TierStatus.NO_SPACE : TierStatus.IO_ERROR;
    }

    private long write(final int slot, final MemorySegment source, final long from, final long length, final long offset)
    {
        return transfer(true, slot, source, from, length, offset);
    }

    @Override
    public TierStatus publishTemp(final int slot)
    {
        final int taken = slots[slot];
        slots[slot] = -1;
        sources[slot] = null;
        final int previous = slab.publish(keyHighs[slot], keyLows[slot], taken, lengths[slot], crcs[slot], forms[slot]);
        if (previous >= 0)
        {
            slab.clear(previous);
        }
        return TierStatus.OK;
    }

    @Override
    public void discardTemp(final int slot)
    {
        final int taken = slots[slot];
        if (taken < 0)
        {
            return;
        }
        slots[slot] = -1;
        sources[slot] = null;
        if (submitted[slot])
        {
            // Its header may have reached the extent: cleared like any frame.
            slab.clear(taken);
        }
        else
        {
            slab.release(taken);
        }
    }

    @Override
    public TierStatus unlink(final long keyHigh, final long keyLow)
    {
        final int slot = slab.retire(keyHigh, keyLow);
        if (slot == Slab.NOT_MAPPED)
        {
            return TierStatus.NOT_FOUND;
        }
        if (slot >= 0)
        {
            slab.clear(slot);
        }
        return TierStatus.OK;
    }

    /** Retires the key's frame now (no reader finds it again) and leaves its slot's tombstone to {@link #flushEvictions}. */
    @Override
    public TierStatus unlinkEvicted(final long keyHigh, final long keyLow)
    {
        if (fsync)
        {
            return unlink(keyHigh, keyLow);
        }
        final int slot = slab.retire(keyHigh, keyLow);
        if (slot == Slab.NOT_MAPPED)
        {
            return TierStatus.NOT_FOUND;
        }
        if (slot >= 0)
        {
            if (evictedCount == evictedSlots.length)
            {
                flushEvictions();
            }
            evictedSlots[evictedCount++] = slot;
        }
        return TierStatus.OK;
    }

    /**
     * Writes the tombstones of the slots {@link #unlinkEvicted} retired, a run of neighbouring slots of an extent in one
     * pwrite of zeros, and frees each slot whose tombstone was written; a slot whose run failed is cleared again alone,
     * which logs why and quarantines it when that fails too. Until then a retired slot is neither found nor reused, as a
     * slot with a reader is not. Plain pwrites on this thread, not the ring: a buffered write of 128 bytes is a short
     * copy into the page cache, which a ring would hand to a kernel worker.
     */
    @Override
    public void flushEvictions()
    {
        final int count = evictedCount;
        if (count == 0)
        {
            return;
        }
        evictedCount = 0;
        sortSlots(count);
        int k = 0;
        while (k < count)
        {
            final int extent = evictedSlots[k] / slab.slotsPerExtent;
            int end = k + 1;
            while (end < count && evictedSlots[end] == evictedSlots[end - 1] + 1 && evictedSlots[end] / slab.slotsPerExtent == extent)
            {
                end++;
            }
            final long bytes = (long)(end - k) * SlabDescriptor.HEADER_ENTRY;
            tombstoneWrites++;
            final boolean written = libc.pwriteFully(slab.fd(evictedSlots[k], false), zeroRun, 0, bytes, slab.frameOffset(evictedSlots[k])) == bytes;
            for (int j = k; j < end; j++)
            {
                if (written)
                {
                    slab.freeTombstoned(evictedSlots[j]);
                }
                else
                {
                    slab.clear(evictedSlots[j]);
                }
            }
            k = end;
        }
    }

    /** Insertion sort of the first {@code count} evicted slots: at most {@link #EVICTED_PER_FLUSH}, and no allocation. */
    private void sortSlots(final int count)
    {
        for (int i = 1; i < count; i++)
        {
            final int slot = evictedSlots[i];
            int j = i - 1;
            while (j >= 0 && evictedSlots[j] > slot)
            {
                evictedSlots[j + 1] = evictedSlots[j];
                j--;
            }
            evictedSlots[j + 1] = slot;
        }
    }

    /** @return tombstone writes for evicted slots: one for each run of neighbouring slots in a round */
    long tombstoneWrites()
    {
        return tombstoneWrites;
    }

    @Override
    public long directoriesMade()
    {
        return 0;
    }

    /** @return header writes submitted with a ring: one for each run of consecutive slots in a claim */
    long headerWrites()
    {
        return headerWrites;
    }

    /** @return page transfers this ring ran as READ_FIXED/WRITE_FIXED, 0 without a ring */
    long fixedBufferOperations()
    {
        return transport == null ? 0 : transport.fixedBufferOperations();
    }

    private boolean appliesTo(final long address, final long length, final long fileOffset)
    {
        return direct.appliesTo(address, length) && (fileOffset & (direct.lengthAlignment() - 1)) == 0;
    }

    private void logFailure(final String what, final int errno, final String detail)
    {
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.ERROR, "posix tier " + name + ": " + what + " failed: " + libc.strerror(errno) + detail);
        }
    }

    @Override
    public void close()
    {
        flushEvictions();
        if (transport != null)
        {
            transport.close();
        }
    }
}
