package io.kvtier.cli;

import io.kvtier.bench.tier.Fio;
import io.kvtier.bench.tier.TierBenchmark;
import io.kvtier.engine.tier.TierRegistry;
import io.kvtier.spi.TierConfigException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench tier}: writes then reads pages through a tier's SPI at several page sizes and
 * queue depths, beside a baseline doing the same outside kvtier in the same run: fio with io_uring and
 * direct I/O for directory backends, Mooncake's own C client for {@code mooncake}.
 */
@Command(name = "tier", mixinStandardHelpOptions = true,
    description = {
        "Writes new pages, then reads them back, through a storage tier's SPI (StorageTier.write and read), batched as the engine"
            + " batches tier I/O: batches of at most --max-batch keys (the engine's l3.max-batch), as many in flight as make up the"
            + " queue depth, each refilled and resubmitted as soon as its last key completes. Each page goes as the engine hands a"
            + " tier its pages: a frame of the page and a 4 KiB trailer block (a trailer and zeros). Prints MB/s (of page bytes, as fio"
            + " counts its blocks) and IOPS per op, page size and queue depth.",
        "Beside each case, in the same run and alternating which goes first, fio does the same: one file of the case's bytes in"
            + " --dir, block size = page size, iodepth = queue depth, ioengine=io_uring, direct=1, sequential write then read. Both sides"
            + " write into space they wrote before: fio over its file of the page size, laid out by an untimed write job, the tier into"
            + " the space its previous run's pages left (each run's pages are removed after it, and each page size starts with a warm-up"
            + " of a case's bytes written, read and removed, all untimed). Without fio the fio columns are n/a (null in JSON) and the"
            + " command that installs it is printed.",
        "For --backend mooncake the baseline is instead a C program against the same libmooncake_store.so (compiled at bench time with"
            + " --cc from the copy inside kvtier, against the real install $KVTIER_MOONCAKE_HOME names)"
            + " making the same batch_put_from / batch_get_into calls from a registered buffer with the same page sizes, pages, queue depths"
            + " and batch bound. Unless --tier-setting master=HOST:PORT names a master, the run starts mooncake_master on loopback and a C"
            + " process holding the only segment; the tier and the C client hold none (global-segment-size=0), so on both sides every page"
            + " crosses TCP. Each run's pages are removed after it (untimed). The JSON's baseline, baseline_describe and baseline_mb_s"
            + " name the baseline and the topology for every backend. For --backend 3fs fio runs in --dir through the kernel while the"
            + " tier goes through USRBIO (its dir a --tier-setting), and baseline_describe says what that ratio compares.",
        "Reads bypass the page cache on both sides: the posix backend gets direct-io=true (and fanout-levels=1) unless"
            + " --tier-setting says otherwise, as fio gets direct=1. For the posix backend, --dir also holds the tier's files. Goal:"
            + " at least " + TierBenchmark.GOAL_RATIO + " of fio's throughput for pages of 256KiB and more. Every key must complete OK"
            + " and every page read back must hold the bytes written; everything the run made in --dir is deleted at its end."},
    footer = {"", "Examples:", "  kvtier bench tier --backend posix",
        "  kvtier bench tier --backend posix --json --page-sizes 1MiB --queue-depths 1,16 --bytes 1GiB",
        "  kvtier bench tier --backend posix --tier-setting io-threads=8 --tier-setting fsync=true",
        "  kvtier bench tier --backend mooncake --json"})
