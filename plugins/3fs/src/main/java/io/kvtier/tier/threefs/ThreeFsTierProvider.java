package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierContext;
import io.kvtier.tier.support.SlabTierProvider;
import io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_extract_mount_point;

/**
 * The {@code 3fs} tier type: pages as files in a directory on a 3FS mount, their bytes moved by 3FS's USRBIO
 * API, or, where the USRBIO library is not installed, by the POSIX tier through the FUSE mount, on the same
 * layout (logged, with the reason). Settings ({@code tier.<name>.*}): {@code dir} (required), {@code lib},
 * {@code usrbio}, {@code entries}, {@code io-depth}, {@code timeout}, {@code drain-timeout}, and the POSIX
 * tier's {@code capacity}, {@code evict-high}, {@code evict-low}, {@code fanout-levels}, {@code tmp-max-age}
 * and {@code io-threads}; docs/plugins/3fs.md gives their defaults and meaning.
 *
 * <h2>Which I/O, and when start fails</h2>
 * <ul>
 *   <li>{@code usrbio = off}: the POSIX tier.</li>
 *   <li>A library named by {@code lib} or {@code KVTIER_3FS_LIB} that is missing or lacks a USRBIO function
 *       fails the start, naming the file and the missing symbols: an explicit choice is never silently
 *       replaced.</li>
 *   <li>None named: {@value Hf3fsLibrary#SONAME} through the dynamic loader. Not found, or native access
 *       off: the POSIX tier, logged with why ({@code usrbio = on} makes that a start error instead).</li>
 *   <li>With the library, {@code dir} must be on a 3FS mount ({@code hf3fs_extract_mount_point}), else the
 *       start fails: I/O on a directory the client does not serve would fail page by page.</li>
 * </ul>
 */
public final class ThreeFsTierProvider implements StorageTierProvider
{
    /** The type of the tier that does the I/O where USRBIO is not used. */
    static final String POSIX_TYPE = "posix";

    private final Map<String, String> environment;

    /** The provider {@link java.util.ServiceLoader} creates, reading the process environment. */
    public ThreeFsTierProvider()
    {
        this(System.getenv());
    }

    /**
     * @param environment the environment to read {@code KVTIER_3FS_LIB} from, for tests
     */
    ThreeFsTierProvider(final Map<String, String> environment)
    {
        this.environment = environment;
    }

    /** Compiled in: the SPI version this plugin was built against, which the engine checks. */
    @Override
    public SpiVersion spiVersion()
    {
        return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
    }

    @Override
    public String type()
    {
        return "3fs";
    }

    @Override
    public String description()
    {
        return "page files on a 3FS mount through the USRBIO API (POSIX I/O on the mount without the library)";
    }

    @Override
    public StorageTier create(final TierConfig config, final TierContext context)
    {
        final ThreeFsSettings settings = ThreeFsSettings.parse(config, context.objectSize(), environment);
        if (settings.usrbio == ThreeFsSettings.Usrbio.OFF)
        {
            return posix(settings, context, settings.qualified(ThreeFsSettings.USRBIO) + "=off");
        }
        final boolean required = settings.usrbio == ThreeFsSettings.Usrbio.ON;
        final Optional<LibC> libc = LibC.instance();
        if (libc.isEmpty())
        {
            final String why = "USRBIO needs native access, which is unavailable: "
                + NativeAccess.unavailableReason().orElse("LibC could not be bound, see its log line");
            if (required)
            {
                throw settings.invalid(ThreeFsSettings.USRBIO, "on", "auto or off, since " + why);
            }
            return posix(settings, context, why);
        }
        final String library = settings.lib.orElse(Hf3fsLibrary.SONAME);
        final Optional<String> problem = Hf3fsLibrary.check(library);
        if (problem.isPresent())
        {
            if (settings.lib.isPresent())
            {
                throw settings.invalid(ThreeFsSettings.LIB, library + " (from " + settings.libFrom + ")",
                    "a 3FS USRBIO library (" + Hf3fsLibrary.SONAME + "), but " + problem.get());
            }
            if (required)
            {
                throw settings.invalid(ThreeFsSettings.USRBIO, "on", "auto or off, or name the library with " + settings.qualified(ThreeFsSettings.LIB)
                    + " or " + Hf3fsLibrary.LIBRARY_ENV_NAME + ": " + problem.get());
            }
            return posix(settings, context, problem.get() + "; install the 3FS client library or name it with "
                + settings.qualified(ThreeFsSettings.LIB) + " or " + Hf3fsLibrary.LIBRARY_ENV_NAME);
        }
        try
        {
            Hf3fsLibrary.bind(library);
        }
        catch (final IllegalStateException | IllegalArgumentException ex)
        {
            throw settings.invalid(ThreeFsSettings.LIB, library, "the library the other 3FS tiers of this process use: " + ex.getMessage());
        }
        final String mount = mountPoint(settings);
        if (settings.layout == ThreeFsSettings.Layout.SLAB)
        {
            return slab(settings, context, libc.get(), mount, library);
        }
        return ThreeFsTier.open(settings, context, libc.get(), mount, library);
    }

