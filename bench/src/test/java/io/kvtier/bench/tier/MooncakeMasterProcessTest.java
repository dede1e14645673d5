package io.kvtier.bench.tier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Finding a Mooncake install and refusing one that holds no master, with no master started: starting and
 * stopping one is shown by cli's Mooncake tests against the project's test double.
 */
class MooncakeMasterProcessTest
{
    @TempDir
    Path dir;

    @Test
    void shouldFindAnInstallOnlyWhenTheEnvironmentNamesOneHoldingTheMaster() throws IOException
    {
        assertThat(MooncakeMasterProcess.homeFromEnvironment(Map.of())).as("nothing named").isEmpty();
        assertThat(MooncakeMasterProcess.homeFromEnvironment(Map.of(MooncakeMasterProcess.HOME_ENV_NAME, " "))).as("blank").isEmpty();
        assertThat(MooncakeMasterProcess.homeFromEnvironment(Map.of(MooncakeMasterProcess.HOME_ENV_NAME, dir.toString())))
            .as("a directory without %s", MooncakeMasterProcess.BINARY).isEmpty();

        Files.createDirectories(dir.resolve("bin"));
        Files.createFile(dir.resolve(MooncakeMasterProcess.BINARY));
        assertThat(MooncakeMasterProcess.homeFromEnvironment(Map.of(MooncakeMasterProcess.HOME_ENV_NAME, dir.toString()))).contains(dir);
        assertThat(MooncakeMasterProcess.library(dir)).isEqualTo(dir.resolve("lib/libmooncake_store.so"));
    }

    @Test
    void shouldRefuseToStartFromAnInstallWithoutAnExecutableMasterNamingWhatToSet()
    {
        assertThatThrownBy(() -> MooncakeMasterProcess.start(dir, Duration.ofSeconds(10), dir.resolve("master.log")))
            .isInstanceOf(IOException.class)
            .hasMessageContaining(dir.resolve(MooncakeMasterProcess.BINARY).toString())
            .hasMessageContaining(MooncakeMasterProcess.HOME_ENV_NAME)
            .hasMessageContaining("lib/" + MooncakeMasterProcess.LIBRARY_FILE);
        assertThat(dir.resolve("master.log")).doesNotExist();
    }
}
