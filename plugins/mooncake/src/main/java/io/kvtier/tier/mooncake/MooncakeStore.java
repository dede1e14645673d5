package io.kvtier.tier.mooncake;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One Mooncake Store client ({@code mooncake_store_t}): set up against a master, bounded in time, and
 * destroyed off the caller's thread. The data path calls {@link store_c_h} directly with
 * {@link #handle()}; this class owns the lifecycle.
 */
final class MooncakeStore
{
    /** Read by {@code RealClient::setup} on every call: attempts before it gives up on the master. */
    static final String SETUP_RETRIES_ENV_NAME = "MC_STORE_CLIENT_SETUP_RETRIES";

    /** libc's setenv is not thread-safe against itself: tiers starting at once take turns. */
    private static final Object ENV_LOCK = new Object();

    private final MemorySegment handle;
    private final String segmentName;
    /** Counted down once {@code mooncake_store_destroy} returned: the segment is unmounted, the client gone. */
    private final CountDownLatch destroyed = new CountDownLatch(1);

    private MooncakeStore(final MemorySegment handle, final String segmentName)
    {
        this.handle = handle;
        this.segmentName = segmentName;
    }

    /** @return the native client, for the data path's calls */
    MemorySegment handle()
    {
        return handle;
    }

    /** @return the name this client's segment is registered under ({@code host:port}), for preferred segments */
    String segmentName()
    {
        return segmentName;
    }

    /**
     * Creates a client and sets it up. Setup runs on a thread of its own so that the start fails after
     * {@code setup-timeout} whatever Mooncake does; {@code setup-retries} bounds Mooncake's own loop
     * (about 4.5 s per attempt against an unreachable master). A setup still running when the caller
     * gives up destroys its client when it returns.
     *
     * @param settings the tier's settings
     * @param logger   where to say what happened
     * @return a client ready for puts and gets
     * @throws MooncakeUnavailableException naming the master, what failed and the settings that bound it
     */
    static MooncakeStore connect(final MooncakeSettings settings, final System.Logger logger)
    {
        final MemorySegment handle = store_c_h.mooncake_store_create();
        if (handle.equals(MemorySegment.NULL))
        {
            throw new MooncakeUnavailableException("mooncake_store_create returned NULL (" + MooncakeLibrary.location() + ")");
        }
        final CompletableFuture<Integer> setup = new CompletableFuture<>();
        final CompletableFuture<Boolean> abandoned = new CompletableFuture<>();
        final Thread thread = Thread.ofPlatform().daemon().name("kvtier-mooncake-" + settings.tierName + "-setup").unstarted(() ->
        {
            int rc = MooncakeErrors.INTERNAL_ERROR;
            try
            {
                rc = setup(handle, settings);
            }
            catch (final Throwable ex)
            {
                setup.completeExceptionally(ex);
            }
            setup.complete(rc);
            // The caller gave up (timeout) or setup failed: nobody else will free the client.
            if (abandoned.complete(Boolean.FALSE) ? rc != 0 : true)
            {
                destroy(handle);
            }
        });
        thread.start();
        final int rc;
        try
        {
            rc = setup.get(settings.setupTimeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException ex)
        {
            if (!abandoned.complete(Boolean.TRUE))
            {
                // Setup finished in the instant between the timeout and here: take its answer.
                return finish(handle, setup.join(), settings);
            }
            throw new MooncakeUnavailableException("Mooncake setup did not finish within " + settings.qualified(MooncakeSettings.SETUP_TIMEOUT)
                + " = " + settings.setupTimeout + ": master " + settings.master + " unreachable? (metadata server " + settings.metadataServer
                + ", local hostname " + settings.localHostname + ", " + settings.setupRetries + " attempt(s) allowed by "
                + settings.qualified(MooncakeSettings.SETUP_RETRIES) + "); start mooncake_master there or fix " + settings.qualified(MooncakeSettings.MASTER));
        }
        catch (final ExecutionException ex)
        {
            throw new MooncakeUnavailableException("mooncake_store_setup threw: " + ex.getCause(), ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            abandoned.complete(Boolean.TRUE);
            throw new MooncakeUnavailableException("interrupted while setting up the Mooncake client", ex);
        }
        return finish(handle, rc, settings);
    }

    private static MooncakeStore finish(final MemorySegment handle, final int rc, final MooncakeSettings settings)
    {
        if (rc != 0)
        {
            throw new MooncakeUnavailableException("mooncake_store_setup failed with " + MooncakeErrors.name(rc) + " after "
                + settings.setupRetries + " attempt(s) (" + settings.qualified(MooncakeSettings.SETUP_RETRIES) + "): is mooncake_master running at "
                + settings.master + " (" + settings.qualified(MooncakeSettings.MASTER) + ") and reachable from " + settings.localHostname
                + "? metadata server " + settings.metadataServer + ", protocol " + settings.protocol);
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment name = arena.allocate(256);
            final int hrc = store_c_h.mooncake_store_get_hostname(handle, name, name.byteSize());
            return new MooncakeStore(handle, hrc == 0 ? name.getString(0) : settings.localHostname);
        }
    }

    /**
     * Setup reads the retry count from the environment once, as it starts. No lock is held across the
     * call: a setup may retry for minutes, and other tiers must not wait for it. Two tiers of one
     * process starting at the same instant with different {@code setup-retries} may each see the
     * other's count; one engine has one Mooncake tier, so that is left as it is.
     */
    private static int setup(final MemorySegment handle, final MooncakeSettings settings)
    {
        try (Arena arena = Arena.ofConfined())
        {
            synchronized (ENV_LOCK)
            {
                setenv(arena, SETUP_RETRIES_ENV_NAME, Integer.toString(settings.setupRetries));
            }
            return store_c_h.mooncake_store_setup(handle, arena.allocateFrom(settings.localHostname), arena.allocateFrom(settings.metadataServer),
                settings.globalSegmentSize, settings.localBufferSize, arena.allocateFrom(settings.protocol),
                arena.allocateFrom(settings.deviceName), arena.allocateFrom(settings.master));
        }
    }

    /**
     * Mooncake reads its tuning from the process environment, which Java cannot change: libc's
     * setenv can. Only ever called under {@link #ENV_LOCK}, right before the setup that reads it.
     */
    private static void setenv(final Arena arena, final String name, final String value)
    {
        final int rc;
        try
        {
            rc = (int)SetEnv.HANDLE.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 1);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("setenv(" + name + ") failed", ex);
        }
        if (rc != 0)
        {
            throw new IllegalStateException("setenv(" + name + ", " + value + ") returned " + rc);
        }
    }

    /**
     * Registers memory the data path will move bytes from or into.
     *
     * @param memory the region
     * @return 0, or Mooncake's negative code (-600 for a region overlapping one already registered)
     */
    int register(final MemorySegment memory)
    {
        return store_c_h.mooncake_store_register_buffer(handle, memory, memory.byteSize());
    }

    /**
     * @param memory a region {@link #register} accepted
     * @return 0, or Mooncake's negative code
     */
    int unregister(final MemorySegment memory)
    {
        return store_c_h.mooncake_store_unregister_buffer(handle, memory);
    }

    /**
     * Destroys the client on a daemon thread: {@code mooncake_store_destroy} joins the transfer
     * engine's threads and unmounts the segment, 0.5 s without a segment and about 2 s with one.
     * {@link #awaitDestroyed} waits for it; a thread of its own keeps that wait bounded whatever the
     * native call does. The caller must have unregistered its memory first.
     */
    void destroyInBackground()
    {
        Thread.ofPlatform().daemon().name("kvtier-mooncake-destroy").start(() ->
        {
            try
            {
                destroy(handle);
            }
            finally
            {
                destroyed.countDown();
            }
        });
    }

    /**
     * Waits for {@link #destroyInBackground} to finish, so that once the client's owner is closed
     * nothing of it still needs the master: a master stopped right after sees no call of it mid-way.
     *
     * @param timeoutNanos the most to wait
     * @return whether the client is destroyed, its segment unmounted
     */
    boolean awaitDestroyed(final long timeoutNanos)
    {
        try
        {
            return destroyed.await(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void destroy(final MemorySegment handle)
    {
        store_c_h.mooncake_store_destroy(handle);
    }

    private static final class SetEnv
    {
        static final MethodHandle HANDLE = NativeAccess.downcall(Linker.nativeLinker().defaultLookup(), "setenv",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    }
}
