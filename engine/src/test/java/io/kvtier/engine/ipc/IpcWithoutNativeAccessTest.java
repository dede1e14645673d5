package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client JVM started without native access has no futex: it says why, then waits with timed parks,
 * and still does a whole reserve, write, commit and acquire against the engine.
 */
class IpcWithoutNativeAccessTest
{
    @TempDir
    Path directory;

    @Test
    void aClientWithoutNativeAccessFallsBackToTimedParksAndSaysWhy() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 16)))
        {
            final Path out = directory.resolve("child.out");
            final Process child = new ProcessBuilder(List.of(
                ProcessHandle.current().info().command().orElseThrow(), "-cp", System.getProperty("java.class.path"),
                IpcRoundTripClient.class.getName(), IpcTestSupport.socket(engine).toString()))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            try
            {
                assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("the client finished").isTrue();
            }
            finally
            {
                child.destroyForcibly();
            }
            final String output = Files.readString(out);
            assertThat(output).contains("OK futex=false");
            assertThat(output).contains("Futex unavailable, falling back").contains("--enable-native-access");
            assertThat(child.exitValue()).isZero();
        }
    }
}
