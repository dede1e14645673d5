package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An engine a command starts and a shutdown hook may have to close. Ctrl-C runs the hooks while the command's thread goes on:
 * a hook that found no engine yet, and removed the engine's files, raced an {@link Engine#start} still under way, which then
 * created its tier's files (a slab's extents, say) in a directory the hook had just removed, and they were left behind. Here the
 * hook waits for a start under way to end and closes what it started, and a start the hook has overtaken is refused, so the
 * hook's clean-up is the last word on the engine's files.
 */
final class HookClosableEngine
{
    private static final int IDLE = 0;
    private static final int STARTING = 1;
    private static final int STARTED = 2;
    private static final int EXITING = 3;

    /** Starts an engine. */
    interface Starter
    {
        /**
         * @return the engine started
         * @throws IOException if it cannot start
         */
        Engine start() throws IOException;
    }

    /** How long {@link #closeFromHook} waits for a start under way before the hook removes what it can. */
    static final long EXIT_START_WAIT_MILLIS = 30_000;

    private final AtomicInteger state = new AtomicInteger(IDLE);
    private final CountDownLatch startEnded = new CountDownLatch(1);
    private volatile Engine engine;

    /**
     * Starts the engine, unless the JVM is already exiting.
     *
     * @param config its settings
     * @return the engine
     * @throws IllegalStateException if a shutdown hook has run {@link #closeOnExit} first, or if a start was made before
     * @throws IOException if the engine cannot start
     */
    Engine start(final EngineConfig config) throws IOException
    {
        return start(() -> Engine.start(config));
    }

    /**
     * Starts an engine the way {@code starter} does, unless the JVM is already exiting.
     *
     * @param starter starts the engine
     * @return the engine
     * @throws IllegalStateException if a shutdown hook has run {@link #closeOnExit} first, or if a start was made before
     * @throws IOException if the engine cannot start
     */
    Engine start(final Starter starter) throws IOException
    {
        if (!state.compareAndSet(IDLE, STARTING))
        {
            throw new IllegalStateException(state.get() == EXITING ? "the engine was not started: the JVM is exiting" : "the engine was started before");
        }
        try
        {
            final Engine started = starter.start();
            engine = started;
            state.set(STARTED);
            return started;
        }
        finally
        {
            startEnded.countDown();
        }
    }

    /**
     * From a shutdown hook: refuses any start to come, waits up to {@code timeoutMillis} for one under way to end, and closes the
     * engine it started.
     *
     * @param timeoutMillis how long to wait for a start under way
     * @return true if an engine was closed; false if none was started (the caller removes what a start would have owned), or if
     *     a start under way did not end in time
     * @throws InterruptedException if interrupted while waiting
     */
    boolean closeOnExit(final long timeoutMillis) throws InterruptedException
    {
        if (state.compareAndSet(IDLE, EXITING))
        {
            return false;
        }
        startEnded.await(timeoutMillis, TimeUnit.MILLISECONDS);
        final Engine started = engine;
        if (started == null)
        {
            return false;
        }
        started.close();
        return true;
    }

    /**
     * {@link #closeOnExit} as a shutdown hook calls it: waiting up to {@link #EXIT_START_WAIT_MILLIS}, and keeping an
     * interrupt for the hook's thread.
     *
     * @return whether an engine was closed
     */
    boolean closeFromHook()
    {
        try
        {
            return closeOnExit(EXIT_START_WAIT_MILLIS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
