package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Node A of {@link MooncakeTwoEnginesTest}, a JVM of its own: a whole kvtier engine with its own pool
 * and its own Mooncake client and segment, which writes a chain of pages through a session, waits
 * for their backups to reach the store, prints {@code READY}, and keeps its segment (which holds the
 * pages) until its standard input closes.
 *
 * <p>Arguments: pool directory, master address, library path, chain seed, chain length.
 */
public final class MooncakeEngineNode
{
    static final int PAGE_SIZE = 8192;

    private MooncakeEngineNode()
    {
    }

    /** The chain both nodes name: keys any engine computes the same way. */
    static void chain(final Session session, final long seed, final int length)
    {
        session.keys().clear();
        for (int i = 0; i < length; i++)
        {
            session.keys().add(seed, 0x9E37_79B9_7F4A_7C15L * (i + 1));
        }
    }

    /** The bytes of page {@code i} of the chain: its length and every byte depend on seed and index. */
    static int length(final int i)
    {
        return PAGE_SIZE - 64 * (i % 7);
    }

    static byte at(final long seed, final int i, final int offset)
    {
        long x = seed * 31 + i * 0x9E37_79B9L + offset * 0x2545_F491L;
        x ^= x >>> 27;
        return (byte)x;
    }

    static Map<String, String> settings(final Path poolDir, final String master, final String library, final String segment)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, poolDir.resolve("pool").toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, "4MiB");
        settings.put(EngineConfig.POLICY_WRITE, "write-through");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put("tier.l3.type", "mooncake");
        settings.put("tier.l3.master", master);
        settings.put("tier.l3.lib", library);
        settings.put("tier.l3.global-segment-size", segment);
        settings.put("tier.l3.local-buffer-size", "4MiB");
        settings.put("tier.l3.setup-retries", "2");
        return settings;
    }

    public static void main(final String[] args) throws Exception
    {
        final Path poolDir = Path.of(args[0]);
        final long seed = Long.parseLong(args[3]);
        final int length = Integer.parseInt(args[4]);
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolDir, args[1], args[2], "64MiB")));
             Session session = engine.openSession())
        {
            chain(session, seed, length);
            if (session.reserve(0, length) != length)
            {
                throw new IllegalStateException("node A reserved fewer than " + length + " pages");
            }
            for (int i = 0; i < length; i++)
            {
                final MemorySegment page = session.page(i);
                for (int offset = 0; offset < length(i); offset++)
                {
                    page.set(ValueLayout.JAVA_BYTE, offset, at(seed, i, offset));
                }
                session.payloadLength(i, length(i));
            }
            if (session.commit(0, length) != length)
            {
                throw new IllegalStateException("node A committed fewer than " + length + " pages");
            }
            session.flush();
            System.out.println("READY backups_completed=" + engine.counters().getOpaque(EngineCounter.BACKUPS_COMPLETED) + " backups_lost="
                + engine.counters().getOpaque(EngineCounter.BACKUPS_LOST));
            System.out.flush();
            // Hold the segment that holds the pages until the test is done with them.
            System.in.transferTo(java.io.OutputStream.nullOutputStream());
        }
    }
}
