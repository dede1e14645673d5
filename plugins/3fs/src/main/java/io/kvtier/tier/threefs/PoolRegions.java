package io.kvtier.tier.threefs;

import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_iov;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovdestroy;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovwrap;

/**
 * Wraps the pool's memory as USRBIO iovs, once per mapping, so that pages move between 3FS and the pool with
 * no copy.
 *
 * <p>The engine offers its page frames through {@link io.kvtier.spi.TierContext#transferMemory}, which the
 * tier passes here at start; a context may offer none, so any slice ({@link io.kvtier.spi.TierBatch#segment})
 * outside what is known is looked up the same way. Either finds its mapping in {@code /proc/self/maps}: the
 * 3FS client maps the memory itself, from its file, so the memory's address is not enough. The engine's pool is a file in
 * {@code /dev/shm} mapped from offset 0: such a mapping is registered with the 3FS client the way
 * {@code hf3fs_iovcreate} registers its own shared memory (a symlink {@code <mount>/3fs-virt/iovs/<id>} to the
 * file) and wrapped with {@code hf3fs_iovwrap}. Any other memory (anonymous, a file elsewhere, a mapping not
 * from offset 0) cannot be seen by the 3FS client; its range is remembered as such, logged once, and its
 * pages go through the ring's staging iov with a copy.
 *
 * <p>Regions are cached for the tier's life: the engine keeps its pool mapped until every tier is closed
 * (the SPI's {@code close} contract), so an address seen once keeps its backing file. Callers are the two
 * ring threads; the cache is guarded by this object's monitor.
 */
final class PoolRegions
{
    private static final Path MAPS = Path.of("/proc/self/maps");
    private static final String SHM = "/dev/shm/";

    private final String mount;
    private final System.Logger logger;
    private final String tierName;
    private final Arena arena = Arena.ofShared();
    private final TreeMap<Long, Region> regions = new TreeMap<>();
    private final List<Path> links = new ArrayList<>();
    private boolean copyReported;
    /** The region {@link #iovOf} found last. */
    private Region lastFound;
    private boolean closed;

    /** A mapping, wrapped ({@code iov} set) or not ({@code iov} null). */
    private record Region(long start, long end, MemorySegment iov)
    {
    }

    /** One line of /proc/self/maps. */
    record Mapping(long start, long end, long offset, String path)
    {
    }

    /**
     * @param mount    the 3FS mount point
     * @param logger   the tier's logger
     * @param tierName the tier's name, for the log
     */
    PoolRegions(final String mount, final System.Logger logger, final String tierName)
    {
        this.mount = mount;
        this.logger = logger;
        this.tierName = tierName;
    }

    /**
     * @param slice a page's memory, or the whole transfer memory
     * @return the iov wrapping it, or null when it must be staged
     */
    MemorySegment iovOf(final MemorySegment slice)
    {
        return iovOf(slice.address(), slice.byteSize());
    }

    /**
     * @param start  a page's address
     * @param length its bytes
     * @return the iov wrapping it, or null when it must be staged; the region found last is tried first, with no
     *         allocation, since a tier's pages are nearly always in the engine's one pool
     */
    synchronized MemorySegment iovOf(final long start, final long length)
    {
        if (closed)
        {
            return null;
        }
        final long end = start + length;
        final Region last = lastFound;
        if (last != null && start >= last.start && end <= last.end)
        {
            return last.iov;
        }
        final Map.Entry<Long, Region> known = regions.floorEntry(start);
        if (known != null && end <= known.getValue().end)
        {
            lastFound = known.getValue();
            return known.getValue().iov;
        }
        final Mapping mapping = mappingOf(start);
        if (mapping == null || end > mapping.end)
        {
            // Spans mappings, or is not in one we could read: stage it, and look again next time.
            return null;
        }
        final Region region = wrap(mapping);
        regions.put(region.start, region);
        lastFound = region;
        return region.iov;
    }

