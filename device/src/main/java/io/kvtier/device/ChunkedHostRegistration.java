package io.kvtier.device;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Page-locks a large host mapping (the pool) for device copies in chunks, on a thread of its own, so that
 * the engine serves while it is done. One {@code cudaHostRegister} of a whole pool of hundreds of GiB
 * fails outright and costs about 0.1 s per GB before it does; chunks succeed one by one, and a failing
 * one leaves the earlier ones locked. Copies are right before, during and after: the runtime stages
 * pageable memory itself, so an unregistered chunk is only slower.
 *
 * <p>Chunks are whole multiples of {@link #ALIGNMENT} from the mapping's start (the last one is what is
 * left). {@link #close} stops at the next chunk, waits for the one in progress, and unregisters every
 * chunk registered, last first.
 */
public final class ChunkedHostRegistration implements AutoCloseable
{
    /** What registration calls; the CUDA front in production, a recording one in tests. */
    public interface Registrar
    {
        /**
         * @param chunk host memory to page-lock
         * @return true when locked now, false when it already was (then it is not unregistered here)
         * @throws RuntimeException naming the error when it cannot be
         */
        boolean register(MemorySegment chunk);

        /** @param chunk a chunk {@link #register} locked */
        void unregister(MemorySegment chunk);
    }

    /** Chunk sizes are multiples of this: a huge page, so that no chunk splits one. */
    public static final long ALIGNMENT = 2L << 20;
    /** The default chunk: large enough that the calls are few, small enough that one takes about 0.1 s. */
    public static final long DEFAULT_CHUNK_BYTES = 1L << 30;

    private final MemorySegment host;
    private final long chunkBytes;
    private final Registrar registrar;
    private final Thread thread;
    /** Chunks registered, in order; the registering thread adds, {@link #close} reads after joining it. */
    private final List<MemorySegment> registered = new ArrayList<>();
    private volatile boolean stopping;
    private volatile long registeredBytes;
    private volatile String failure;

    /**
     * @param host       the mapping
     * @param chunkBytes bytes per chunk: a positive multiple of {@link #ALIGNMENT}
     * @param registrar  what locks and unlocks a chunk
     * @param threadName the registering thread's name
     * @throws IllegalArgumentException if {@code chunkBytes} is not such a multiple
     */
    public ChunkedHostRegistration(final MemorySegment host, final long chunkBytes, final Registrar registrar, final String threadName)
    {
        if (chunkBytes <= 0 || chunkBytes % ALIGNMENT != 0)
        {
            throw new IllegalArgumentException("host registration chunk of " + chunkBytes + " bytes: expected a positive multiple of " + ALIGNMENT
                + " (2 MiB)");
        }
        this.host = host;
        this.chunkBytes = chunkBytes;
        this.registrar = registrar;
        this.thread = Thread.ofPlatform().daemon().name(threadName).unstarted(this::registerAll);
    }

    /**
     * Starts registering.
     *
     * @return this
     */
    public ChunkedHostRegistration start()
    {
        thread.start();
        return this;
    }

    private void registerAll()
    {
        for (long offset = 0; offset < host.byteSize() && !stopping; offset += chunkBytes)
        {
            final MemorySegment chunk = host.asSlice(offset, Math.min(chunkBytes, host.byteSize() - offset));
            final boolean registeredNow;
            try
            {
                registeredNow = registrar.register(chunk);
            }
            catch (final RuntimeException ex)
            {
                // What is locked stays locked; the rest is copied through the runtime's staging.
                failure = "registering bytes " + offset + " to " + (offset + chunk.byteSize()) + " of " + host.byteSize() + " failed: "
                    + ex.getMessage() + "; " + registeredBytes + " bytes stay registered, copies from the rest are staged";
                System.getLogger(ChunkedHostRegistration.class.getName()).log(System.Logger.Level.WARNING, failure);
                return;
            }
            if (registeredNow)
            {
                synchronized (registered)
                {
                    registered.add(chunk);
                }
            }
            registeredBytes = offset + chunk.byteSize();
        }
    }

    /** @return bytes registered so far, from the mapping's start */
    public long registeredBytes()
    {
        return registeredBytes;
    }

    /** @return why registration stopped short, or null */
    public String failure()
    {
        return failure;
    }

    /**
     * @param timeout how long to wait
     * @param unit    its unit
     * @return whether registration has ended (the whole mapping registered, a failure, or closed)
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitEnd(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return thread.join(java.time.Duration.ofNanos(unit.toNanos(timeout)));
    }

    /** Asks the registering thread to stop before its next chunk, without waiting for it. */
    void requestStop()
    {
        stopping = true;
    }

    /** Stops at the next chunk, waits for the one in progress, and unregisters every chunk registered, last first. */
    @Override
    public void close()
    {
        requestStop();
        boolean interrupted = false;
        while (thread.isAlive())
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        synchronized (registered)
        {
            for (int i = registered.size() - 1; i >= 0; i--)
            {
                registrar.unregister(registered.get(i));
            }
            registered.clear();
        }
        registeredBytes = 0;
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }
}