    private static String mountPoint(final ThreeFsSettings settings)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int size = 4096;
            final MemorySegment out = arena.allocate(size);
            final int length = hf3fs_extract_mount_point(out, size, arena.allocateFrom(settings.dir.toString()));
            if (length < 0)
            {
                throw settings.invalid(ThreeFsSettings.DIR, settings.dir.toString(), "a directory on a 3FS mount, but hf3fs_extract_mount_point"
                    + " finds no 3FS mount above " + settings.dir + " (is 3FS mounted there? set " + settings.qualified(ThreeFsSettings.USRBIO)
                    + "=off to use the directory with POSIX I/O)");
            }
            if (length > size)
            {
                throw settings.invalid(ThreeFsSettings.DIR, settings.dir.toString(), "a directory whose 3FS mount point is shorter than " + size + " bytes");
            }
            return out.getString(0);
        }
    }

    /**
     * The POSIX tier's slab on the directory, its page bytes moved by USRBIO: extents registered once, a read and a write
     * ring per I/O thread. The engine's page frames are wrapped with the first rings rather than on the first page.
     */
    private static StorageTier slab(final ThreeFsSettings settings, final TierContext context, final LibC libc, final String mount,
                                    final String library)
    {
        final StorageTierProvider posix = posixProvider(settings);
        if (!(posix instanceof SlabTierProvider slabs))
        {
            throw settings.invalid(ThreeFsSettings.LAYOUT, "slab", "files: the '" + POSIX_TYPE + "' provider found ("
                + posix.getClass().getName() + ") cannot run a slab over USRBIO");
        }
        final UsrbioSlabTransports transports = new UsrbioSlabTransports(settings, libc, context.logger(), mount, library,
            context.transferMemory());
        context.logger().log(System.Logger.Level.INFO, "3fs tier " + settings.tierName + ": " + settings + "; the POSIX tier's slab on "
            + settings.dir + ", page bytes through USRBIO");
        return slabs.createSlab(settings.posixSlabConfig(true), context, transports);
    }

    private static StorageTier posix(final ThreeFsSettings settings, final TierContext context, final String why)
    {
        context.logger().log(System.Logger.Level.WARNING, "3fs tier " + settings.tierName + ": not using USRBIO (" + why + "); doing POSIX I/O on "
            + settings.dir + " through the mount, with the posix tier on the same layout");
        return posixProvider(settings).create(settings.posixFallbackConfig(), context);
    }

    /**
     * The POSIX tier, found as the engine finds any tier: by its type among the providers this plugin's
     * class loader sees. It ships with the engine, so it is there wherever the engine is; this plugin
     * does not link against it.
     */
    private static StorageTierProvider posixProvider(final ThreeFsSettings settings)
    {
        for (final StorageTierProvider provider : ServiceLoader.load(StorageTierProvider.class, ThreeFsTierProvider.class.getClassLoader()))
        {
            if (POSIX_TYPE.equals(provider.type()))
            {
                return provider;
            }
        }
        throw new TierConfigException(settings.qualified(ThreeFsSettings.USRBIO), "3fs tier " + settings.tierName
            + " would do POSIX I/O on the mount without USRBIO, but no '" + POSIX_TYPE + "' tier provider is on the class path"
            + " (put kvtier-tier-posix beside kvtier-tier-3fs)");
    }
}
