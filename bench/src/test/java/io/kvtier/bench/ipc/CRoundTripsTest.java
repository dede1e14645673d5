package io.kvtier.bench.ipc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How bench ipc finds, runs and reads the C bench client, with stand-in programs in place of the real one (the real one
 * against an engine is BenchIpcCommandTest's): its line read among other output, what {@link CRoundTrips#missing} says,
 * the arguments passed in the order the program reads them, and a failing program's output in the error.
 */
class CRoundTripsTest
{
    @TempDir
    Path dir;

    @Test
    void shouldReadTheLineOfFiguresAmongOtherOutput() throws IOException
    {
        final CRoundTrips.Figures figures = CRoundTrips.parse("a line before\nkvtier-c-bench 1000 1200 5000 9000 20000 512000 50000000\n");
        assertThat(figures).isEqualTo(new CRoundTrips.Figures(1000, 1200, 5000, 9000, 20000, 512000, 50_000_000));
        assertThat(figures.batchedKeysPerSecond()).isEqualTo(10_240_000.0);
        assertThat(CRoundTrips.parse("kvtier-c-bench 10 1 2 3 4 0 0").batchedKeysPerSecond()).as("no batched lookups").isZero();
    }

    @Test
    void shouldFailNamingTheOutputWhenThereIsNoLineOfFigures()
    {
        assertThatThrownBy(() -> CRoundTrips.parse("kvtier-c-bench 10 1 2 3\n")).isInstanceOf(IOException.class)
            .hasMessage("the C round trips printed no figures: kvtier-c-bench 10 1 2 3\n");
        assertThatThrownBy(() -> CRoundTrips.parse("kvtier-c-bench 10 1 2 3 4 x 0")).isInstanceOf(IOException.class)
            .hasMessageContaining("not numbers: kvtier-c-bench 10 1 2 3 4 x 0");
    }

    @Test
    void shouldSayWhatIsMissingAndHowToBuildIt() throws IOException
    {
        assertThat(CRoundTrips.missing(null)).isEqualTo("the C client (clients/c/bench/kvtier_bench_client.c) is not in this checkout;"
            + " give its directory with --c-client");
        assertThat(CRoundTrips.missing(dir)).isEqualTo("the C bench client " + dir.resolve("build").resolve("kvtier_bench_client")
            + " is not built (./mvnw -pl clients compile, or make -C " + dir + ", builds it; it needs gcc and make)");
        program("exit 0");
        assertThat(CRoundTrips.missing(dir)).isNull();
    }

    @Test
    void shouldFindTheCClientOfTheCheckoutItRunsFrom()
    {
        assertThat(CRoundTrips.findClient()).hasValueSatisfying(c -> assertThat(c.resolve(CRoundTrips.SOURCE)).isRegularFile());
    }

    @Test
    void shouldPassTheCountsInTheOrderTheProgramReadsThem() throws Exception
    {
        // The stand-in fails on a wait it does not know, as the program does, and echoes back the counts it was given.
        program("case \"$4\" in backoff|awake) ;; *) echo \"wait=$4\" >&2; exit 2;; esac",
            "echo \"kvtier-c-bench $3 $2 3 4 5 ${5:-0} ${6:-0}\"");
        assertThat(CRoundTrips.measure(dir, Path.of("/nowhere.sock"), 7, 300, CRoundTrips.AWAKE, 64, 20))
            .isEqualTo(new CRoundTrips.Figures(300, 7, 3, 4, 5, 64, 20));
        assertThat(CRoundTrips.measure(dir, Path.of("/nowhere.sock"), 7, 300, CRoundTrips.BACKOFF))
            .as("no batched part: the two counts not passed").isEqualTo(new CRoundTrips.Figures(300, 7, 3, 4, 5, 0, 0));
    }

    @Test
    void shouldFailWithTheProgramsOutputWhenItFails() throws IOException
    {
        program("echo 'kvtier_bench_client: kvt_lookup failed: ERR_ENGINE_GONE (heartbeat stopped)' >&2", "exit 1");
        assertThatThrownBy(() -> CRoundTrips.measure(dir, Path.of("/nowhere.sock"), 1, 2, CRoundTrips.BACKOFF)).isInstanceOf(IOException.class)
            .hasMessageContaining("failed with exit code 1: kvtier_bench_client: kvt_lookup failed: ERR_ENGINE_GONE (heartbeat stopped)");
    }

    @Test
    void shouldGiveABatchedRunMoreTimeThanItsOneKeyPartAlone()
    {
        assertThat(CRoundTrips.timeout(20_000, 100_000, 1024, 5000)).isGreaterThan(CRoundTrips.timeout(20_000, 100_000, 0, 5000));
        assertThat(CRoundTrips.timeout(20_000, 15_000_000, 0, 0)).as("a long run is not cut short").isGreaterThan(CRoundTrips.timeout(0, 1, 0, 0));
    }

    /** A shell script in the program's place. */
    private void program(final String... lines) throws IOException
    {
        final Path program = dir.resolve(CRoundTrips.PROGRAM);
        Files.createDirectories(program.getParent());
        Files.writeString(program, "#!/bin/sh\n" + String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwx------"));
    }
}
