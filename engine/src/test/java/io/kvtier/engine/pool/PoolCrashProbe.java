package io.kvtier.engine.pool;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.util.Map;

/**
 * Run in a second JVM by {@link PagePoolTakeoverTest}: starts an engine, commits a page, announces
 * itself, then dies without any cleanup, as a crashed or SIGKILLed engine would.
 */
public final class PoolCrashProbe
{
    private PoolCrashProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, args[0], EngineConfig.POOL_SIZE, "1MiB",
            EngineConfig.POOL_PAGE_SIZE, "64KiB")));
        final Session session = engine.openSession();
        session.keys().add(7, 7);
        session.reserve(0, 1);
        session.payloadLength(0, 10);
        session.commit(0, 1);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Runtime.getRuntime().halt(9);
    }
}
