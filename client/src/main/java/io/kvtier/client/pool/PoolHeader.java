package io.kvtier.client.pool;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.INT_HANDLE;
import static io.kvtier.client.protocol.LittleEndian.LONG;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;

/**
 * Reads and writes the pool file's header as {@link PagePoolDescriptor} lays it out: the layout a
 * client maps by, the pool's state, epoch and heartbeat. Needs nothing but the mapped header, so
 * any process that maps the file can use it.
 */
public final class PoolHeader
{
    private final MemorySegment header;

    /**
     * @param header the first {@link PagePoolDescriptor#HEADER_LENGTH} bytes of a pool file, mapped
     */
    public PoolHeader(final MemorySegment header)
    {
        this.header = header;
    }

    /**
     * Writes a new pool's header. The layout version goes last, with release semantics: it is the ready
     * flag, and a process that reads it with acquire semantics sees every field before it.
     *
     * @param header          the header region of a new file
     * @param layout          where each region lies
     * @param epoch           the pool's epoch
     * @param clientTimeoutMs a direct client silent this long loses its pins
     */
    public static void format(final MemorySegment header, final PagePoolDescriptor.Layout layout, final long epoch, final int clientTimeoutMs)
    {
        header.set(LONG, PagePoolDescriptor.MAGIC_OFFSET, PagePoolDescriptor.MAGIC);
        header.set(LONG, PagePoolDescriptor.PAGE_SIZE_OFFSET, layout.pageSize());
        header.set(LONG, PagePoolDescriptor.FRAME_LENGTH_OFFSET, layout.frameLength());
        header.set(LONG, PagePoolDescriptor.PAGE_COUNT_OFFSET, layout.pageCount());
        header.set(LONG, PagePoolDescriptor.METADATA_OFFSET_OFFSET, layout.metadataOffset());
        header.set(LONG, PagePoolDescriptor.INDEX_OFFSET_OFFSET, layout.indexOffset());
        header.set(LONG, PagePoolDescriptor.INDEX_LENGTH_OFFSET, layout.indexLength());
        header.set(LONG, PagePoolDescriptor.DATA_OFFSET_OFFSET, layout.dataOffset());
        header.set(LONG, PagePoolDescriptor.FILE_LENGTH_OFFSET, layout.fileLength());
        header.set(LONG, PagePoolDescriptor.COUNTERS_OFFSET_OFFSET, layout.countersOffset());
        header.set(LONG, PagePoolDescriptor.COUNTERS_LENGTH_OFFSET, layout.countersLength());
        header.set(LONG, PagePoolDescriptor.CREATOR_PID_OFFSET, ProcessHandle.current().pid());
        header.set(LONG, PagePoolDescriptor.START_TIME_OFFSET, System.currentTimeMillis());
        header.set(LONG, PagePoolDescriptor.EPOCH_OFFSET, epoch);
        header.set(INT, PagePoolDescriptor.CLIENT_SLOT_COUNT_OFFSET, layout.clientSlots());
        header.set(INT, PagePoolDescriptor.CLIENT_TIMEOUT_MS_OFFSET, clientTimeoutMs);
        header.set(LONG, PagePoolDescriptor.CLIENT_SLOTS_OFFSET_OFFSET, layout.clientSlotsOffset());
        header.set(LONG, PagePoolDescriptor.PIN_TABLE_OFFSET_OFFSET, layout.pinTableOffset());
        header.set(LONG, PagePoolDescriptor.PIN_TABLE_LENGTH_OFFSET, layout.pinTableLength());
        LONG_HANDLE.setRelease(header, (long)PagePoolDescriptor.HEARTBEAT_OFFSET, System.currentTimeMillis());
        header.set(INT, PagePoolDescriptor.POOL_STATE_OFFSET, PagePoolDescriptor.STATE_OPEN);
        INT_HANDLE.setRelease(header, (long)PagePoolDescriptor.LAYOUT_VERSION_OFFSET, PagePoolDescriptor.LAYOUT_VERSION);
    }

