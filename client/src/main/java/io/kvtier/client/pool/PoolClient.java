package io.kvtier.client.pool;

import io.kvtier.collections.KeyTable;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.locks.LockSupport;

/**
 * A process other than the engine that reads committed pages straight from the pool: it maps the
 * file, claims a client slot, and pins pages in the pin table under that slot, so that its pins have
 * an owner the engine can reclaim if the process dies (see {@link ClientSlotDescriptor} and
 * {@link PinTableDescriptor}).
 *
 * <pre>{@code
 * try (PoolClient client = PoolClient.attach(Path.of("/dev/shm/kvtier-pool")))
 * {
 *     long pin = client.pinKey(keyHigh, keyLow);
 *     if (pin != PoolClient.NO_PIN)
 *     {
 *         try { copy client.payload(pin) (client.payloadLength(pin) bytes) }
 *         finally { client.unpin(pin); }
 *     }
 * }
 * }</pre>
 *
 * <p>Pins are leases: a client that stops heartbeating for the pool's client timeout loses them (a
 * background thread heartbeats while the client is open). A client that may have been stalled that
 * long checks {@link #isValid} after reading, and discards what it read if the pin is gone.
 *
 * <p>Thread-safe: pins are compare-and-set updates of shared counters.
 */
public final class PoolClient implements AutoCloseable
{
    /** What {@link #pinKey} returns when it pinned nothing. */
    public static final long NO_PIN = -1L;

    private final MappedPool pool;
    private final Path path;
    private final LibC libc;
    private final int fd;
    private final int slot;
    private final long slotWord;
    private final int generation;
    private final long epoch;
    private final Thread heartbeat;
    private volatile boolean closed;

    private PoolClient(final MappedPool pool, final Path path, final LibC libc, final int fd, final int slot, final long slotWord)
    {
        this.pool = pool;
        this.path = path;
        this.libc = libc;
        this.fd = fd;
        this.slot = slot;
        this.slotWord = slotWord;
        this.generation = ClientSlotDescriptor.generation(slotWord);
        this.epoch = pool.header().epochPlain();
        final long period = Math.clamp(pool.header().clientTimeoutMillisPlain() / 4L, 10L, 1_000L);
        this.heartbeat = Thread.ofPlatform().daemon(true).name("kvtier-client-heartbeat-" + slot).start(() ->
        {
            while (!closed)
            {
                pool.clientSlots().heartbeatRelease(slot, System.currentTimeMillis());
                LockSupport.parkNanos(period * 1_000_000L);
            }
        });
    }

    /**
     * Maps a running engine's pool and claims a client slot.
     *
     * @param path the pool file
     * @return the attached client
     * @throws IOException           if the file cannot be mapped
     * @throws IllegalStateException if it is not an open pool of this layout, or every client slot is taken
     */
    public static PoolClient attach(final Path path) throws IOException
    {
        final LibC libc = LibC.instance().orElse(null);
        int fd = -1;
        if (libc != null)
        {
            try (Arena arena = Arena.ofConfined())
            {
                final byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
                final MemorySegment text = arena.allocate(bytes.length + 1L);
                LibC.putCString(text, 0, bytes, bytes.length);
                fd = libc.open(text, LibC.O_RDWR | LibC.O_CLOEXEC, 0);
            }
            if (fd < 0)
            {
                throw new IOException("cannot open pool " + path + ": " + libc.strerror(fd));
            }
        }
        MappedPool pool = null;
        try
        {
            // Mapped through the descriptor that holds the lock byte, so both are the same file.
            pool = MappedPool.attach(fd >= 0 ? Path.of("/proc/self/fd/" + fd) : path);
            if (pool.header().poolStateAcquire() != PagePoolDescriptor.STATE_OPEN)
            {
                throw new IllegalStateException(path + " is not an open pool (state " + pool.header().poolStateAcquire() + "): its engine stopped or was replaced");
            }
            final PoolClient client = claim(pool, libc, fd, path);
            pool = null;
            return client;
        }
        finally
        {
            if (pool != null)
            {
                pool.close();
                if (fd >= 0)
                {
                    libc.close(fd);
                }
            }
        }
    }

