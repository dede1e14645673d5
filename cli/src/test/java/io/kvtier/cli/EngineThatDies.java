package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.util.Map;

/** Run in a child JVM by the stat tests: starts an engine on a pool file, says so, and dies without cleanup. */
public final class EngineThatDies
{
    private EngineThatDies()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Engine.start(EngineConfig.from(Map.of("pool.path", args[0], "pool.size", "1MiB", "pool.page-size", "64KiB")));
        System.out.println("ready");
        System.out.flush();
        Runtime.getRuntime().halt(9);
    }
}
