package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PageMetadataReader;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.client.pool.PoolHeader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The pool file a dead engine left, kept mapped read-only after the new pool replaced it at its path,
 * so that the new engine can adopt its committed pages (a warm restart, {@code pool.warm-restart}).
 *
 * <p>Nothing in it is trusted. Its header must describe a pool of this build's layout version whose
 * page size and frame length are the new pool's and whose regions lie inside the file, or the pool is
 * refused whole ({@link #open} names why). Its pages are only ever read: the adopter copies a frame
 * into a page of the new pool that nobody else can see and verifies the copy there, exactly as a load
 * from L3 is verified, so a client of the dead engine that still maps this file and writes into it can
 * change what is copied, but never what is served.
 *
 * <p>The mapping keeps the old inode, and so its memory, alive until {@link #close}: the adopter closes
 * it when it is done.
 */
public final class PreviousPool implements AutoCloseable
{
    private final Path path;
    private final Arena arena;
    private final PagePoolDescriptor.Layout layout;
    private final PageMetadataReader metadata;
    private final MemorySegment data;
    private final int previousState;
    private boolean closed;

    private PreviousPool(final Path path, final Arena arena, final PagePoolDescriptor.Layout layout, final MemorySegment file, final int previousState)
    {
        this.path = path;
        this.arena = arena;
        this.layout = layout;
        this.previousState = previousState;
        this.metadata = new PageMetadataReader(
            file.asSlice(layout.metadataOffset(), (long)layout.pageCount() * PageMetadataDescriptor.ENTRY_LENGTH), layout.pageCount());
        this.data = file.asSlice(layout.dataOffset(), (long)layout.pageCount() * layout.frameLength());
    }

    /** Why a dead engine's pool is not adopted: the message names what differs or is wrong. */
    public static final class Refused extends Exception
    {
        private static final long serialVersionUID = 1L;

        Refused(final String message)
        {
            super(message);
        }
    }

    /**
     * Maps a dead engine's pool read-only and checks that its pages can be adopted into a pool of the
     * given geometry.
     *
     * @param channel       the old file, opened by the new engine while it held the old file's lock
     * @param path          where the old file was, for messages
     * @param previousState the old header's pool state before the new engine marked it superseded
     * @param pageSize      the new pool's payload bytes per page
     * @param frameLength   the new pool's bytes per frame
     * @return the mapped old pool
     * @throws Refused     if the old pool's layout is not one whose pages can be adopted
     * @throws IOException if it cannot be mapped
     */
    static PreviousPool open(final FileChannel channel, final Path path, final int previousState, final long pageSize, final long frameLength)
        throws Refused, IOException
    {
        final long size = channel.size();
        if (size < PagePoolDescriptor.HEADER_LENGTH)
        {
            throw new Refused("the file holds " + size + " bytes, less than a pool header");
        }
        final Arena arena = Arena.ofShared();
        boolean done = false;
        try
        {
            final MemorySegment file = channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            final PagePoolDescriptor.Layout layout;
            try
            {
                layout = new PoolHeader(file.asSlice(0, PagePoolDescriptor.HEADER_LENGTH)).readLayout(path);
            }
            catch (final IllegalStateException ex)
            {
                throw new Refused(ex.getMessage());
            }
            if (layout.pageSize() != pageSize)
            {
                throw new Refused("its pages are of " + layout.pageSize() + " bytes, pool.page-size is now " + pageSize);
            }
            if (layout.frameLength() != frameLength)
            {
                throw new Refused("its frames are of " + layout.frameLength() + " bytes, this build's are of " + frameLength);
            }
            if (layout.pageCount() < 0 || layout.fileLength() > size || layout.metadataOffset() < PagePoolDescriptor.HEADER_LENGTH
                || layout.metadataOffset() + (long)layout.pageCount() * PageMetadataDescriptor.ENTRY_LENGTH > layout.fileLength()
                || layout.dataOffset() < layout.metadataOffset()
                || layout.dataOffset() + (long)layout.pageCount() * layout.frameLength() > layout.fileLength())
            {
                throw new Refused("its header describes regions outside its " + size + " bytes (page count " + layout.pageCount()
                    + ", metadata at " + layout.metadataOffset() + ", data at " + layout.dataOffset() + ", file length " + layout.fileLength() + ")");
            }
            final PreviousPool previous = new PreviousPool(path, arena, layout, file, previousState);
            done = true;
            return previous;
        }
        finally
        {
            if (!done)
            {
                arena.close();
            }
        }
    }

    /** @return where the old file was */
    public Path path()
    {
        return path;
    }

    /** @return its pages */
    public int pageCount()
    {
        return layout.pageCount();
    }

    /** @return its header's pool state when the new engine found it: open (its engine died), closed, or superseded */
    public int previousState()
    {
        return previousState;
    }

    /** @return its pages' metadata, read-only */
    public PageMetadataReader metadata()
    {
        return metadata;
    }

    /**
     * @param page a page of the old pool
     * @return its whole frame, read-only
     */
    public MemorySegment frame(final int page)
    {
        return data.asSlice((long)page * layout.frameLength(), layout.frameLength());
    }

    /** Unmaps the old file; its memory goes back once no other process maps it either. */
    @Override
    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            arena.close();
        }
    }
}
