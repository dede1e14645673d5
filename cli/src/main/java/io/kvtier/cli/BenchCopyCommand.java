package io.kvtier.cli;

import io.kvtier.bench.copy.PageCopyBenchmark;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench copy}: page copies inside the pool through the engine's own copy path, against
 * libc {@code memcpy} on the same buffers, interleaved in one run.
 */
@Command(name = "copy", mixinStandardHelpOptions = true,
    description = {
        "Copies pages from one half of a pool (created in /dev/shm, or the temporary directory, like the engine's) into the other"
            + " through the engine's copy path, MemorySegment.copy between the pool's payload slices, and, as the baseline, through"
            + " libc memcpy called by FFM on the same slices.",
        "For each page size both loops are warmed up (compiled) first; then --rounds rounds each time a block of copies with each"
            + " method, in alternating order, so load from elsewhere on the machine falls on both alike. It prints the median GB/s of"
            + " each, the median of the rounds' ratios (goal: at least " + PageCopyBenchmark.GOAL_RATIO + ") and each one's fastest block. Every destination"
            + " page is checked against its source at the end."},
    footer = {"", "Examples:", "  kvtier bench copy", "  kvtier bench copy --json --page-sizes 64KiB,4MiB --rounds 500"})
public final class BenchCopyCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--page-sizes", split = ",", paramLabel = "SIZE",
        description = "Page sizes, multiples of 4KiB. Default: 4KiB,16KiB,64KiB,256KiB,1MiB,4MiB.")
    List<ByteSize> pageSizes;

    @Option(names = "--pool-size", defaultValue = "64MiB", paramLabel = "SIZE",
        description = "About how large each page size's pool is (at least 4 pages): copies walk all of it. Default: ${DEFAULT-VALUE}.")
    ByteSize poolSize;

    @Option(names = "--rounds", defaultValue = "200", paramLabel = "N", description = "Timed rounds per page size. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--block", defaultValue = "2ms", paramLabel = "DURATION",
        description = "About how long one timed block of copies takes; short, so that on a loaded machine most rounds run undisturbed. Default: ${DEFAULT-VALUE}.")
    Duration block;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where the pools go. Default: /dev/shm, or the temporary directory without it.")
    Path directory;

    @Option(names = "--json", description = "Print one JSON object whose results array has page_bytes, kvtier_gb_s, memcpy_gb_s and ratio per page size.")
    boolean json;

    @Override
    public Integer call()
    {
        return BenchRun.call(spec, () -> new PageCopyBenchmark.Plan(pageSizes == null ? PageCopyBenchmark.DEFAULT_PAGE_SIZES
                : pageSizes.stream().map(ByteSize::bytes).toList(), poolSize.bytes(), rounds, block.toNanos()),
            directory, PageCopyBenchmark::measure, "cannot create the benchmark's pool", result -> json ? result.toJson() : result.toText());
    }
}
