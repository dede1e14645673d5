package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.spi.StorageTierProvider;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code kvtier chaos} in short campaigns of fixed seeds: one that must end with every must-be-zero figure
 * at zero and every fault kind injected, one with Java, C and Python clients side by side, each verifying
 * pages and killed, and one with a client (C where it can be built) that commits another key's bytes, which
 * the campaign must catch and fail with exit code 5 and a replay file.
 */
class ChaosCommandTest
{
    /** The campaign's own faults, each of which the first round injects once. */
    private static final List<String> PROCESS_FAULTS = List.of("client-kill-pins", "client-kill-write", "client-kill-random", "client-stop",
        "engine-kill", "fd-limit", "pool-full");
    private static final List<String> HOSTILE = List.of("hostile-garbage-hello", "hostile-slot-range", "hostile-slot-held",
        "hostile-namespace", "hostile-unknown-type", "hostile-malformed", "hostile-oversized", "hostile-never-reads",
        "hostile-changed-after-queueing");
    private static final List<String> TIER_FAULTS = List.of("eio-read", "eio-write", "enospc-write", "slow-read", "stall-read", "block-call",
        "short-read", "torn-write", "bit-flip", "replace", "late-write");

    /** The campaign's work directory under target/, kept after the test: its engine logs are what explains a failure. */
    private static Path workDir(final String name) throws Exception
    {
        final Path dir = Path.of("target", name).toAbsolutePath();
        if (Files.exists(dir))
        {
            try (var files = Files.walk(dir))
            {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return Files.createDirectories(dir);
    }

    /** @return the pages the campaign's clients saw acknowledged as backed up, every language's */
    private static long acknowledged(final JsonNode report)
    {
        long pages = 0;
        for (final JsonNode figures : report.get("clients_by_language"))
        {
            pages += figures.get("pages_acknowledged").asLong();
        }
        return pages;
    }

    @Test
    void shouldServeNoWrongByteLoseNothingAndLeakNothingUnderEveryFault() throws Exception
    {
        final Path dir = workDir("chaos-seed-20");
        // Every kind at least twice: past the 40 s the campaign draws only the kinds still short.
        final CliFixture.Result result = CliFixture.run("chaos", "--duration", "40s", "--min-each", "2", "--overtime", "4m", "--seed", "20", "--json",
            "--work-dir", dir.toString());

        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.err()).isZero();
        final JsonNode report = new ObjectMapper().readTree(result.out());
        assertThat(report.get("wrong_bytes_served").asLong()).as("wrong_bytes_served").isZero();
        assertThat(report.get("pages_lost").asLong()).as("pages_lost").isZero();
        assertThat(report.get("pins_leaked").asLong()).as("pins_leaked").isZero();
        assertThat(report.get("reservations_leaked").asLong()).as("reservations_leaked").isZero();
        assertThat(report.get("pages_verified").asLong()).as("pages_verified").isPositive();
        assertThat(acknowledged(report)).as("pages acknowledged as backed up: the lost-page check had pages to check").isPositive();
        assertThat(report.get("seed").asLong()).isEqualTo(20);
        final List<String> expected = new ArrayList<>(PROCESS_FAULTS);
        expected.addAll(HOSTILE);
        if (!result.out().contains("\"l3-full\"") || !result.out().contains("\"shm-full\""))
        {
            // Both need a tmpfs the command mounts: where it may not, it says so and skips them.
            assertThat(result.err()).contains("skipped: cannot mount a tmpfs");
        }
        if (ServiceLoader.load(StorageTierProvider.class).stream().anyMatch(p -> "faults".equals(p.get().type())))
        {
            expected.addAll(TIER_FAULTS);
        }
        else
        {
            assertThat(result.err()).contains("tier faults are not available");
        }
        for (final String kind : expected)
        {
            assertThat(report.get("faults").path(kind).asLong()).as("fault %s injected twice (--min-each 2); report %s", kind, result.out())
                .isGreaterThanOrEqualTo(2);
        }
        assertThat(report.get("min_each").asInt()).isEqualTo(2);
        assertThat(report.get("short_of_min_each").size()).as("kinds short of --min-each: %s", report.get("short_of_min_each")).isZero();
        assertThat(report.get("overtime_s").asDouble()).as("overtime_s").isBetween(0.0, 240.0 + 60.0);
        assertThat(report.get("client_kills").asLong()).isGreaterThanOrEqualTo(3);
        assertThat(report.get("client_stops").asLong()).isPositive();
        assertThat(report.get("engine_restarts").asLong()).isGreaterThanOrEqualTo(2);
        assertThat(report.get("hostile_refused").asLong()).isPositive();
        assertThat(report.get("tiers")).hasSize(2);
    }

    @Test
    void shouldRefuseANegativeMinEachOrOvertimeNamingTheOption()
    {
        final CliFixture.Result minEach = CliFixture.run("chaos", "--duration", "1s", "--min-each", "-1");
        assertThat(minEach.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(minEach.err()).contains("--min-each: -1 is negative");
        final CliFixture.Result overtime = CliFixture.run("chaos", "--duration", "1s", "--min-each", "5", "--overtime", "-5s");
        assertThat(overtime.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(overtime.err()).contains("--overtime").contains("'-5s' is not a duration");
    }

    @Test
    void shouldCatchAClientThatCommitsWrongBytesAndExitFiveWithAReplayFile() throws Exception
    {
        // The wrong writer is a C client beside a Java one where the C client can be built: then the C readers' check,
        // the Java readers' and the healed phase's all meet a C process's wrong bytes. Without gcc it is a Java client.
        final boolean c = onPath("gcc") && onPath("make");
        final Path dir = workDir("chaos-seed-21");
        final List<String> args = new ArrayList<>(List.of("chaos", "--duration", "5s", "--seed", "21", "--json", "--client-processes", "2",
            "--work-dir", dir.toString()));
        args.addAll(c ? List.of("--clients", "java,c", "--wrong-writer", "c") : List.of("--wrong-writer"));
        final CliFixture.Result result = CliFixture.run(args.toArray(String[]::new));

        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.err()).isEqualTo(ExitCode.CORRUPT);
        final JsonNode report = new ObjectMapper().readTree(result.out());
        assertThat(report.get("wrong_bytes_served").asLong()).as("wrong_bytes_served").isPositive();
        final Path replay = dir.resolve("replay.json");
        assertThat(replay).exists();
        final JsonNode saved = new ObjectMapper().readTree(Files.readString(replay));
        assertThat(saved.get("seed").asLong()).isEqualTo(21);
        assertThat(saved.get("events").toString()).contains("wrong bytes");
        assertThat(result.err()).contains("kvtier chaos --replay " + replay);
        if (c)
        {
            assertThat(report.get("clients_by_language").get("c").get("wrong_bytes_served").asLong()).as("wrong pages the C clients read; %s",
                report.get("clients_by_language")).isPositive();
            assertThat(saved.get("events").toString()).contains("(c) read wrong bytes");
        }
    }

    /** @return whether a program is on the PATH */
    private static boolean onPath(final String program)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program)))
            {
                return true;
            }
        }
        return false;
    }

    /** Skips, naming what to install, where the C or Python chaos clients cannot be built or run. */
    private static void assumeNativeClients(final boolean python)
    {
        assumeTrue(onPath("gcc") && onPath("make"), "the C chaos client is built with gcc and make: apt-get install gcc make");
        assumeTrue(!python || onPath("python3"), "the Python chaos client needs python3: apt-get install python3");
    }

    @Test
    void shouldRunJavaCAndPythonClientsSideBySideEachVerifyingAndKilled() throws Exception
    {
        assumeNativeClients(true);
        final Path dir = workDir("chaos-seed-349");
        // Seed 349 draws the three client kills first, so each language's client is killed within 10 s (kills go to the
        // languages in turn).
        final CliFixture.Result result = CliFixture.run("chaos", "--duration", "10s", "--seed", "349", "--json", "--clients", "java,c,python",
            "--client-processes", "3", "--work-dir", dir.toString());

        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.err()).isZero();
        final JsonNode report = new ObjectMapper().readTree(result.out());
        for (final String figure : List.of("wrong_bytes_served", "pages_lost", "pins_leaked", "reservations_leaked"))
        {
            assertThat(report.get(figure).asLong()).as(figure).isZero();
        }
        final JsonNode languages = report.get("clients_by_language");
        assertThat(languages.size()).as("languages in %s", languages).isEqualTo(3);
        long verified = 0;
        for (final String language : List.of("java", "c", "python"))
        {
            final JsonNode figures = languages.get(language);
            assertThat(figures.get("ran").asBoolean()).as("%s ran: %s", language, figures).isTrue();
            assertThat(figures.get("pages_verified").asLong()).as("%s pages verified: %s", language, figures).isPositive();
            assertThat(figures.get("pages_committed").asLong()).as("%s pages committed: %s", language, figures).isPositive();
            assertThat(figures.get("killed").asLong()).as("%s clients killed: %s", language, figures).isPositive();
            assertThat(figures.get("wrong_bytes_served").asLong()).as("%s wrong bytes: %s", language, figures).isZero();
            verified += figures.get("pages_verified").asLong();
        }
        assertThat(acknowledged(report)).as("pages acknowledged as backed up: the lost-page check had pages to check").isPositive();
        // The healed phase's reads are the campaign's own (Java), counted in the total alone.
        assertThat(report.get("pages_verified").asLong()).isGreaterThanOrEqualTo(verified);
        assertThat(report.get("client_kills").asLong()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void shouldLeaveNoEngineNoClientAndNoMountWhenStoppedBySignal() throws Exception
    {
        final Path dir = workDir("chaos-stopped");
        final Path err = dir.resolve("chaos.err");
        final Process chaos = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "chaos", "--duration", "10m",
            "--seed", "22", "--work-dir", dir.resolve("work").toString()).redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
        long enginePid = -1;
        try
        {
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(90);
            final java.util.regex.Pattern started = java.util.regex.Pattern.compile("engine started, pid (\\d+)");
            while (true)
            {
                final String text = Files.readString(err);
                final java.util.regex.Matcher matcher = started.matcher(text);
                // Once a fault was drawn, the clients run too.
                if (matcher.find() && text.indexOf("chaos: ", matcher.end()) > 0)
                {
                    enginePid = Long.parseLong(matcher.group(1));
                    break;
                }
                assertThat(chaos.isAlive()).as("chaos runs; stderr:%n%s", text).isTrue();
                assertThat(System.nanoTime()).as("the engine started in 90 s; stderr:%n%s", text).isLessThan(deadline);
                Thread.sleep(50);
            }
        }
        finally
        {
            chaos.destroy();
            assertThat(chaos.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("chaos ends on SIGTERM").isTrue();
        }
        final String work = dir.resolve("work").toString();
        try
        {
            ProcessHandle.of(enginePid).ifPresent(handle -> handle.onExit().orTimeout(30, java.util.concurrent.TimeUnit.SECONDS)
                .exceptionally(ex -> handle).join());
            assertThat(ProcessHandle.of(enginePid).map(ProcessHandle::isAlive).orElse(false)).as("the engine, pid %d, still runs", enginePid).isFalse();
            assertThat(ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(work)))
                .as("processes of the campaign still running").isEmpty();
            assertThat(Files.readString(Path.of("/proc/mounts"))).as("mounts under the work directory").doesNotContain(work);
        }
        finally
        {
            // What a failed run leaves behind is not left for the next test.
            ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(work)).forEach(ProcessHandle::destroyForcibly);
            for (final String mount : List.of("shm", "l3a"))
            {
                if (Files.readString(Path.of("/proc/mounts")).contains(work + "/" + mount))
                {
                    new ProcessBuilder("umount", "-l", work + "/" + mount).inheritIO().start().waitFor();
                }
            }
        }
    }
}
