package io.kvtier.cli;

import io.kvtier.bench.tier.MooncakeMasterProcess;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Where the CLI's Mooncake tests find a Mooncake Store, or why they skip: the real install
 * {@code KVTIER_MOONCAKE_HOME} names, else the project's test double, which plugins/mooncake's build lays
 * out as an install at {@value #DOUBLE_HOME} (gcc and make, before the tests).
 */
final class MooncakeHome
{
    /** Where plugins/mooncake's build lays out the test double, relative to the repository root. */
    static final String DOUBLE_HOME = "plugins/mooncake/fake/build/install";
    /** What a machine needs for a real store, for skip messages. */
    static final String REAL_INSTALL_HINT = "set " + MooncakeMasterProcess.HOME_ENV_NAME + " to a Mooncake install holding bin/mooncake_master"
        + " (pip install mooncake-transfer-engine) and lib/libmooncake_store.so (Mooncake built with cmake -DWITH_STORE_C_SHARED=ON)";

    private MooncakeHome()
    {
    }

    /**
     * @return a Mooncake install whose libraries all load: {@code KVTIER_MOONCAKE_HOME}, else the project's
     *         test double; the calling test is skipped, saying what is missing, otherwise
     */
    static Path require() throws IOException, InterruptedException
    {
        final Optional<Path> real = real();
        final Path home;
        if (real.isPresent())
        {
            home = real.get();
            assumeTrue(Files.isRegularFile(home.resolve(MooncakeMasterProcess.BINARY)), "no Mooncake install at " + home + ": " + REAL_INSTALL_HINT);
        }
        else
        {
            Path dir = Path.of("").toAbsolutePath();
            while (dir != null && !Files.isRegularFile(dir.resolve("mvnw")))
            {
                dir = dir.getParent();
            }
            assumeTrue(dir != null, "no repository root (mvnw) above " + Path.of("").toAbsolutePath() + " to find the Mooncake test double in; "
                + REAL_INSTALL_HINT);
            home = dir.resolve(DOUBLE_HOME);
            assumeTrue(Files.isRegularFile(home.resolve(MooncakeMasterProcess.BINARY)), "the project's Mooncake test double was not built at " + home
                + " (plugins/mooncake/fake/build.sh needs gcc and make: apt-get install -y gcc make), or " + REAL_INSTALL_HINT);
        }
        final Path library = MooncakeMasterProcess.library(home);
        final Process ldd = new ProcessBuilder("ldd", library.toString()).redirectErrorStream(true).start();
        final String output;
        try (InputStream in = ldd.getInputStream())
        {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        ldd.waitFor();
        assumeTrue(!output.contains("not found"), "Mooncake's runtime packages are missing (ldd " + library + "): run plugins/mooncake/scripts/install-runtime.sh as root");
        return home;
    }

    /** @return the install {@code KVTIER_MOONCAKE_HOME} names, if it is set */
    static Optional<Path> real()
    {
        final String env = System.getenv(MooncakeMasterProcess.HOME_ENV_NAME);
        return env != null && !env.isBlank() ? Optional.of(Path.of(env.trim()).toAbsolutePath()) : Optional.empty();
    }
}
