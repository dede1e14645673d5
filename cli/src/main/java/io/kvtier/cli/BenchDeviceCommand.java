package io.kvtier.cli;

import io.kvtier.bench.device.DeviceCopyBenchmark;
import io.kvtier.device.KvShape;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench device}: DEVICE_LOAD of pinned pages into a client's KV buffers against the
 * client copying the same pages itself, alternating in one run.
 */
@Command(name = "device", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine with IPC on and attaches a client whose KV cache is a shared-memory file registered as HOST_FILE buffers"
            + " (one tensor per layer and K/V, as vLLM keeps them). Setup saves pages with DEVICE_SAVE. Then, per batch size, rounds"
            + " alternate between the engine (ACQUIRE, one DEVICE_LOAD of the batch, timed, RELEASE) and the baseline, the client"
            + " copying every slot of the same pinned pages from the mapped pool into the same blocks itself (timed).",
        "It prints the median GB/s of KV delivered by each, the median of the rounds' ratios and the median time of one batch."
            + " The last round of each side is checked block by block against the blocks the pages were saved from.",
        "Without a GPU (as on a machine without an NVIDIA driver) both sides are host copies: the ratio is the cost of asking the engine"
            + " (ring round trip, hand-off to its device thread), not of DMA."},
    footer = {"", "Examples:", "  kvtier bench device", "  kvtier bench device --json --batches 1,16 --layers 61 --heads 1 --head-dim 576 --tensors 1"})
public final class BenchDeviceCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--layers", defaultValue = "32", paramLabel = "N", description = "Layers. Default: ${DEFAULT-VALUE} (a Llama-3-8B).")
    int layers;

    @Option(names = "--tensors", defaultValue = "2", paramLabel = "N", description = "Tensors per layer: 2 (K and V) or 1 (an MLA latent). Default: ${DEFAULT-VALUE}.")
    int tensors;

    @Option(names = "--block-tokens", defaultValue = "16", paramLabel = "N", description = "Tokens per block. Default: ${DEFAULT-VALUE}.")
    int blockTokens;

    @Option(names = "--heads", defaultValue = "8", paramLabel = "N", description = "KV heads. Default: ${DEFAULT-VALUE}.")
    int heads;

    @Option(names = "--head-dim", defaultValue = "128", paramLabel = "N", description = "Elements per head. Default: ${DEFAULT-VALUE}.")
    int headDim;

    @Option(names = "--element-bytes", defaultValue = "2", paramLabel = "N", description = "Bytes per element. Default: ${DEFAULT-VALUE} (bf16).")
    int elementBytes;

    @Option(names = "--batches", split = ",", paramLabel = "N", description = "Blocks per DEVICE_LOAD, each measured in turn. Default: 1,8,32.")
    List<Integer> batches;

    @Option(names = "--rounds", defaultValue = "50", paramLabel = "N", description = "Timed rounds per batch size and side. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where the pool and the buffer files go. Default: /dev/shm, or the temporary directory without it.")
    Path directory;

    @Option(names = "--json", description = "Print one JSON object whose results array has blocks, kvtier_gb_s, client_gb_s, ratio, kvtier_p50_us and"
        + " client_p50_us per batch size.")
    boolean json;

    @Override
    public Integer call()
    {
        return BenchRun.call(spec, () -> new DeviceCopyBenchmark.Plan(new KvShape(layers, tensors, blockTokens, heads, headDim, elementBytes),
                batches == null ? DeviceCopyBenchmark.DEFAULT_BATCHES : batches, rounds),
            directory, DeviceCopyBenchmark::measure, "cannot create the benchmark's files", result -> json ? result.toJson() : result.toText());
    }
}