    private Region wrap(final Mapping mapping)
    {
        final String why;
        if (mapping.path == null || !mapping.path.startsWith(SHM))
        {
            why = "it is " + (mapping.path == null ? "anonymous memory" : "not in " + SHM + " (" + mapping.path + ")");
        }
        else if (mapping.offset != 0)
        {
            why = "it maps " + mapping.path + " from offset " + mapping.offset + ", not 0";
        }
        else
        {
            final byte[] id = new byte[16];
            ThreadLocalRandom.current().nextBytes(id);
            final Path link = Path.of(mount, "3fs-virt", "iovs", HexFormat.of().formatHex(id));
            String failure;
            try
            {
                Files.createSymbolicLink(link, Path.of(mapping.path));
                final MemorySegment iov = hf3fs_iov.allocate(arena);
                final int rc = hf3fs_iovwrap(iov, MemorySegment.ofAddress(mapping.start), arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, id),
                    arena.allocateFrom(mount), mapping.end - mapping.start, 0L, -1);
                if (rc == 0)
                {
                    links.add(link);
                    logger.log(System.Logger.Level.INFO, "3fs tier " + tierName + ": pool memory " + mapping.path + " (" + (mapping.end - mapping.start)
                        + " bytes) wrapped as a USRBIO iov: pages in it move with no copy");
                    return new Region(mapping.start, mapping.end, iov);
                }
                failure = "hf3fs_iovwrap failed: " + ErrnoText.describe(-rc);
                Files.deleteIfExists(link);
            }
            catch (final IOException | RuntimeException ex)
            {
                failure = "registering it as " + link + " failed: " + ex;
            }
            why = failure;
        }
        if (!copyReported)
        {
            copyReported = true;
            logger.log(System.Logger.Level.INFO, "3fs tier " + tierName + ": page memory at 0x" + Long.toHexString(mapping.start)
                + " cannot be wrapped as a USRBIO iov (" + why + "); its pages are copied through the ring's staging iov."
                + " The engine's pool in " + SHM + " is wrapped, with no copy (logged once)");
        }
        return new Region(mapping.start, mapping.end, null);
    }

    /**
     * @param address an address in this process
     * @return the mapping holding it, or null
     */
    static Mapping mappingOf(final long address)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(MAPS);
        }
        catch (final IOException ex)
        {
            return null;
        }
        for (final String line : lines)
        {
            final Mapping mapping = parse(line);
            if (mapping != null && Long.compareUnsigned(mapping.start, address) <= 0 && Long.compareUnsigned(address, mapping.end) < 0)
            {
                return mapping;
            }
        }
        return null;
    }

    /**
     * @param line a line of /proc/self/maps: {@code start-end perms offset dev inode [path]}
     * @return the mapping, or null when the line does not parse
     */
    static Mapping parse(final String line)
    {
        final String[] fields = line.trim().split("\\s+", 6);
        if (fields.length < 5)
        {
            return null;
        }
        final int dash = fields[0].indexOf('-');
        if (dash < 0)
        {
            return null;
        }
        try
        {
            final long start = Long.parseUnsignedLong(fields[0], 0, dash, 16);
            final long end = Long.parseUnsignedLong(fields[0], dash + 1, fields[0].length(), 16);
            final long offset = Long.parseUnsignedLong(fields[2], 16);
            final String path = fields.length == 6 && fields[5].startsWith("/") ? fields[5] : null;
            return new Mapping(start, end, offset, path);
        }
        catch (final NumberFormatException ex)
        {
            return null;
        }
    }

    /** Destroys the wrapped iovs (which frees nothing: the pool is the engine's) and removes their registrations. */
    synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final Region region : regions.values())
        {
            if (region.iov != null)
            {
                hf3fs_iovdestroy(region.iov);
            }
        }
        regions.clear();
        lastFound = null;
        for (final Path link : links)
        {
            try
            {
                Files.deleteIfExists(link);
            }
            catch (final IOException ex)
            {
                logger.log(System.Logger.Level.WARNING, "3fs tier " + tierName + ": cannot remove " + link + ": " + ex);
            }
        }
        arena.close();
    }
}
