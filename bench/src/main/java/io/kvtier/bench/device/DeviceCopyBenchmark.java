package io.kvtier.bench.device;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.KvBufferRegistration;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code kvtier bench device}: what a DEVICE_LOAD costs a client against copying the same pinned pages
 * into its KV buffers itself, in the same run.
 *
 * <p>An engine with IPC on and a client attached; the client's KV cache is a shared-memory file
 * registered as HOST_FILE buffers, in the SEPARATE arrangement (one tensor per layer and K/V, as vLLM
 * keeps them), and a second one holds the blocks the pages are saved from. Setup saves distinct pages
 * with DEVICE_SAVE. Then, for each batch size, rounds alternate which goes first between
 * <ul>
 *   <li><b>engine</b>: ACQUIRE the batch's keys, then one DEVICE_LOAD of them into blocks 0..b-1 (timed:
 *       the request until its answer, so the ring, the hand-off to the device thread and the copies), then RELEASE;</li>
 *   <li><b>client</b> (the baseline): ACQUIRE the same keys, then the client copies every slot of every
 *       pinned page from the mapped pool into the same blocks with {@link MemorySegment#copy} (timed), then RELEASE.</li>
 * </ul>
 * Both move the same bytes through the same kind of copy (the engine's host-buffer copies are
 * {@link MemorySegment#copy} too), so the ratio is the price of asking the engine: the round trip and the
 * thread hop, less what its planner folds. On a GPU with CUDA_IPC buffers the engine's side would be
 * DMA instead; this machine has no GPU, and the command says what it measured. Every block of each
 * batch size's last rounds is compared with the block it was saved from.
 */
public final class DeviceCopyBenchmark
{
    /** Batch sizes by default: one block, a short prefix, a long one. */
    public static final List<Integer> DEFAULT_BATCHES = List.of(1, 8, 32);

    private DeviceCopyBenchmark()
    {
    }

    /**
     * What to measure.
     *
     * @param shape   the KV shape (its page is one block of every layer)
     * @param batches blocks per request, each measured in turn
     * @param rounds  timed rounds per batch size and side
     */
    public record Plan(KvShape shape, List<Integer> batches, int rounds)
    {
        /**
         * @throws IllegalArgumentException naming the bad value
         */
        public Plan
        {
            batches = List.copyOf(batches);
            if (batches.isEmpty() || batches.stream().anyMatch(b -> b < 1 || b > 256))
            {
                throw new IllegalArgumentException("batches=" + batches + " must be 1 to 256 blocks each");
            }
            if (rounds < 1)
            {
                throw new IllegalArgumentException("rounds=" + rounds + " must be at least 1");
            }
        }

        int maxBatch()
        {
            return batches.stream().mapToInt(Integer::intValue).max().orElseThrow();
        }
    }

    /**
     * One batch size's figures.
     *
     * @param batch       blocks per request
     * @param engineGbs   median GB/s of DEVICE_LOAD (10^9 bytes of KV delivered per second)
     * @param clientGbs   median GB/s of the client's own copies
     * @param ratio       median over rounds of the engine's GB/s over the client's in the same round
     * @param engineP50Us median microseconds of one DEVICE_LOAD
     * @param clientP50Us median microseconds of the client's copies of the same batch
     */
    public record Figure(int batch, double engineGbs, double clientGbs, double ratio, double engineP50Us, double clientP50Us)
    {
    }

    /**
     * A run's figures.
     *
     * @param plan      what was measured
     * @param directory where the pool and the buffer files were
     * @param pageBytes bytes of KV per block (page)
     * @param figures   one per batch size
     */
    public record Result(Plan plan, Path directory, long pageBytes, List<Figure> figures)
    {
        /** @return one JSON object with a {@code results} array */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                final KvShape shape = plan.shape();
                json.writeStartObject();
                json.writeStringField("bench", "device");
                json.writeStringField("kvtier_path", "DEVICE_LOAD of pinned pages into HOST_FILE buffers (SEPARATE arrangement): ring, kvtier-device"
                    + " thread, planned copies (MemorySegment.copy)");
                json.writeStringField("baseline", "the client copies each slot of each pinned page from the mapped pool into the same blocks"
                    + " (MemorySegment.copy)");
                json.writeStringField("device", "none: host buffers (a GPU with CUDA_IPC buffers would copy by DMA instead)");
                json.writeStringField("directory", directory.toString());
                json.writeObjectFieldStart("shape");
                json.writeNumberField("layers", shape.layers());
                json.writeNumberField("tensors_per_layer", shape.tensorsPerLayer());
                json.writeNumberField("block_tokens", shape.blockTokens());
                json.writeNumberField("heads", shape.heads());
                json.writeNumberField("head_dim", shape.headDim());
                json.writeNumberField("element_bytes", shape.elementBytes());
                json.writeEndObject();
                json.writeNumberField("page_bytes", pageBytes);
                json.writeNumberField("rounds", plan.rounds());
                json.writeArrayFieldStart("results");
                for (final Figure figure : figures)
                {
                    json.writeStartObject();
                    json.writeNumberField("blocks", figure.batch());
                    json.writeNumberField("kvtier_gb_s", round(figure.engineGbs()));
                    json.writeNumberField("client_gb_s", round(figure.clientGbs()));
                    json.writeNumberField("ratio", round(figure.ratio()));
                    json.writeNumberField("kvtier_p50_us", round(figure.engineP50Us()));
                    json.writeNumberField("client_p50_us", round(figure.clientP50Us()));
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            return text.toString();
        }

        /** @return a table for people */
        public String toText()
        {
            final StringBuilder text = new StringBuilder();
            text.append(String.format(Locale.ROOT, "kvtier bench device: DEVICE_LOAD into host KV buffers against the client copying the same pinned"
                + " pages itself, %d rounds each, pages of %d bytes (%s), in %s%n", plan.rounds(), pageBytes, plan.shape(), directory));
            text.append("no GPU: the engine's copies are host copies here, the same kind as the client's; the ratio is the cost of asking\n");
            text.append(String.format(Locale.ROOT, "%8s %14s %14s %8s %14s %14s%n", "blocks", "kvtier GB/s", "client GB/s", "ratio", "kvtier p50 us",
                "client p50 us"));
            for (final Figure figure : figures)
            {
                text.append(String.format(Locale.ROOT, "%8d %14.2f %14.2f %8.2f %14.1f %14.1f%n", figure.batch(), figure.engineGbs(), figure.clientGbs(),
                    figure.ratio(), figure.engineP50Us(), figure.clientP50Us()));
            }
            return text.toString();
        }

        private static double round(final double value)
        {
            return Math.round(value * 1000) / 1000.0;
        }
    }

    /**
     * Runs the benchmark.
     *
     * @param directory where the pool, its socket and the buffer files go
     * @param plan      what to measure
     * @return the figures
     * @throws IOException              if the files cannot be made
     * @throws IllegalArgumentException if the directory's path is too long for a HOST_FILE handle
     * @throws IllegalStateException    if a copy delivered wrong bytes or the engine refused a step
     */
    public static Result measure(final Path directory, final Plan plan) throws IOException
    {
        final KvShape shape = plan.shape();
        final long pageBytes = KvPageDescriptor.pageLength(shape);
        final long pageSize = (pageBytes + 4095) / 4096 * 4096;
        final int blocks = plan.maxBatch();
        final int pages = 2 * blocks;
        final String name = "kvtier-bench-device-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        final Path pool = directory.resolve(name);
        final Path socket = directory.resolve(name + ".sock");
        // A HOST_FILE handle holds a path of at most 63 bytes: the buffer files get short names.
        final String shortName = "kvb" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 1_000_000;
        final Path sourceFile = directory.toAbsolutePath().resolve(shortName + ".s");
        final Path targetFile = directory.toAbsolutePath().resolve(shortName + ".d");
        if (sourceFile.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > DeviceRequestDescriptor.HANDLE_LENGTH - 1)
        {
            throw new IllegalArgumentException("the directory " + directory + " is too long a path for the KV buffer files: a HOST_FILE handle"
                + " holds at most " + (DeviceRequestDescriptor.HANDLE_LENGTH - 1) + " bytes (use --dir with a shorter one, /dev/shm say)");
        }
        final long tensorBytes = shape.blockBytes() * blocks;
        try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, pool.toString(),
                 EngineConfig.POOL_SIZE, String.valueOf(pageSize * (pages + 8)), EngineConfig.POOL_PAGE_SIZE, String.valueOf(pageSize),
                 "ipc.enabled", "true", "ipc.socket-path", socket.toString())));
             IpcConnection client = IpcConnection.connect(socket, 2 * pages);
             Arena arena = Arena.ofShared())
        {
            final MemorySegment source = create(sourceFile, tensorBytes * shape.slots(), arena);
            final MemorySegment target = create(targetFile, tensorBytes * shape.slots(), arena);
            for (long i = 0; i < source.byteSize(); i += 8)
            {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            final long[] offsets = new long[shape.slots()];
            final Path[] sourceFiles = new Path[shape.slots()];
            final Path[] targetFiles = new Path[shape.slots()];
            for (int s = 0; s < shape.slots(); s++)
            {
                offsets[s] = s * tensorBytes;
                sourceFiles[s] = sourceFile;
                targetFiles[s] = targetFile;
            }
            final int[] wire = {shape.layers(), shape.tensorsPerLayer(), shape.blockTokens(), shape.heads(), shape.headDim(), shape.elementBytes()};
            final int sourceLayout = register(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_SEPARATE, wire, blocks,
                sourceFiles, offsets));
            final int targetLayout = register(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_SEPARATE, wire, blocks,
                targetFiles, offsets));
            final LayerFirstLayout layout = LayerFirstLayout.separate(shape, blocks, offsets);
            // The buffer files are mapped by the engine now; nobody needs their names any more.
            Files.deleteIfExists(sourceFile);
            Files.deleteIfExists(targetFile);

            final long[] keys = new long[pages];
            for (int i = 0; i < pages; i++)
            {
                keys[i] = 0x6B76_0000_0000L + i;
            }
            save(client, sourceLayout, keys, blocks, shape);

            final List<Figure> figures = new ArrayList<>();
            final int[] blockIds = new int[blocks];
            final int[] tokens = new int[blocks];
            for (int b = 0; b < blocks; b++)
            {
                blockIds[b] = b;
                tokens[b] = shape.blockTokens();
            }
            final int[] pinnedPages = new int[blocks];
            for (final int batch : plan.batches())
            {
                final long[] batchKeys = new long[batch];
                final double[] engineNanos = new double[plan.rounds()];
                final double[] clientNanos = new double[plan.rounds()];
                final int warmup = Math.max(3, plan.rounds() / 10);
                for (int round = -warmup; round < plan.rounds(); round++)
                {
                    final int first = Math.floorMod(round, pages / batch) * batch;
                    System.arraycopy(keys, first, batchKeys, 0, batch);
                    final boolean engineFirst = (round & 1) == 0;
                    long engine1 = 0;
                    long client1 = 0;
                    for (int side = 0; side < 2; side++)
                    {
                        final boolean engineSide = (side == 0) == engineFirst;
                        target.fill((byte)0);
                        acquire(client, batchKeys, pinnedPages);
                        final long start = System.nanoTime();
                        if (engineSide)
                        {
                            final ResponseDecoder r = client.awaitResponse(client.sendDeviceCopy(MessageType.DEVICE_LOAD, targetLayout, 0, batch,
                                blockIds, tokens));
                            final int copied = r.resultCount();
                            client.releaseResponse();
                            engine1 = System.nanoTime() - start;
                            if (copied != batch)
                            {
                                throw new IllegalStateException("DEVICE_LOAD copied " + copied + " of " + batch + " blocks");
                            }
                        }
                        else
                        {
                            for (int i = 0; i < batch; i++)
                            {
                                final MemorySegment page = client.page(pinnedPages[i]);
                                for (int l = 0; l < shape.layers(); l++)
                                {
                                    for (int t = 0; t < shape.tensorsPerLayer(); t++)
                                    {
                                        MemorySegment.copy(page, KvPageDescriptor.slotOffset(shape, l, t), target, layout.blockAddress(l, t, i),
                                            shape.blockBytes());
                                    }
                                }
                            }
                            client1 = System.nanoTime() - start;
                        }
                        if (round == plan.rounds() - 1)
                        {
                            verify(source, target, layout, shape, batch, first, blocks, engineSide ? "DEVICE_LOAD" : "the client's copies");
                        }
                        release(client, batch);
                    }
                    if (round >= 0)
                    {
                        engineNanos[round] = engine1;
                        clientNanos[round] = client1;
                    }
                }
                final double[] ratios = new double[plan.rounds()];
                for (int r = 0; r < plan.rounds(); r++)
                {
                    ratios[r] = clientNanos[r] / engineNanos[r];
                }
                final double bytes = (double)batch * pageBytes;
                figures.add(new Figure(batch, bytes / median(engineNanos), bytes / median(clientNanos), median(ratios),
                    median(engineNanos) / 1000, median(clientNanos) / 1000));
            }
            return new Result(plan, directory, pageBytes, figures);
        }
        finally
        {
            Files.deleteIfExists(sourceFile);
            Files.deleteIfExists(targetFile);
            Files.deleteIfExists(pool);
        }
    }

    private static MemorySegment create(final Path file, final long bytes, final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            channel.write(java.nio.ByteBuffer.allocate(1), bytes - 1);
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
        }
    }

    private static int register(final IpcConnection client, final KvBufferRegistration registration) throws IpcException
    {
        final ResponseDecoder r = client.awaitResponse(client.sendRegisterKv(registration));
        final int status = r.status();
        final int result = r.resultCount();
        client.releaseResponse();
        if (status != ErrorCode.OK.code())
        {
            throw new IllegalStateException("the engine refused the KV buffers: " + ErrorCode.nameOf(status) + ", "
                + DeviceRequestDescriptor.detailName(result));
        }
        return result;
    }

    /** Saves key {@code i} from source block {@code i % blocks}, a batch of {@code blocks} keys at a time. */
    private static void save(final IpcConnection client, final int layout, final long[] keys, final int blocks, final KvShape shape) throws IpcException
    {
        final int[] blockIds = new int[blocks];
        final int[] tokens = new int[blocks];
        Arrays.fill(tokens, shape.blockTokens());
        for (int first = 0; first < keys.length; first += blocks)
        {
            final int count = Math.min(blocks, keys.length - first);
            final long[] batch = Arrays.copyOfRange(keys, first, first + count);
            ResponseDecoder r = client.awaitResponse(client.send(MessageType.RESERVE, 0, count, batch, batch));
            final int reserved = r.resultCount();
            client.releaseResponse();
            for (int i = 0; i < count; i++)
            {
                blockIds[i] = (first + i) % blocks;
            }
            r = client.awaitResponse(client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, count, blockIds, tokens));
            final int committed = r.resultCount();
            client.releaseResponse();
            if (reserved != count || committed != count)
            {
                throw new IllegalStateException("setup reserved " + reserved + " and saved " + committed + " of " + count + " pages");
            }
        }
    }

    private static void acquire(final IpcConnection client, final long[] keys, final int[] pinnedPages) throws IpcException
    {
        final ResponseDecoder r = client.awaitResponse(client.send(MessageType.ACQUIRE, 0, keys.length, keys, keys));
        final int pinned = r.resultCount();
        for (int i = 0; i < keys.length; i++)
        {
            pinnedPages[i] = r.entryStatus(i) == PageEntryStatus.PINNED ? r.entryPageId(i) : -1;
        }
        client.releaseResponse();
        if (pinned != keys.length)
        {
            throw new IllegalStateException("pinned " + pinned + " of " + keys.length + " saved pages");
        }
    }

    private static void release(final IpcConnection client, final int count) throws IpcException
    {
        client.awaitResponse(client.send(MessageType.RELEASE, 0, count, 0));
        client.releaseResponse();
    }

    /** Key {@code first + i} was saved from source block {@code (first + i) % blocks} and loaded into block {@code i}. */
    private static void verify(final MemorySegment source, final MemorySegment target, final LayerFirstLayout layout, final KvShape shape,
                               final int batch, final int first, final int blocks, final String what)
    {
        for (int i = 0; i < batch; i++)
        {
            for (int l = 0; l < shape.layers(); l++)
            {
                for (int t = 0; t < shape.tensorsPerLayer(); t++)
                {
                    final MemorySegment loaded = target.asSlice(layout.blockAddress(l, t, i), shape.blockBytes());
                    final MemorySegment saved = source.asSlice(layout.blockAddress(l, t, (first + i) % blocks), shape.blockBytes());
                    if (loaded.mismatch(saved) != -1)
                    {
                        throw new IllegalStateException(what + " delivered wrong bytes: block " + i + ", layer " + l + ", tensor " + t);
                    }
                }
            }
        }
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
