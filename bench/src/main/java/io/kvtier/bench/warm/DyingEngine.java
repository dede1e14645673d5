package io.kvtier.bench.warm;

import io.kvtier.bench.replay.TraceRequest;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine {@code kvtier bench restart} kills: in its own process, it replays the requests before the crash,
 * prints {@code ready} and the number of committed pages in its pool, then waits to be killed with SIGKILL (or
 * halts when its standard input ends: the bench that started it is gone).
 * Arguments: pool path, page bytes, pool bytes, conversations, requests, seed.
 */
public final class DyingEngine
{
    private DyingEngine()
    {
    }

    /**
     * @param args pool path, page bytes, pool bytes, conversations, requests, seed
     * @throws Exception if the engine cannot start
     */
    public static void main(final String[] args) throws Exception
    {
        final long pageBytes = Long.parseLong(args[1]);
        final int requests = Integer.parseInt(args[4]);
        final List<TraceRequest> trace = RestartWorkload.trace(Long.parseLong(args[5]), requests, Integer.parseInt(args[3]));
        final Engine engine = Engine.start(EngineConfig.from(WarmRestartBenchmark.settings(args[0], pageBytes, Long.parseLong(args[2]), true)));
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
        // Killed by the bench; should the bench die first, its end of our stdin closes and this engine goes too.
        while (System.in.read() >= 0)
        {
            LockSupport.parkNanos(1_000_000L);
        }
        Runtime.getRuntime().halt(0);
    }
}