    /**
     * Checks magic and layout version, then reads where each region lies.
     *
     * @param path   the file, for messages
     * @return the layout recorded in the header
     * @throws IllegalStateException if this is not a ready pool of this layout version
     */
    public PagePoolDescriptor.Layout readLayout(final Path path)
    {
        final long magic = header.get(LONG, PagePoolDescriptor.MAGIC_OFFSET);
        if (magic != PagePoolDescriptor.MAGIC)
        {
            throw new IllegalStateException(path + " is not a kvtier pool (magic 0x" + Long.toHexString(magic) + ")");
        }
        final int version = layoutVersionAcquire();
        if (version != PagePoolDescriptor.LAYOUT_VERSION)
        {
            throw new IllegalStateException(path + " has pool layout version " + version + ", this build reads version "
                + PagePoolDescriptor.LAYOUT_VERSION + (version == 0 ? " (the pool is still being created)" : ""));
        }
        return new PagePoolDescriptor.Layout(
            header.get(LONG, PagePoolDescriptor.PAGE_SIZE_OFFSET),
            header.get(LONG, PagePoolDescriptor.FRAME_LENGTH_OFFSET),
            (int)header.get(LONG, PagePoolDescriptor.PAGE_COUNT_OFFSET),
            header.get(INT, PagePoolDescriptor.CLIENT_SLOT_COUNT_OFFSET),
            header.get(LONG, PagePoolDescriptor.COUNTERS_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.COUNTERS_LENGTH_OFFSET),
            header.get(LONG, PagePoolDescriptor.CLIENT_SLOTS_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.METADATA_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.PIN_TABLE_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.PIN_TABLE_LENGTH_OFFSET),
            header.get(LONG, PagePoolDescriptor.INDEX_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.INDEX_LENGTH_OFFSET),
            header.get(LONG, PagePoolDescriptor.DATA_OFFSET_OFFSET),
            header.get(LONG, PagePoolDescriptor.FILE_LENGTH_OFFSET));
    }

    /** @return the layout version, read with acquire semantics (0 while the pool is being created) */
    public int layoutVersionAcquire()
    {
        return (int)INT_HANDLE.getAcquire(header, (long)PagePoolDescriptor.LAYOUT_VERSION_OFFSET);
    }

    /** @return the pool state (open, closed, superseded), read with acquire semantics */
    public int poolStateAcquire()
    {
        return (int)INT_HANDLE.getAcquire(header, (long)PagePoolDescriptor.POOL_STATE_OFFSET);
    }

    /** @param state the pool state, written with release semantics */
    public void poolStateRelease(final int state)
    {
        INT_HANDLE.setRelease(header, (long)PagePoolDescriptor.POOL_STATE_OFFSET, state);
    }

    /** @return the pool's epoch: it changes when a new file replaces a dead engine's pool */
    public long epochPlain()
    {
        return header.get(LONG, PagePoolDescriptor.EPOCH_OFFSET);
    }

    /** @return the PID of the engine that created the pool */
    public long creatorPidPlain()
    {
        return header.get(LONG, PagePoolDescriptor.CREATOR_PID_OFFSET);
    }

    /** @return the client timeout recorded in the header, ms */
    public int clientTimeoutMillisPlain()
    {
        return header.get(INT, PagePoolDescriptor.CLIENT_TIMEOUT_MS_OFFSET);
    }

    /** @param epochMillis the current time: liveness for clients and for a would-be second engine */
    public void heartbeatRelease(final long epochMillis)
    {
        LONG_HANDLE.setRelease(header, (long)PagePoolDescriptor.HEARTBEAT_OFFSET, epochMillis);
    }

    /** @return the last heartbeat, epoch ms, read with acquire semantics */
    public long heartbeatAcquire()
    {
        return (long)LONG_HANDLE.getAcquire(header, (long)PagePoolDescriptor.HEARTBEAT_OFFSET);
    }
}
