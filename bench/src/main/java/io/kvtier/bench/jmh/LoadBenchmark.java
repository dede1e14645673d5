package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.nativeaccess.libc.LibC;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Loading a prefix from L3 into the pool: evict it, then acquire it back, which reads every frame
 * from the POSIX tier, verifies trailer and CRC32C, commits and pins it; then release it. L3 lives in
 * /dev/shm so the figure is the engine's cost, not a disk's. The baseline reads the same files with the
 * same system calls as the tier's read (open, the size check by {@code lseek} to the end, pread, close)
 * straight into one buffer, with no engine at all and with each file's path prepared once at setup.
 * Each operation checks that it evicted all the pages and pinned them all again from L3; the baseline
 * that every file was one whole frame and was read whole.
 *
 * <p>{@code guard} sets what the engine does against a tier that writes late, on the same tier: {@code
 * none} (trusted, no re-verification), {@code default} (trusted, {@code l3.reverify.rate} at its
 * default), {@code staging} (the tier untrusted: every read lands in a staging frame and is copied into
 * the pool; no re-verification), {@code reverify-all} (trusted, every pin of a page just loaded checked
 * again before it is served).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class LoadBenchmark
{
    @Param({"16"})
    int pages;

    /** The engine's eviction policy: each evicted page and each load is heard by it (the default against plain LRU). */
    @Param({"adaptive", "lru"})
    String eviction;

    @Param({"16384"})
    int pageSize;

    /** What guards against a tier writing late: none, default, staging, reverify-all (above). */
    @Param({"none", "default", "staging", "reverify-all"})
    String guard;

    /**
     * The POSIX tier's I/O path ({@code tier.<name>.io}), {@code default} for its own choice: io_uring with
     * fixed buffers over the pool, which an untrusted tier is not offered, so {@code libc} compares the
     * guards on one I/O path.
     */
    @Param({"default"})
    String tierIo;

    private Engine engine;
    private Session session;
    private Path l3;
    private LibC libc;
    private Arena arena;
    private List<Path> files;
    private MemorySegment[] paths;
    private long frameLength;
    private MemorySegment buffer;

    @Setup
    public void setUp() throws Exception
    {
        l3 = BenchEngines.l3Dir("load");
        BenchEngines.deleteTree(l3);
        final Map<String, String> settings = BenchEngines.poolOnly("load", "16MiB", pageSize);
        settings.put("tier.shm.type", "posix");
        settings.put("tier.shm.dir", l3.toString());
        // The baseline reads the same page files raw, so the tier keeps them as files.
        settings.put("tier.shm.layout", "files");
        settings.put(EngineConfig.POLICY_WRITE, "write-through");
        settings.put(EngineConfig.POLICY_EVICTION, eviction);
        if (!tierIo.equals("default"))
        {
            settings.put("tier.shm.io", tierIo);
        }
        switch (guard)
        {
            case "none" -> settings.put(EngineSettings.L3_REVERIFY_RATE.key(), "0");
            case "default" ->
            {
                // the engine's defaults: a trusted tier, a sample of the pins re-verified
            }
            case "staging" ->
            {
                settings.put("tier.shm.trusted", "false");
                settings.put(EngineSettings.L3_REVERIFY_RATE.key(), "0");
            }
            case "reverify-all" -> settings.put(EngineSettings.L3_REVERIFY_RATE.key(), "1");
            default -> throw new IllegalArgumentException("guard = " + guard + ": expected none, default, staging or reverify-all");
        }
        engine = BenchEngines.start(settings);
        session = engine.openSession();
        for (int i = 0; i < pages; i++)
        {
            session.keys().add(0x6C6F616400000000L | i, i * 0x9E3779B97F4A7C15L);
        }
        if (BenchEngines.writeAll(session, pages, pageSize) != pages)
        {
            throw new IllegalStateException("setup could not commit " + pages + " pages");
        }
        final int backupsLeft = session.flush();
        if (backupsLeft != 0)
        {
            throw new IllegalStateException(backupsLeft + " backups to L3 still in flight after flush");
        }
        libc = LibC.instance().orElseThrow(() -> new IllegalStateException("the baseline needs native access to libc"));
        arena = Arena.ofShared();
        try (Stream<Path> walk = Files.walk(l3))
        {
            // Page files only: the tier also keeps spare temp files, empty, for its next writes.
            files = walk.filter(Files::isRegularFile).filter(f -> f.getFileName().toString().endsWith(".kvp")).toList();
        }
        if (files.size() != pages)
        {
            throw new IllegalStateException("expected " + pages + " files in " + l3 + ", found " + files.size());
        }
        paths = new MemorySegment[files.size()];
        for (int i = 0; i < paths.length; i++)
        {
            final byte[] text = files.get(i).toString().getBytes(StandardCharsets.US_ASCII);
            paths[i] = arena.allocate(text.length + 1);
            LibC.putCString(paths[i], 0, text, text.length);
        }
        frameLength = engine.pool().frameLength();
        buffer = arena.allocate(frameLength, 4096);
    }

    @TearDown
    public void tearDown()
    {
        session.close();
        engine.close();
        arena.close();
        BenchEngines.deleteTree(l3);
    }

    /** @return pages pinned after evicting them all and loading them all from L3 */
    @Benchmark
    public int evictThenLoad()
    {
        final int evicted = session.evict(0, pages);
        final int loaded = session.acquire(0, pages);
        final int fromL3 = session.acquiredFromL3();
        session.release(0, pages);
        if (evicted != pages || loaded != pages || fromL3 != pages)
        {
            throw new IllegalStateException("evicted " + evicted + " pages, then acquired " + loaded + " of which " + fromL3
                + " came from L3; expected " + pages + " of each");
        }
        return loaded;
    }

    /** @return bytes read (every file's whole frame) by open, size check, pread, close of the same files */
    @Benchmark
    public long baselineRawRead()
    {
        long bytes = 0;
        for (int i = 0; i < paths.length; i++)
        {
            final int fd = libc.open(paths[i], LibC.O_RDONLY | LibC.O_CLOEXEC, 0);
            if (fd < 0)
            {
                throw new IllegalStateException("open of " + files.get(i) + " failed: " + libc.strerror(fd));
            }
            // The tier's own check before it reads: the file must be exactly one frame long.
            final long size = libc.size(fd);
            final long read = size == frameLength ? libc.preadFully(fd, buffer, 0) : -1;
            libc.close(fd);
            if (read != frameLength)
            {
                throw new IllegalStateException("read " + read + " bytes of " + files.get(i) + " (size " + size + "), not its "
                    + frameLength + "-byte frame");
            }
            bytes += read;
        }
        return bytes;
    }
}
