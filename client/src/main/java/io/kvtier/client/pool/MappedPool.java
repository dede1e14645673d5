package io.kvtier.client.pool;

import io.kvtier.collections.KeyTable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A running engine's pool file, mapped by another process the way the engine laid it out: the layout
 * comes from the header alone ({@link PagePoolDescriptor}), and each region is read through the class
 * beside its descriptor ({@link PoolHeader}, {@link PageMetadataReader}, {@link ClientSlots},
 * {@link PinTable}, {@link CountersReader} over {@link #counters()}, and the key index's
 * {@link KeyTable}). It owns nothing: the engine that created the file formats, publishes and deletes
 * it; this class only maps and unmaps it.
 */
public final class MappedPool implements AutoCloseable
{
    private final Path path;
    private final Arena arena;
    private final FileChannel channel;
    private final MemorySegment file;
    private final PagePoolDescriptor.Layout layout;
    private final PoolHeader header;
    private final PageMetadataReader metadata;
    private final ClientSlots clientSlots;
    private final PinTable pinTable;
    private final KeyTable index;
    private final MemorySegment[] payloads;
    private boolean closed;

    private MappedPool(final Path path, final Arena arena, final FileChannel channel, final MemorySegment file, final PagePoolDescriptor.Layout layout,
                       final KeyTable index)
    {
        this.path = path;
        this.arena = arena;
        this.channel = channel;
        this.file = file;
        this.layout = layout;
        this.index = index;
        this.header = new PoolHeader(file.asSlice(0, PagePoolDescriptor.HEADER_LENGTH));
        this.metadata = new PageMetadataReader(
            file.asSlice(layout.metadataOffset(), (long)layout.pageCount() * PageMetadataDescriptor.ENTRY_LENGTH), layout.pageCount());
        this.clientSlots = new ClientSlots(
            file.asSlice(layout.clientSlotsOffset(), (long)layout.clientSlots() * ClientSlotDescriptor.SLOT_LENGTH), layout.clientSlots());
        this.pinTable = new PinTable(file.asSlice(layout.pinTableOffset(), layout.pinTableLength()), layout.clientSlots());
        // One slice per page, made once, so that handing out a payload allocates nothing.
        this.payloads = new MemorySegment[layout.pageCount()];
        for (int page = 0; page < payloads.length; page++)
        {
            payloads[page] = file.asSlice(layout.dataOffset() + (long)page * layout.frameLength(), layout.pageSize());
        }
    }

    /**
     * Maps an existing pool: reads its layout from the header, owns nothing.
     *
     * @param path the pool file
     * @return the mapped pool
     * @throws IOException           if the file cannot be mapped
     * @throws IllegalStateException if the file is not a ready pool of this layout version
     */
    public static MappedPool attach(final Path path) throws IOException
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
            final MemorySegment headerRegion = channel.map(FileChannel.MapMode.READ_ONLY, 0, PagePoolDescriptor.HEADER_LENGTH, arena);
            final PagePoolDescriptor.Layout layout = new PoolHeader(headerRegion).readLayout(path);
            final MemorySegment file = channel.map(FileChannel.MapMode.READ_WRITE, 0, layout.fileLength(), arena);
            final KeyTable index = KeyTable.attach(file.asSlice(layout.indexOffset(), layout.indexLength()));
            return new MappedPool(path, arena, channel, file, layout, index);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            channel.close();
            throw ex;
        }
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

    /** @return the header: state, epoch, heartbeat */
    public PoolHeader header()
    {
        return header;
    }

    /** @return the pages' metadata, read side */
    public PageMetadataReader metadata()
    {
        return metadata;
    }

    /** @return the slots of processes that pin pages directly */
    public ClientSlots clientSlots()
    {
        return clientSlots;
    }

    /** @return the pins those processes hold */
    public PinTable pinTable()
    {
        return pinTable;
    }

    /** @return the key index living in the file */
    public KeyTable index()
    {
        return index;
    }

    /**
     * @param page a page
     * @return its payload, page-size bytes
     */
    public MemorySegment payload(final int page)
    {
        return payloads[page];
    }

    /** @return the counters region, for a {@link CountersReader} */
    public MemorySegment counters()
    {
        return file.asSlice(layout.countersOffset(), layout.countersLength());
    }

    /** Unmaps the file and closes its channel; the file itself stays, it is the engine's. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        arena.close();
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            System.getLogger(MappedPool.class.getName()).log(System.Logger.Level.WARNING, "could not close pool file {0}: {1}", path, ex.getMessage());
        }
    }
}
