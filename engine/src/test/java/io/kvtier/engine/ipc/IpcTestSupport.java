package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Small engines with IPC on, in a test's directory, and the bits of client work the IPC tests share. */
final class IpcTestSupport
{
    static final int PAGE_SIZE = 4096;

    private IpcTestSupport()
    {
    }

    static Map<String, String> settings(final Path directory, final int pages)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, directory.resolve("pool").toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf((long)PAGE_SIZE * pages));
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        settings.put("ipc.enabled", "true");
        settings.put("ipc.socket-path", directory.resolve("s.sock").toString());
        settings.put("ipc.ring-bytes", "64KiB");
        return settings;
    }

    static Engine start(final Map<String, String> settings) throws IOException
    {
        return Engine.start(EngineConfig.from(settings));
    }

    static Path socket(final Engine engine)
    {
        return engine.ipc().orElseThrow().socketPath();
    }

    /** The bytes a page of key {@code (high, low)} holds in these tests. */
    static void fill(final MemorySegment page, final long high, final long low, final int length)
    {
        for (int i = 0; i < length; i += 8)
        {
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, i, high * 31 + low * 17 + i);
        }
    }

    static boolean holds(final MemorySegment page, final long high, final long low, final int length)
    {
        for (int i = 0; i < length; i += 8)
        {
            if (page.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != high * 31 + low * 17 + i)
            {
                return false;
            }
        }
        return true;
    }

    /** A response's fields, copied out so the ring can move on. */
    record Answer(int type, long requestId, int status, int resultCount, int poolPages, int[] pageIds, int[] pageStatuses)
    {
    }

    static Answer await(final IpcConnection connection, final long requestId) throws IpcException
    {
        final ResponseDecoder r = connection.awaitResponse(requestId);
        final int n = r.entryCount();
        final int[] pages = new int[n];
        final int[] statuses = new int[n];
        for (int i = 0; i < n; i++)
        {
            pages[i] = r.entryPageId(i);
            statuses[i] = r.entryStatus(i);
        }
        final Answer answer = new Answer(r.type(), r.requestId(), r.status(), r.resultCount(), r.poolPages(), pages, statuses);
        connection.releaseResponse();
        return answer;
    }

    static Answer call(final IpcConnection connection, final int type, final int first, final long[] highs, final long[] lows) throws IpcException
    {
        return await(connection, connection.send(type, first, highs.length, highs, lows));
    }

    static long[] keys(final long base, final int n)
    {
        final long[] keys = new long[n];
        for (int i = 0; i < n; i++)
        {
            keys[i] = base + i;
        }
        return keys;
    }
}
