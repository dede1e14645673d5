package io.kvtier.cli;

import io.kvtier.tier.mooncake.MooncakeLibrary;
import io.kvtier.tier.mooncake.MooncakeMaster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Where the CLI's Mooncake tests find a Mooncake install, or why they skip. */
final class MooncakeHome
{
    private MooncakeHome()
    {
    }

    /**
     * @return a Mooncake install whose libraries all load: {@code KVTIER_MOONCAKE_HOME}, else the build
     *         machines' vendored one beside the repository; the calling test is skipped, saying what is
     *         missing, otherwise
     */
    static Path require() throws IOException, InterruptedException
    {
        final String env = System.getenv(MooncakeLibrary.HOME_ENV_NAME);
        Optional<Path> home = env != null && !env.isBlank() ? Optional.of(Path.of(env)) : Optional.empty();
        if (home.isEmpty())
        {
            Path dir = Path.of("").toAbsolutePath();
            while (dir != null && !Files.isRegularFile(dir.resolve("mvnw")))
            {
                dir = dir.getParent();
            }
            if (dir != null && dir.getParent() != null)
            {
                home = Optional.of(dir.getParent().resolve("shared/vendor/mooncake/install"));
            }
        }
        assumeTrue(home.isPresent() && Files.isRegularFile(home.get().resolve(MooncakeMaster.BINARY)),
            "no Mooncake install: set " + MooncakeLibrary.HOME_ENV_NAME + " to one holding bin/mooncake_master and lib/libmooncake_store.so");
        final Path library = home.get().resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE);
        final Process ldd = new ProcessBuilder("ldd", library.toString()).redirectErrorStream(true).start();
        final String output;
        try (InputStream in = ldd.getInputStream())
        {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        ldd.waitFor();
        assumeTrue(!output.contains("not found"), "Mooncake's runtime packages are missing (ldd " + library + "): run plugins/mooncake/scripts/install-runtime.sh as root");
        return home.get();
    }
}