    private static PoolClient claim(final MappedPool pool, final LibC libc, final int fd, final Path path)
    {
        final int pid = (int)ProcessHandle.current().pid();
        for (int slot = 0; slot < pool.clientSlots().count(); slot++)
        {
            final long word = pool.clientSlots().slotWordVolatile(slot);
            if (ClientSlotDescriptor.state(word) != ClientSlotDescriptor.FREE)
            {
                continue;
            }
            final long claimed = ClientSlotDescriptor.word(ClientSlotDescriptor.ACTIVE, ClientSlotDescriptor.generation(word) + 1, pid);
            if (!pool.clientSlots().compareAndSetSlotWord(slot, word, claimed))
            {
                continue;
            }
            final long now = System.currentTimeMillis();
            pool.clientSlots().heartbeatRelease(slot, now);
            pool.clientSlots().claimedAtPlain(slot, now);
            if (fd >= 0)
            {
                final int locked = libc.ofdLock(fd, LibC.F_WRLCK, ClientSlotDescriptor.lockByte(slot), 1);
                if (locked != 0)
                {
                    // A silent client that lost this slot still lives and holds the byte: leave the slot to it.
                    pool.clientSlots().compareAndSetSlotWord(slot, claimed, ClientSlotDescriptor.word(ClientSlotDescriptor.FREE,
                        ClientSlotDescriptor.generation(claimed), 0));
                    continue;
                }
                pool.clientSlots().flagsRelease(slot, ClientSlotDescriptor.FLAG_LOCKED);
            }
            return new PoolClient(pool, path, libc, fd, slot, claimed);
        }
        throw new IllegalStateException("every one of the " + pool.clientSlots().count() + " client slots of " + path
            + " is taken; raise pool.client-slots on the engine");
    }

    /** @return the client slot this process holds */
    public int slot()
    {
        return slot;
    }

    /** @return the pool this client maps */
    public MappedPool pool()
    {
        return pool;
    }

    /**
     * @return whether the pool is still the running engine's and this client still holds its slot;
     *         when false, every pin is void: reattach
     */
    public boolean isCurrent()
    {
        return pool.header().poolStateAcquire() == PagePoolDescriptor.STATE_OPEN && pool.clientSlots().slotWordVolatile(slot) == slotWord
            && pool.header().epochPlain() == epoch;
    }

    /**
     * Pins the committed page of a key.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return a pin handle, or {@link #NO_PIN} when the pool has no committed page for the key
     * @throws IllegalStateException if this client lost its slot (its lease expired)
     */
    public long pinKey(final long keyHigh, final long keyLow)
    {
        checkOpen();
        final KeyTable index = pool.index();
        final int entry = index.find(keyHigh, keyLow);
        if (entry == KeyTable.NONE)
        {
            return NO_PIN;
        }
        final int page = index.value(entry);
        if (page < 0 || page >= pool.pageCount())
        {
            return NO_PIN;
        }
        final long word = settledStateWord(page);
        if (PageStateWord.state(word) != PageStateWord.SERVING || pool.metadata().keyHighPlain(page) != keyHigh || pool.metadata().keyLowPlain(page) != keyLow)
        {
            return NO_PIN;
        }
        final int pageGeneration = PageStateWord.generation(word);
        if (!pinPage(page, pageGeneration))
        {
            return NO_PIN;
        }
        // Pinned in the generation whose key was checked above; check again for a reader that raced a reuse.
        if (pool.metadata().keyHighPlain(page) != keyHigh || pool.metadata().keyLowPlain(page) != keyLow)
        {
            release(page);
            return NO_PIN;
        }
        return handle(page, pageGeneration);
    }

