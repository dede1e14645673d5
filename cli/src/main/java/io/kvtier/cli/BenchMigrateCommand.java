package io.kvtier.cli;

import io.kvtier.bench.migrate.MigrationBenchmark;
import io.kvtier.engine.config.ConfigException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench migrate}: an engine's migration between two POSIX L3 tiers beside a raw copy of
 * as many files between the same directories in the same run, and a client's request latency with and
 * without a migration running.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine in this process (IPC off) on two POSIX L3 tiers, fast (in --fast-dir) then slow (in --slow-dir), each in a"
            + " directory of the run's own that is removed at the end.",
        "Throughput: each run writes --pages new pages (their backups go to fast), evicts them from the pool, and asks the engine's"
            + " operations to migrate every one to slow (copy, retention move, --concurrency copies in flight, a rate limit far above"
            + " the disk), timed from the request to the migration's end. Beside it, alternating which goes first, the baseline: as many"
            + " files of the same size copied from fast's directory to slow's with Java NIO as the tier writes (temp file, fsync when"
            + " --fsync, rename; the source deleted), on one thread and on --concurrency threads. Medians and ranges over --runs.",
        "Foreground: a client session acquires and releases --request-pages resident pages --requests times, each request timed;"
            + " once with no migration and once while a migration of --background-pages fresh pages runs, alternating. Prints p50, p99, p99.9"
            + " and max of both, and the share of the loop the migration covered.",
        "Every migration must copy every page with no failure or refusal, and every page migrated is read back from L3 at the end"
            + " and must hold the bytes written; otherwise the command exits with " + ExitCode.CORRUPT + "."},
    footer = {"", "Examples:", "  kvtier bench migrate", "  kvtier bench migrate --json --runs 5 --pages 4096 --page-size 256KiB",
        "  kvtier bench migrate --tier-setting io=channel", "  kvtier bench migrate --fast-dir /mnt/nvme --slow-dir /mnt/shared --fsync"})
public final class BenchMigrateCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--fast-dir", paramLabel = "DIR",
        description = "Where the fast tier's directory (and the raw copy's sources) go, in a directory of the run's own. Default: the temporary directory (${sys:java.io.tmpdir}).")
    Path fastDir;

    @Option(names = "--slow-dir", paramLabel = "DIR",
        description = "Where the slow tier's directory (and the raw copy's targets) go, in a directory of the run's own. Default: the temporary directory (${sys:java.io.tmpdir}).")
    Path slowDir;

    @Option(names = "--page-size", defaultValue = "64KiB", paramLabel = "SIZE", description = "Payload bytes per page, a multiple of 4KiB. Default: ${DEFAULT-VALUE}.")
    ByteSize pageSize;

    @Option(names = "--pages", defaultValue = "" + MigrationBenchmark.DEFAULT_PAGES, paramLabel = "N",
        description = "Pages per migration and per raw copy. Default: ${DEFAULT-VALUE}.")
    int pages;

    @Option(names = "--runs", defaultValue = "" + MigrationBenchmark.DEFAULT_RUNS, paramLabel = "N",
        description = "Runs, each measuring the migration, both raw copies and both foreground loops, alternating which goes first. Default: ${DEFAULT-VALUE}.")
    int runs;

    @Option(names = "--concurrency", defaultValue = "" + MigrationBenchmark.DEFAULT_CONCURRENCY, paramLabel = "N",
        description = "Copies in flight in a migration (migration.<source>.concurrency), and threads of the concurrent raw copy. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(names = "--fsync", description = "Give both tiers fsync=true, and force each file of the raw copy to disk before its rename.")
    boolean fsync;

    @Option(names = "--requests", defaultValue = "" + MigrationBenchmark.DEFAULT_REQUESTS, paramLabel = "N",
        description = "Foreground requests per loop. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(names = "--request-pages", defaultValue = "" + MigrationBenchmark.DEFAULT_REQUEST_KEYS, paramLabel = "N",
        description = "Pages each foreground request acquires. Default: ${DEFAULT-VALUE}.")
    int requestPages;

    @Option(names = "--background-pages", paramLabel = "N",
        description = "Pages of the migration that runs under the foreground loop, enough to outlast it (the share it covered is printed)."
            + " Default: " + MigrationBenchmark.DEFAULT_BACKGROUND_FACTOR + " × --pages.")
    Integer backgroundPages;

    @Option(names = "--tier-setting", paramLabel = "KEY=VALUE",
        description = "A setting of both tiers, as tier.<name>.KEY in the engine's config (e.g. io=channel, the POSIX tier's FileChannel path,"
            + " the raw copy's own; io-threads=4); repeatable.")
    Map<String, String> tierSettings = new LinkedHashMap<>();

    @Option(names = "--json", description = "Print one JSON object: throughput (migration, raw_copy_1_thread, raw_copy_concurrent, ratio), foreground"
        + " (without_migration, with_migration, p99_ratio, migration_overlap), rounds, and check (pages asked, migrated, read back, pages_verified).")
    boolean json;

    @CommandLine.ParentCommand
    BenchCommand bench;

    @Override
    public Integer call() throws Exception
    {
        final var err = spec.commandLine().getErr();
        final Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        final MigrationBenchmark.Plan plan;
        try
        {
            if (pageSize.bytes() > Integer.MAX_VALUE - 4096)
            {
                throw new IllegalArgumentException("--page-size " + pageSize.bytes() + " is too large");
            }
            plan = new MigrationBenchmark.Plan(fastDir != null ? fastDir : tmp, slowDir != null ? slowDir : tmp, (int)pageSize.bytes(), pages, runs,
                concurrency, fsync, requests, requestPages,
                backgroundPages != null ? backgroundPages : (int)Math.min(1_000_000, (long)MigrationBenchmark.DEFAULT_BACKGROUND_FACTOR * pages), tierSettings);
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        if (bench == null || !bench.main.verbose)
        {
            // The figures are the output; the engine's and the tiers' start-up lines would only interleave with them.
            Logging.atLeast(java.util.logging.Level.WARNING);
        }
        final MigrationBenchmark.Result result;
        try
        {
            result = MigrationBenchmark.measure(plan, json ? null : err);
        }
        catch (final ConfigException ex)
        {
            err.println("kvtier: the engine refused the benchmark's settings: " + ex.getMessage());
            return ExitCode.CONFIG;
        }
        catch (final IOException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.FAILURE;
        }
        catch (final IllegalStateException ex)
        {
            err.println("kvtier: the benchmark failed its own check: " + ex.getMessage());
            return ExitCode.FAILURE;
        }
        final var out = spec.commandLine().getOut();
        out.println(json ? result.toJson() : result.toText());
        out.flush();
        if (!result.check().verified())
        {
            err.println("kvtier: the migrated pages did not all check out: " + String.join("; ", result.check().problems()));
            return ExitCode.CORRUPT;
        }
        return ExitCode.OK;
    }
}
