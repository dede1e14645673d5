package io.kvtier.nativeaccess.cuda;

import io.kvtier.nativeaccess.NativeAccess;

import java.io.IOException;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Finds the CUDA runtime library (libcudart) this process binds, once.
 *
 * <p>Where it looks, in order, stopping at the first answer:
 * <ol>
 *   <li>an explicit path: the system property {@value #LIBRARY_PROP_NAME}, else the environment
 *       variable {@value #LIBRARY_ENV_NAME}. When one is set and the file is not there, the library is
 *       missing: an explicit choice is never silently replaced by another runtime;</li>
 *   <li>the CUDA install: {@code /usr/local/cuda/lib64}, then {@code /usr/local/cuda-<version>/lib64}
 *       newest version first, taking the newest {@code libcudart.so.<major>} (or the unversioned
 *       {@code libcudart.so}) found there;</li>
 *   <li>the dynamic loader's own search (ld.so.cache, {@code LD_LIBRARY_PATH}) for
 *       {@value #SONAMES_TEXT}.</li>
 * </ol>
 *
 * <p>One process binds one runtime: the bindings' {@code SYMBOL_LOOKUP} is {@link #lookup()}, and two
 * libcudart versions in one process would each own a separate CUDA context anyway.
 */
public final class CudartLibrary
{
    /** System property naming the libcudart to load. */
    public static final String LIBRARY_PROP_NAME = "kvtier.cuda.lib";
    /** Environment variable naming the libcudart to load, when the property is not set. */
    public static final String LIBRARY_ENV_NAME = "KVTIER_CUDA_LIB";
    /** The CUDA install's conventional roots. */
    public static final List<Path> INSTALL_ROOTS_DEFAULT = List.of(Path.of("/usr/local"));
    /** Names the dynamic loader is asked for when no install directory has the library. */
    public static final List<String> SONAMES = List.of("libcudart.so.13", "libcudart.so.12", "libcudart.so");

    private static final String SONAMES_TEXT = "libcudart.so.13, libcudart.so.12, libcudart.so";
    private static final String HOW_TO_INSTALL = "install the CUDA runtime (NVIDIA's cuda-cudart-13-0 package, or the CUDA toolkit) "
        + "or point -D" + LIBRARY_PROP_NAME + " or " + LIBRARY_ENV_NAME + " at a libcudart.so";

    private CudartLibrary()
    {
    }

    /**
     * Where the library was found, or why it was not.
     *
     * @param library       the path or soname to load, or null when missing
     * @param source        how it was chosen (explicit, install directory, loader search)
     * @param missingReason why there is none, with what to install or set; null when found
     */
    public record Location(String library, String source, String missingReason)
    {
        /** @return whether a library was chosen */
        public boolean found()
        {
            return library != null;
        }

        @Override
        public String toString()
        {
            return found() ? library + " (" + source + ")" : missingReason;
        }
    }

    /**
     * Decides which library to load, without loading it.
     *
     * @param explicit     a path from the property or the environment, or empty
     * @param explicitFrom which of them it came from, for the messages
     * @param installRoots directories holding {@code cuda} and {@code cuda-<version>} installs
     * @return the choice: a path, a soname for the loader, or missing with the reason
     */
    public static Location locate(final Optional<String> explicit, final String explicitFrom, final List<Path> installRoots)
    {
        if (explicit.isPresent() && !explicit.get().isBlank())
        {
            final Path path = Path.of(explicit.get());
            if (Files.isRegularFile(path))
            {
                return new Location(path.toString(), explicitFrom, null);
            }
            return new Location(null, explicitFrom, explicitFrom + " names " + path + ", which does not exist; fix it or unset it to use the CUDA install");
        }
        for (final Path dir : installLibDirs(installRoots))
        {
            final Optional<Path> library = newestCudart(dir);
            if (library.isPresent())
            {
                return new Location(library.get().toString(), "CUDA install " + dir, null);
            }
        }
        // Not in an install directory: leave it to the loader, which knows ld.so.cache and LD_LIBRARY_PATH.
        return new Location(String.join(",", SONAMES), "dynamic loader search", null);
    }

    private static List<Path> installLibDirs(final List<Path> roots)
    {
        final List<Path> dirs = new ArrayList<>();
        for (final Path root : roots)
        {
            dirs.add(root.resolve("cuda").resolve("lib64"));
            try (Stream<Path> entries = Files.list(root))
            {
                entries.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(Comparator.comparing((Path p) -> versionKey(p.getFileName().toString().substring(5))).reversed())
                    .forEach(p -> dirs.add(p.resolve("lib64")));
            }
            catch (final IOException | RuntimeException ex)
            {
                // An unreadable or absent root holds no install.
            }
        }
        return dirs;
    }

    private static Optional<Path> newestCudart(final Path dir)
    {
        if (!Files.isDirectory(dir))
        {
            return Optional.empty();
        }
        try (Stream<Path> entries = Files.list(dir))
        {
            final List<Path> versioned = entries
                .filter(p -> p.getFileName().toString().matches("libcudart\\.so\\.\\d+"))
                .sorted(Comparator.comparing((Path p) -> versionKey(p.getFileName().toString().substring("libcudart.so.".length()))).reversed())
                .toList();
            if (!versioned.isEmpty())
            {
                return Optional.of(versioned.getFirst());
            }
            final Path plain = dir.resolve("libcudart.so");
            return Files.exists(plain) ? Optional.of(plain) : Optional.empty();
        }
        catch (final IOException ex)
        {
            return Optional.empty();
        }
    }

    /** Orders "12.8" before "13.0" and "9.2" before "12.0": numeric parts, zero-padded. */
    private static String versionKey(final String version)
    {
        final StringBuilder key = new StringBuilder();
        for (final String part : version.split("\\."))
        {
            key.append(String.format(Locale.ROOT, "%08d", part.matches("\\d{1,8}") ? Integer.parseInt(part) : 0));
        }
        return key.toString();
    }

    /**
     * Loads the chosen library.
     *
     * @param location a {@link #locate} result
     * @return the symbols and the library actually loaded, or the reason none was
     */
    public static Loaded load(final Location location)
    {
        if (!location.found())
        {
            return new Loaded(Optional.empty(), location.missingReason() + "; " + HOW_TO_INSTALL);
        }
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            return new Loaded(Optional.empty(), denied.get());
        }
        final List<String> tried = new ArrayList<>();
        for (final String candidate : location.library().split(","))
        {
            try
            {
                return new Loaded(Optional.of(NativeAccess.library(candidate)), candidate + " (" + location.source() + ")");
            }
            catch (final IllegalArgumentException | IllegalCallerException ex)
            {
                tried.add(candidate + ": " + ex.getMessage());
            }
        }
        return new Loaded(Optional.empty(), "libcudart could not be loaded (" + location.source() + " tried " + String.join("; ", tried)
            + "); " + HOW_TO_INSTALL);
    }

    /**
     * A loaded library, or why there is none.
     *
     * @param symbols     its symbols, or empty
     * @param description the library loaded and how it was chosen, or why none was loaded
     */
    public record Loaded(Optional<SymbolLookup> symbols, String description)
    {
    }

    private static final class Holder
    {
        static final Loaded LOADED = loadConfigured();

        private static Loaded loadConfigured()
        {
            final String property = System.getProperty(LIBRARY_PROP_NAME);
            final Optional<String> explicit = property != null ? Optional.of(property) : Optional.ofNullable(System.getenv(LIBRARY_ENV_NAME));
            final String from = property != null ? "-D" + LIBRARY_PROP_NAME : LIBRARY_ENV_NAME;
            return load(locate(explicit, from, INSTALL_ROOTS_DEFAULT));
        }
    }

    /** @return this process's libcudart, or why it has none */
    public static Loaded loaded()
    {
        return Holder.LOADED;
    }

    /** @return the library's symbols, or a lookup that finds nothing when it is missing */
    public static SymbolLookup lookup()
    {
        return Holder.LOADED.symbols().orElse(name -> Optional.empty());
    }

    /** @return which library was loaded, or why none was */
    public static String location()
    {
        return Holder.LOADED.description();
    }
}
