package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.SlabTransport;

import java.util.concurrent.TimeUnit;

/**
 * What the I/O threads of a slab on a 3FS mount share: the pool's iovs, the registered extents, the settings. Each
 * thread gets a {@link UsrbioSlabTransport} with rings of its own ({@code hf3fs_prep_io} is not thread-safe per ring).
 */
final class UsrbioSlabTransports implements SlabTransport.Factory
{
    final ThreeFsSettings settings;
    final LibC libc;
    final String name;
    final System.Logger logger;
    final IoErrorLog errors;
    final PoolRegions regions;
    final RegisteredExtents extents = new RegisteredExtents();
    private final String mount;
    private final String library;
    private final java.util.Optional<java.lang.foreign.MemorySegment> transferMemory;

    /**
     * @param settings the tier's settings
     * @param libc     the libc front, for what USRBIO does not move
     * @param logger   the tier's logger
     * @param mount    the 3FS mount point
     * @param library  the USRBIO library bound, for the description
     * @param transferMemory the engine's page frames, wrapped once the first rings exist, before any page moves
     */
    UsrbioSlabTransports(final ThreeFsSettings settings, final LibC libc, final System.Logger logger, final String mount, final String library,
                         final java.util.Optional<java.lang.foreign.MemorySegment> transferMemory)
    {
        this.transferMemory = transferMemory;
        this.settings = settings;
        this.libc = libc;
        this.name = settings.tierName;
        this.logger = logger;
        this.mount = mount;
        this.library = library;
        this.errors = new IoErrorLog(logger, 1, TimeUnit.SECONDS);
        this.regions = new PoolRegions(mount, logger, name);
    }

    @Override
    public SlabTransport open(final int worker)
    {
        final UsrbioRing reads = newRing(true);
        try
        {
            final UsrbioSlabTransport transport = new UsrbioSlabTransport(this, reads, newRing(false));
            if (worker == 0)
            {
                // After a ring: the client registers iovs under the mount's 3fs-virt/iovs, which its rings set up.
                transferMemory.ifPresent(regions::iovOf);
            }
            return transport;
        }
        catch (final RuntimeException ex)
        {
            reads.destroy();
            throw ex;
        }
    }

    /**
     * @param forRead a read ring, else a write ring
     * @return a new ring on the mount, of {@code entries} entries; it stages nothing
     */
    UsrbioRing newRing(final boolean forRead)
    {
        return UsrbioRing.create(mount, settings.entries, forRead, settings.ioDepth, (int)Math.min(Integer.MAX_VALUE, settings.timeout.toMillis()),
            settings.objectSize);
    }

    @Override
    public String describe()
    {
        return "USRBIO through " + library + " on mount " + mount + " (a read and a write ring of " + settings.entries + " entries per I/O"
            + " thread; extents registered once; frame headers with pread/pwrite through the mount)";
    }

    @Override
    public String ioName()
    {
        return "usrbio";
    }

    @Override
    public void close()
    {
        extents.close();
        regions.close();
    }
}
