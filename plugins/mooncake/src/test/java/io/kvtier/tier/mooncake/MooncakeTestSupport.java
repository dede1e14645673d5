package io.kvtier.tier.mooncake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Finds the Mooncake install the tests run against and starts masters from it, or says exactly what
 * is missing so the tests skip with that message.
 *
 * <p>The install is {@code $KVTIER_MOONCAKE_HOME}, else {@code ../shared/vendor/mooncake/install}
 * relative to the repository root when it is there (the machines this project is built on keep a
 * TCP-only build there).
 */
final class MooncakeTestSupport
{
    /** The master's lease in tests: short, so a test that waits a lease out stays quick. */
    static final Duration LEASE_TTL = Duration.ofMillis(1500);

    private static final Optional<Path> HOME = findHome();
    private static final String MISSING = missingReason();

    private MooncakeTestSupport()
    {
    }

    /** Skips the calling test, naming what to install or set, unless the store can run here. */
    static void assumeStoreAvailable()
    {
        assumeTrue(MISSING == null, () -> "Mooncake Store not usable here, skipping: " + MISSING);
    }

    /** @return why the store cannot run here, or null when it can */
    static String missing()
    {
        return MISSING;
    }

    /** @return the install */
    static Path home()
    {
        return HOME.orElseThrow();
    }

    /** @return the library inside the install */
    static Path library()
    {
        return home().resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE);
    }

    /**
     * @param logDir where the master's log goes
     * @return a master on loopback, with the tests' short lease
     */
    static MooncakeMaster startMaster(final Path logDir)
    {
        return MooncakeMaster.start(home(), LEASE_TTL, logDir.resolve("mooncake_master.log"));
    }

    /**
     * @param master the master
     * @param segment the segment this client contributes, e.g. 64MiB, or 0
     * @return settings for a tier on that master, without the prefix
     */
    static Map<String, String> config(final MooncakeMaster master, final String segment)
    {
        final Map<String, String> config = new HashMap<>();
        config.put("lib", library().toString());
        config.put("master", master.address());
        config.put("global-segment-size", segment);
        config.put("local-buffer-size", "4MiB");
        config.put("lease-ttl", "1s");
        config.put("setup-retries", "2");
        return config;
    }

    private static Optional<Path> findHome()
    {
        final String env = System.getenv(MooncakeLibrary.HOME_ENV_NAME);
        if (env != null && !env.isBlank())
        {
            return Optional.of(Path.of(env.trim()).toAbsolutePath());
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("plugins"))))
        {
            dir = dir.getParent();
        }
        if (dir == null || dir.getParent() == null)
        {
            return Optional.empty();
        }
        final Path vendored = dir.getParent().resolve("shared/vendor/mooncake/install").normalize();
        return Files.isDirectory(vendored) ? Optional.of(vendored) : Optional.empty();
    }

    private static String missingReason()
    {
        if (HOME.isEmpty())
        {
            return "no Mooncake install: set " + MooncakeLibrary.HOME_ENV_NAME + " to one holding lib/" + MooncakeLibrary.LIBRARY_FILE
                + " and " + MooncakeMaster.BINARY + " (build it with shared/vendor/mooncake/build.sh, or Mooncake's cmake -DWITH_STORE_C_SHARED=ON)";
        }
        final Path home = HOME.get();
        for (final Path file : List.of(home.resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE), home.resolve(MooncakeMaster.BINARY)))
        {
            if (!Files.isRegularFile(file))
            {
                return file + " is missing (" + MooncakeLibrary.HOME_ENV_NAME + " = " + home + ")";
            }
            final List<String> absent = MooncakeLibrary.missingDependencies(file);
            if (!absent.isEmpty())
            {
                return "ldd " + file + " reports missing " + absent + ": run plugins/mooncake/scripts/install-runtime.sh as root, or "
                    + "apt-get install -y " + String.join(" ", MooncakeRuntime.DEBIAN_PACKAGES);
            }
        }
        return null;
    }

    /** @return a scratch directory under target/, kept for the master logs */
    static Path logDir(final String name)
    {
        try
        {
            return Files.createDirectories(Path.of("target", "mooncake-logs", name).toAbsolutePath());
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** @param env overrides for a provider that must not see the real environment */
    static MooncakeTierProvider provider(final Map<String, String> env)
    {
        return new MooncakeTierProvider(env);
    }
}
