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
 * Finds the Mooncake Store the tests run against and starts masters from it, or says exactly what is
 * missing so the tests skip with that message.
 *
 * <p>The store is a real install when {@code $KVTIER_MOONCAKE_HOME} names one, else the project's own
 * test double, which the build lays out as an install at {@value #DOUBLE_HOME} (from
 * {@code plugins/mooncake/fake}, compiled with gcc before the tests). Tests that only a real store can
 * answer ask {@link #assumeRealStore}; tests that need the double's fault switches ask
 * {@link #assumeDouble}.
 */
final class MooncakeTestSupport
{
    /**
     * The master's lease in tests: short, so a test that waits a lease out stays quick, and long enough that a test
     * reading a key and then meeting its lease (a removal refused, a removal that must wait) is well inside it on a
     * loaded host (at 1.5 s a stalled test could step past the lease it was about).
     */
    static final Duration LEASE_TTL = Duration.ofSeconds(5);

    /**
     * The tiers' {@code lease-ttl} in tests, below {@link #LEASE_TTL}: a get that takes this long is a miss, so at 1 s a
     * get stalled on a loaded host turned a hit the test expected into a miss.
     */
    static final String TIER_LEASE_TTL = "4s";

    /** Where the build lays out the test double, relative to the repository root. */
    static final String DOUBLE_HOME = "plugins/mooncake/fake/build/install";
    /** What a machine needs for a real store, for skip messages. */
    static final String REAL_INSTALL_HINT = "set " + MooncakeLibrary.HOME_ENV_NAME + " to a Mooncake install holding "
        + MooncakeMaster.BINARY + " (pip install mooncake-transfer-engine) and lib/" + MooncakeLibrary.LIBRARY_FILE
        + " (Mooncake built with cmake -DWITH_STORE_C_SHARED=ON)";

    private static final boolean REAL = isSet(System.getenv(MooncakeLibrary.HOME_ENV_NAME));
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

    /**
     * Skips the calling test unless it runs against a real install: it asserts something the project's
     * double does not imitate.
     *
     * @param what what the test needs a real store for
     */
    static void assumeRealStore(final String what)
    {
        assumeStoreAvailable();
        assumeTrue(REAL, () -> "needs a real Mooncake Store (" + what + "); the project's test double at " + home()
            + " is in use: " + REAL_INSTALL_HINT);
    }

    /**
     * Skips the calling test unless it runs against the project's test double (fault injection).
     *
     * @param what what the test needs the double for
     */
    static void assumeDouble(final String what)
    {
        assumeStoreAvailable();
        assumeTrue(!REAL, () -> "needs the project's Mooncake test double (" + what + "); " + MooncakeLibrary.HOME_ENV_NAME
            + " names a real install, " + home() + ": unset it to run this test");
    }

    /** @return whether the tests run against the project's test double rather than a real install */
    static boolean usesDouble()
    {
        return !REAL;
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
        config.put("lease-ttl", TIER_LEASE_TTL);
        config.put("setup-retries", "2");
        return config;
    }

    private static Optional<Path> findHome()
    {
        final String env = System.getenv(MooncakeLibrary.HOME_ENV_NAME);
        if (isSet(env))
        {
            return Optional.of(Path.of(env.trim()).toAbsolutePath());
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("plugins"))))
        {
            dir = dir.getParent();
        }
        return dir == null ? Optional.empty() : Optional.of(dir.resolve(DOUBLE_HOME));
    }

    private static boolean isSet(final String value)
    {
        return value != null && !value.isBlank();
    }

    private static String missingReason()
    {
        if (HOME.isEmpty())
        {
            return "no Mooncake Store: " + MooncakeLibrary.HOME_ENV_NAME + " is not set and no repository root (mvnw) was found above "
                + Path.of("").toAbsolutePath() + " to find the project's test double in (" + DOUBLE_HOME + "); " + REAL_INSTALL_HINT;
        }
        final Path home = HOME.get();
        for (final Path file : List.of(home.resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE), home.resolve(MooncakeMaster.BINARY)))
        {
            if (!Files.isRegularFile(file))
            {
                return REAL ? file + " is missing (" + MooncakeLibrary.HOME_ENV_NAME + " = " + home + "): " + REAL_INSTALL_HINT
                    : "the project's Mooncake test double was not built (" + file + " is missing): plugins/mooncake/fake/build.sh needs gcc"
                        + " and make (apt-get install -y gcc make), or " + REAL_INSTALL_HINT;
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
