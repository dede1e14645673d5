package io.kvtier.tier.mooncake;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.SymbolLookup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Finds and binds {@code libmooncake_store.so}, once per process. The library is never bundled: it is
 * built with Mooncake's {@code WITH_STORE_C_SHARED} option (no release ships it) and links the
 * machine's glog, gflags, yaml-cpp and liburing, so it must match the machine it runs on.
 *
 * <p>Where it looks, in order, stopping at the first that is set:
 * <ol>
 *   <li>the tier's {@code lib} setting, a path to the library;</li>
 *   <li>the environment variable {@value #LIBRARY_ENV_NAME}, a path to the library;</li>
 *   <li>the environment variable {@value #HOME_ENV_NAME}: {@code $KVTIER_MOONCAKE_HOME/lib/libmooncake_store.so}.</li>
 * </ol>
 * An explicit choice that names a missing file is an error, never replaced by another library. With
 * none set the library is missing: the dynamic loader is not searched, because a stray
 * {@code libmooncake_store.so} of another ABI version would bind silently.
 *
 * <p>One process binds one library: the bindings' {@code SYMBOL_LOOKUP} is {@link #lookup()}. A second
 * tier naming another file fails at start rather than mixing two copies of Mooncake's globals.
 */
public final class MooncakeLibrary
{
    /** Environment variable naming the library file. */
    public static final String LIBRARY_ENV_NAME = "KVTIER_MOONCAKE_LIB";
    /** Environment variable naming a Mooncake install ({@code lib/}, {@code bin/mooncake_master}). */
    public static final String HOME_ENV_NAME = "KVTIER_MOONCAKE_HOME";
    /** The library's file name inside an install's {@code lib/}. */
    public static final String LIBRARY_FILE = "libmooncake_store.so";
    /** What to run when the library's own dependencies are missing. */
    public static final String RUNTIME_HINT = "install its runtime packages with plugins/mooncake/scripts/install-runtime.sh (Debian 12: "
        + "apt-get install -y " + String.join(" ", MooncakeRuntime.DEBIAN_PACKAGES) + ")";

    private static final Object LOCK = new Object();
    private static volatile SymbolLookup bound;
    private static volatile String boundDescription = "libmooncake_store not bound yet";

    private MooncakeLibrary()
    {
    }

    /**
     * Where the library is, or why it is not.
     *
     * @param library the file, or null when missing
     * @param source  how it was chosen
     * @param missing why there is none and what to set; null when found
     */
    public record Location(Path library, String source, String missing)
    {
        /** @return whether a file was chosen */
        public boolean found()
        {
            return library != null;
        }

        @Override
        public String toString()
        {
            return found() ? library + " (" + source + ")" : missing;
        }
    }

    /**
     * Decides which file to load, without loading it.
     *
     * @param setting      the tier's {@code lib} setting, or null
     * @param settingKey   its qualified name, for messages
     * @param env          the environment to read {@value #LIBRARY_ENV_NAME} and {@value #HOME_ENV_NAME} from
     * @return the choice
     */
    public static Location locate(final String setting, final String settingKey, final Map<String, String> env)
    {
        final String howToSet = "set " + settingKey + " or " + LIBRARY_ENV_NAME + " to the path of " + LIBRARY_FILE
            + ", or " + HOME_ENV_NAME + " to a Mooncake install holding lib/" + LIBRARY_FILE;
        if (setting != null && !setting.isBlank())
        {
            return explicit(Path.of(setting.trim()), settingKey, howToSet);
        }
        final String library = env.get(LIBRARY_ENV_NAME);
        if (library != null && !library.isBlank())
        {
            return explicit(Path.of(library.trim()), LIBRARY_ENV_NAME, howToSet);
        }
        final String home = env.get(HOME_ENV_NAME);
        if (home != null && !home.isBlank())
        {
            return explicit(Path.of(home.trim()).resolve("lib").resolve(LIBRARY_FILE), HOME_ENV_NAME + "/lib", howToSet);
        }
        return new Location(null, "none", LIBRARY_FILE + " not configured: " + howToSet
            + " (it is not bundled: build it with Mooncake's WITH_STORE_C_SHARED=ON, see docs/plugins/mooncake.md)");
    }

    private static Location explicit(final Path path, final String source, final String howToSet)
    {
        if (Files.isRegularFile(path))
        {
            return new Location(path.toAbsolutePath().normalize(), source, null);
        }
        return new Location(null, source, source + " names " + path + ", which is not a file; " + howToSet);
    }

    /**
     * Loads the library and checks that it exports every function of {@code store_c.h}, then makes it
     * the process's library. Binding the same file again is a no-op.
     *
     * @param location a {@link #locate} result
     * @return the library bound, for logs
     * @throws MooncakeUnavailableException naming the file, what is wrong and how to fix it
     */
    public static String bind(final Location location)
    {
        if (!location.found())
        {
            throw new MooncakeUnavailableException(location.missing());
        }
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            throw new MooncakeUnavailableException("cannot load " + location + ": " + denied.get());
        }
        synchronized (LOCK)
        {
            final String description = location.library() + " (" + location.source() + ")";
            if (bound != null && boundDescription.startsWith(location.library() + " "))
            {
                return boundDescription;
            }
            final SymbolLookup lookup;
            try
            {
                lookup = NativeAccess.library(location.library().toString());
            }
            catch (final IllegalArgumentException | IllegalCallerException ex)
            {
                final List<String> missing = missingDependencies(location.library());
                throw new MooncakeUnavailableException("cannot load " + description + ": " + ex.getMessage()
                    + (missing.isEmpty() ? "; if its dependencies are missing (ldd " + location.library() + "), " + RUNTIME_HINT
                        : "; ldd reports these dependencies missing: " + missing + "; " + RUNTIME_HINT), ex);
            }
            final List<String> absent = new ArrayList<>();
            for (final String symbol : store_c_h.Symbols.NAMES)
            {
                if (lookup.find(symbol).isEmpty())
                {
                    absent.add(symbol);
                }
            }
            if (!absent.isEmpty())
            {
                throw new MooncakeUnavailableException(description + " lacks " + absent.size() + " of the " + store_c_h.Symbols.NAMES.size()
                    + " functions of store_c.h " + absent + ": it is not a Mooncake Store C library of the ABI these bindings were made for "
                    + "(Mooncake 3b5a594 or later, built with WITH_STORE_C_SHARED=ON)");
            }
            if (bound != null)
            {
                throw new MooncakeUnavailableException("cannot bind " + description + ": this process already uses " + boundDescription
                    + "; one process binds one " + LIBRARY_FILE + ", so give every mooncake tier the same library");
            }
            boundDescription = description;
            bound = lookup;
            NativeAccess.logChoice("MooncakeStore", description);
            return description;
        }
    }

    /** @return the bound library's symbols; the bindings read it once, after {@link #bind} */
    public static SymbolLookup lookup()
    {
        final SymbolLookup lookup = bound;
        if (lookup == null)
        {
            throw new IllegalStateException("store_c_h used before MooncakeLibrary.bind: " + boundDescription);
        }
        return lookup;
    }

    /** @return the bound library and how it was chosen, or that none is bound */
    public static String location()
    {
        return boundDescription;
    }

    /**
     * Asks {@code ldd} which of the library's dependencies the loader cannot find: the JDK reports a
     * failed dlopen without dlerror's text, and a missing glog is the usual cause on a new machine.
     */
    static List<String> missingDependencies(final Path library)
    {
        final List<String> missing = new ArrayList<>();
        try
        {
            final Process ldd = new ProcessBuilder("ldd", library.toString()).redirectErrorStream(true).start();
            final String output;
            try (InputStream in = ldd.getInputStream())
            {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!ldd.waitFor(10, TimeUnit.SECONDS))
            {
                ldd.destroyForcibly();
            }
            for (final String line : output.split("\n"))
            {
                if (line.contains("not found"))
                {
                    missing.add(line.trim().split("\\s+")[0]);
                }
            }
        }
        catch (final IOException ex)
        {
            // No ldd: the message falls back to naming the packages.
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return missing;
    }
}