    /**
     * Pins a page that is SERVING in a known generation.
     *
     * @param page           a page
     * @param pageGeneration the generation the caller saw
     * @return whether it is pinned
     * @throws IllegalStateException if this client lost its slot
     */
    public boolean pinPage(final int page, final int pageGeneration)
    {
        checkOpen();
        while (true)
        {
            final int entry = pool.pinTable().entryVolatile(page, slot);
            final int count = PinTableDescriptor.generation(entry) == (generation & 0xFFFF) ? PinTableDescriptor.count(entry) : 0;
            if (count == PinTableDescriptor.MAX_COUNT)
            {
                return false;
            }
            if (pool.pinTable().compareAndSetEntry(page, slot, entry, PinTableDescriptor.entry(generation, count + 1)))
            {
                break;
            }
        }
        final long word = settledStateWord(page);
        if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.generation(word) != pageGeneration)
        {
            release(page);
            return false;
        }
        if (pool.clientSlots().slotWordVolatile(slot) != slotWord)
        {
            release(page);
            throw lost();
        }
        return true;
    }

    /**
     * Drops a pin.
     *
     * @param handle a handle from {@link #pinKey}
     */
    public void unpin(final long handle)
    {
        release(page(handle));
    }

    /**
     * @param handle a pin handle
     * @return whether the pin still holds: the page is SERVING in the pinned generation and this client
     *         still holds its slot. Check it after reading if the client may have stalled.
     */
    public boolean isValid(final long handle)
    {
        // EVICTING keeps the generation and the bytes: the engine is only checking for pins like this one.
        final long word = pool.metadata().stateWordVolatile(page(handle));
        final int state = PageStateWord.state(word);
        return (state == PageStateWord.SERVING || state == PageStateWord.EVICTING) && PageStateWord.generation(word) == (int)(handle >>> 32)
            && pool.clientSlots().slotWordVolatile(slot) == slotWord;
    }

    /**
     * Reads a page's state word, waiting out EVICTING: the engine holds that state only while it
     * checks the pin table, after which the page is SERVING again or FREE, and a pin taken meanwhile
     * must know which.
     */
    private long settledStateWord(final int page)
    {
        long word = pool.metadata().stateWordVolatile(page);
        for (int spins = 0; PageStateWord.state(word) == PageStateWord.EVICTING; spins++)
        {
            if (spins < 1_000)
            {
                Thread.onSpinWait();
            }
            else
            {
                // The engine thread was descheduled in the middle of its check; let it run.
                Thread.yield();
            }
            word = pool.metadata().stateWordVolatile(page);
        }
        return word;
    }

    /**
     * @param handle a pin handle
     * @return the page's payload, mapped from the pool
     */
    public MemorySegment payload(final long handle)
    {
        return pool.payload(page(handle));
    }

    /**
     * @param handle a pin handle
     * @return the committed payload length
     */
    public int payloadLength(final long handle)
    {
        return pool.metadata().payloadLengthPlain(page(handle));
    }

    /**
     * @param handle a pin handle
     * @return the page id
     */
    public static int page(final long handle)
    {
        return (int)handle;
    }

    private static long handle(final int page, final int pageGeneration)
    {
        return ((long)pageGeneration << 32) | (page & 0xFFFFFFFFL);
    }

    /** Takes one pin of this client off a page, unless the pin was already voided by a reclaim. */
    private void release(final int page)
    {
        while (true)
        {
            final int entry = pool.pinTable().entryVolatile(page, slot);
            if (PinTableDescriptor.generation(entry) != (generation & 0xFFFF) || PinTableDescriptor.count(entry) == 0)
            {
                return;
            }
            if (pool.pinTable().compareAndSetEntry(page, slot, entry, PinTableDescriptor.entry(generation, PinTableDescriptor.count(entry) - 1)))
            {
                return;
            }
        }
    }

    private void checkOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("pool client is closed");
        }
        if (pool.clientSlots().slotWordVolatile(slot) != slotWord)
        {
            throw lost();
        }
    }

    private IllegalStateException lost()
    {
        return new IllegalStateException("client slot " + slot + " of " + path + " was taken back (the client was silent for longer"
            + " than the pool's client timeout of " + pool.header().clientTimeoutMillisPlain() + " ms, or the engine restarted): its pins are void; reattach");
    }

    /** Gives back every pin, leaves the slot, drops the lock byte and unmaps. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (pool.clientSlots().slotWordVolatile(slot) == slotWord)
        {
            for (int page = 0; page < pool.pageCount(); page++)
            {
                final int entry = pool.pinTable().entryVolatile(page, slot);
                if (PinTableDescriptor.count(entry) != 0 && PinTableDescriptor.generation(entry) == (generation & 0xFFFF))
                {
                    pool.pinTable().compareAndSetEntry(page, slot, entry, PinTableDescriptor.entry(generation, 0));
                }
            }
            pool.clientSlots().flagsRelease(slot, 0);
            pool.clientSlots().compareAndSetSlotWord(slot, slotWord, ClientSlotDescriptor.word(ClientSlotDescriptor.FREE, generation, 0));
        }
        LockSupport.unpark(heartbeat);
        try
        {
            heartbeat.join(1_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        pool.close();
        if (fd >= 0)
        {
            libc.close(fd);
        }
    }

    /**
     * @param path a pool path
     * @return whether the file at the path is still the one this client maps
     */
    public boolean mapsFileAt(final Path path)
    {
        try
        {
            final Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            return fd >= 0 && key.equals(Files.readAttributes(Path.of("/proc/self/fd/" + fd), BasicFileAttributes.class).fileKey());
        }
        catch (final IOException ex)
        {
            return false;
        }
    }
}
