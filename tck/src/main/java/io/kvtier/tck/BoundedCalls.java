package io.kvtier.tck;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Calls into a tier that might never return ({@code create}, the four operations, {@code close}),
 * each made on a daemon thread of its own and waited for with a deadline: a tier that hangs fails
 * the test with the name of the call and the stack where it hung, instead of hanging the build. The
 * hung thread is left behind; it is a daemon, so it does not keep the JVM from exiting.
 */
final class BoundedCalls implements AutoCloseable
{
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final ExecutorService threads = Executors.newCachedThreadPool(task ->
    {
        final Thread thread = new Thread(task, "kvtier-tck-call-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });
    private volatile boolean hung;

    /**
     * @param what     names the call in the failure, e.g. {@code close() of tier 'contract'}
     * @param deadline how long to wait before calling it hung
     * @param body     the call
     * @param <T>      what it returns
     * @return what the call returned
     * @throws AssertionError naming the call when it did not return within the deadline
     */
    <T> T call(final String what, final Duration deadline, final Callable<T> body)
    {
        final AtomicReference<Thread> runner = new AtomicReference<>();
        // The tier may look up services through the context class loader, as the engine sets it for a plugin.
        final ClassLoader contextLoader = Thread.currentThread().getContextClassLoader();
        final Future<T> result = threads.submit(() ->
        {
            final Thread self = Thread.currentThread();
            runner.set(self);
            self.setContextClassLoader(contextLoader);
            return body.call();
        });
        try
        {
            return result.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException ex)
        {
            hung = true;
            final Thread stuck = runner.get();
            final Throwable where = new Throwable(stuck == null
                ? "the call never started"
                : "where the call was when the deadline passed, on daemon thread '" + stuck.getName() + "', which the kit leaves behind");
            if (stuck != null)
            {
                where.setStackTrace(stuck.getStackTrace());
            }
            throw new AssertionError(what + " did not return within " + deadline + ": the tier hangs", where);
        }
        catch (final ExecutionException ex)
        {
            // The call's own failure, as if it had been made on the test's thread.
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            if (cause instanceof Error error)
            {
                throw error;
            }
            throw new AssertionError(what + " threw " + cause, cause);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, ex);
        }
    }

    /**
     * @param what     names the call in the failure
     * @param deadline how long to wait before calling it hung
     * @param body     the call
     * @throws AssertionError naming the call when it did not return within the deadline
     */
    void run(final String what, final Duration deadline, final Runnable body)
    {
        call(what, deadline, () ->
        {
            body.run();
            return null;
        });
    }

    /** @return whether some call did not return in time, so its thread may still be using memory the test handed it */
    boolean anyHung()
    {
        return hung;
    }

    /** Lets idle threads go; a hung one stays where it hangs. */
    @Override
    public void close()
    {
        threads.shutdown();
    }
}
