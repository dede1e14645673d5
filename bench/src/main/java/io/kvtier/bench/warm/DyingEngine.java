package io.kvtier.bench.warm;

import io.kvtier.bench.replay.TraceRequest;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine {@code kvtier bench restart} restarts: in its own process, it replays the requests before the
 * restart, prints {@code ready} and the number of committed pages in its pool, then either waits to be killed
 * with SIGKILL (or halts when its standard input ends: the bench that started it is gone), or, with
 * {@link #STOP}, closes cleanly with {@code pool.keep-on-stop = true} and exits.
 * Arguments: pool path, page bytes, pool bytes, conversations, requests, seed, and {@link #WAIT_FOR_KILL} or
 * {@link #STOP}.
 */
public final class DyingEngine
{
    /** Last argument: wait for SIGKILL. */
    public static final String WAIT_FOR_KILL = "kill";
    /** Last argument: stop cleanly, keeping the pool file. */
    public static final String STOP = "stop";

    private DyingEngine()
    {
    }

    /**
     * @param args pool path, page bytes, pool bytes, conversations, requests, seed, how it ends
     * @throws Exception if the engine cannot start
     */
    public static void main(final String[] args) throws Exception
    {
        final long pageBytes = Long.parseLong(args[1]);
        final int requests = Integer.parseInt(args[4]);
        final List<TraceRequest> trace = RestartWorkload.trace(Long.parseLong(args[5]), requests, Integer.parseInt(args[3]));
        final boolean stop = args.length > 6 && args[6].equals(STOP);
        final Map<String, String> settings = WarmRestartBenchmark.settings(args[0], pageBytes, Long.parseLong(args[2]), true);
        settings.put(EngineConfig.POOL_KEEP_ON_STOP, Boolean.toString(stop));
        final Engine engine = Engine.start(EngineConfig.from(settings));
        final RestartWorkload workload = new RestartWorkload(pageBytes);
        try (Session session = engine.openSession())
        {
            for (final TraceRequest request : trace)
            {
                workload.replay(session, request);
            }
        }
        int committed = 0;
        for (int page = 0; page < engine.pool().pageCount(); page++)
        {
            committed += PageStateWord.state(engine.pool().metadata().stateWordAcquire(page)) == PageStateWord.SERVING ? 1 : 0;
        }
        System.out.println("ready " + committed + " " + workload.blocks + " " + workload.hits + " " + workload.wrong);
        System.out.flush();
        if (stop)
        {
            engine.close();
            System.exit(0);
        }
        // Killed by the bench; should the bench die first, its end of our stdin closes and this engine goes too.
        while (System.in.read() >= 0)
        {
            LockSupport.parkNanos(1_000_000L);
        }
        Runtime.getRuntime().halt(0);
    }
}