public final class BenchTierCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--backend", defaultValue = "posix", paramLabel = "TYPE",
        description = "The tier provider's type, as in tier.<name>.type; any provider on the class path, found as the engine finds them (ServiceLoader). Default: ${DEFAULT-VALUE}.")
    String backend;

    @Option(names = "--tier-setting", paramLabel = "KEY=VALUE",
        description = "A setting of the tier, as tier.<name>.KEY in the engine's config (e.g. io-threads=8, direct-io=false, io=uring once the"
            + " posix tier has it); repeatable, over the benchmark's defaults.")
    Map<String, String> tierSettings = new LinkedHashMap<>();

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where fio's file and (posix) the tier's files go, in a directory of the run's own. Default: the temporary directory (${sys:java.io.tmpdir}).")
    Path directory;

    @Option(names = "--page-sizes", split = ",", paramLabel = "SIZE", description = "Page sizes, multiples of 4KiB; each tier object is a page's frame, 4KiB more. Default: 64KiB,256KiB,1MiB,4MiB.")
    List<ByteSize> pageSizes;

    @Option(names = "--queue-depths", split = ",", paramLabel = "N", description = "Keys in flight. Default: 1,4,16,64.")
    List<Integer> queueDepths;

    @Option(names = "--bytes", defaultValue = "128MiB", paramLabel = "SIZE",
        description = "Bytes written and read per case and run (at least queue-depth pages). The tier's files stay until the run ends: page sizes"
            + " × queue depths × runs × this much. Default: ${DEFAULT-VALUE}.")
    ByteSize bytes;

    @Option(names = "--ops", split = ",", paramLabel = "OP", description = "Which to report: write, read or both (a read case always writes its pages first). Default: write,read.")
    List<String> ops;

    @Option(names = "--runs", defaultValue = "1", paramLabel = "N", description = "Runs per case, alternating with fio; medians are reported (the ratio: the median of the runs' ratios). Default: ${DEFAULT-VALUE}.")
    int runs;

    @Option(names = "--max-batch", defaultValue = "" + TierBenchmark.DEFAULT_MAX_BATCH, paramLabel = "N",
        description = "Most keys per batch, as the engine's l3.max-batch. Default: ${DEFAULT-VALUE}.")
    int maxBatch;

    @Option(names = "--fio", defaultValue = "fio", paramLabel = "PATH", description = "The fio to run. Default: ${DEFAULT-VALUE} (on the PATH).")
    String fio;

    @Option(names = "--no-fio", description = "Leave fio out (its columns are n/a).")
    boolean noFio;

    @Option(names = "--cc", defaultValue = "gcc", paramLabel = "PATH",
        description = "The C compiler that builds the mooncake backend's C baseline. Default: ${DEFAULT-VALUE} (on the PATH).")
    String compiler;

    @Option(names = "--no-baseline", description = "Leave the baseline out, whichever it is (fio or the C program; its columns are n/a).")
    boolean noBaseline;

    @Option(names = "--json", description = "Print one JSON object whose results array has op, page_bytes, queue_depth, kvtier_mb_s, kvtier_iops,"
        + " baseline_mb_s, baseline_iops, fio_mb_s, fio_iops and ratio per case (the baseline's null without it; fio's null when the"
        + " baseline is not fio).")
    boolean json;

    @CommandLine.ParentCommand
    BenchCommand bench;

    @Override
    public Integer call() throws Exception
    {
        final var err = spec.commandLine().getErr();
        final TierBenchmark.Plan plan;
        try
        {
            plan = new TierBenchmark.Plan(backend, tierSettings, directory != null ? directory : Path.of(System.getProperty("java.io.tmpdir")),
                pageSizes == null ? TierBenchmark.DEFAULT_PAGE_SIZES : pageSizes.stream().map(ByteSize::bytes).toList(),
                queueDepths == null ? TierBenchmark.DEFAULT_QUEUE_DEPTHS : queueDepths, bytes.bytes(), ops == null ? List.of("write", "read") : ops,
                runs, maxBatch, noFio || noBaseline ? null : fio, noBaseline ? null : compiler);
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        if (!TierRegistry.providers().containsKey(backend))
        {
            err.println("kvtier: --backend " + backend + ": no tier provider of that type; found: " + String.join(", ", TierRegistry.providers().keySet()));
            return ExitCode.USAGE;
        }
        if (bench == null || !bench.main.verbose)
        {
            // The figures are the output; the tier's start-up lines would only interleave with them.
            Logging.atLeast(java.util.logging.Level.WARNING);
        }
        if (!noFio && !noBaseline && !backend.equals("mooncake"))
        {
            Fio.missing(fio).ifPresent(reason -> err.println("kvtier: fio figures will be n/a: " + reason));
        }
        final TierBenchmark.Result result;
        try
        {
            result = TierBenchmark.measure(plan, json ? null : err);
        }
        catch (final TierConfigException ex)
        {
            err.println("kvtier: the " + backend + " tier refused its settings: " + ex.getMessage());
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
        return ExitCode.OK;
    }
}
