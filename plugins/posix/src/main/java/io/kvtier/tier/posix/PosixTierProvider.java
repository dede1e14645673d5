package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringAvailability;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.tier.support.SlabTierProvider;
import io.kvtier.tier.support.SlabTransport;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The {@code posix} tier type: pages as files under a directory on local NVMe or a shared
 * filesystem. Settings ({@code tier.<name>.*}): {@code dir} (required), {@code capacity},
 * {@code evict-high}, {@code evict-low}, {@code fanout-levels}, {@code io-threads}, {@code fsync},
 * {@code direct-io}, {@code shared}, {@code tmp-max-age}, {@code index-entries} and {@code io}; the module's
 * README gives their defaults and meaning. Its slab layout also runs over another tier's transport
 * ({@link SlabTierProvider}): the 3FS tier's USRBIO on a 3FS mount.
 */
public final class PosixTierProvider implements StorageTierProvider, SlabTierProvider
{
    private final boolean useLibc;
    private final Supplier<UringAvailability> uringAvailability;

    /** The provider {@link java.util.ServiceLoader} creates: the configured I/O path, where it can run. */
    public PosixTierProvider()
    {
        this(true, Uring::availability);
    }

    /**
     * @param useLibc false to force the FileChannel fallback even when LibC is available, for tests
     */
    PosixTierProvider(final boolean useLibc)
    {
        this(useLibc, Uring::availability);
    }

    /**
     * @param useLibc           false to force the FileChannel fallback, for tests
     * @param uringAvailability whether io_uring can be used; tests pass an unavailable answer to
     *                          act as a kernel without io_uring
     */
    PosixTierProvider(final boolean useLibc, final Supplier<UringAvailability> uringAvailability)
    {
        this.useLibc = useLibc;
        this.uringAvailability = uringAvailability;
    }

    @Override
    public String type()
    {
        return "posix";
    }

    @Override
    public SpiVersion spiVersion()
    {
        return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
    }

    @Override
    public String description()
    {
        return "page files under a directory (local NVMe or a shared filesystem)";
    }

    @Override
    public StorageTier create(final TierConfig config, final TierContext context)
    {
        final Optional<LibC> libc = useLibc ? LibC.instance() : Optional.empty();
        final PosixSettings settings = PosixSettings.parse(config, context.objectSize(), libc.isPresent());
        final String fallbackReason = useLibc ? "LibC unavailable, see the LibC log line for why" : "LibC turned off for this provider";
        return PosixTier.open(config, settings, context, libc, fallbackReason, uringAvailability);
    }

    /**
     * @throws io.kvtier.spi.TierConfigException naming {@code layout} when it is not {@code slab}, or any setting as
     *         {@link #create} does; native access is required
     */
    @Override
    public StorageTier createSlab(final TierConfig config, final TierContext context, final SlabTransport.Factory transports)
    {
        final Optional<LibC> libc = LibC.instance();
        final PosixSettings settings;
        try
        {
            if (libc.isEmpty())
            {
                throw config.invalid(PosixSettings.LAYOUT, config.has(PosixSettings.LAYOUT) ? config.string(PosixSettings.LAYOUT) : "slab",
                    "a layout this process can run, but a slab over another tier's transport needs LibC, which is unavailable", null);
            }
            settings = PosixSettings.parse(config, context.objectSize(), true);
            if (settings.layout != PageLayout.SLAB)
            {
                throw config.invalid(PosixSettings.LAYOUT, settings.layout.name().toLowerCase(java.util.Locale.ROOT),
                    "slab: a transport moves a slab's bytes only", null);
            }
        }
        catch (final RuntimeException ex)
        {
            transports.close();
            throw ex;
        }
        return PosixTier.openSlab(config, settings, context, libc.get(), transports);
    }
}
