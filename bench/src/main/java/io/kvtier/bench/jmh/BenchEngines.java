package io.kvtier.bench.jmh;

import io.kvtier.bench.workload.PagePattern;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Engines for benchmarks: a pool in /dev/shm, optionally a POSIX L3 in /dev/shm too, so figures
 * measure the engine and not a disk.
 */
final class BenchEngines
{
    private BenchEngines()
    {
    }

    static Map<String, String> poolOnly(final String name, final String poolSize, final int pageSize)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-jmh-" + name + "-" + ProcessHandle.current().pid());
        settings.put(EngineConfig.POOL_SIZE, poolSize);
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(pageSize));
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put(EngineConfig.L3_PROBE_PAGES, "0");
        return settings;
    }

    static Path l3Dir(final String name)
    {
        return Path.of("/dev/shm/kvtier-jmh-l3-" + name + "-" + ProcessHandle.current().pid());
    }

    static Engine start(final Map<String, String> settings) throws IOException
    {
        return Engine.start(EngineConfig.from(settings));
    }

    /** Writes the session's keys [0, n) with their patterns; returns pages committed. */
    static int writeAll(final Session session, final int n, final int pageSize)
    {
        session.reserve(0, n);
        for (int i = 0; i < n; i++)
        {
            if (session.status(i) == PageEntryStatus.RESERVED)
            {
                PagePattern.fill(session.page(i), session.keys().high(i), session.keys().low(i), pageSize);
                session.payloadLength(i, pageSize);
            }
        }
        return session.commit(0, n);
    }

    static void deleteTree(final Path root)
    {
        if (!Files.exists(root))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(root))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
