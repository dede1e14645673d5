package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;

import java.nio.file.Path;
import java.util.Map;

/**
 * An engine with IPC on, in a JVM of its own, for tests that must change what the engine's process
 * may do (its descriptor limit, say) without changing the test's: starts on a test directory with
 * {@link IpcTestSupport#settings}, prints {@code READY}, and stops cleanly when its standard input ends.
 *
 * <p>Arguments: the directory, then settings as {@code key=value}.
 */
public final class IpcEngineProcess
{
    private IpcEngineProcess()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(Path.of(args[0]), 16);
        for (int i = 1; i < args.length; i++)
        {
            final int equals = args[i].indexOf('=');
            settings.put(args[i].substring(0, equals), args[i].substring(equals + 1));
        }
        try (Engine engine = IpcTestSupport.start(settings))
        {
            System.out.println("READY " + ProcessHandle.current().pid());
            System.out.flush();
            while (System.in.read() >= 0)
            {
                // until the test closes our input
            }
        }
        System.out.println("STOPPED");
    }
}
