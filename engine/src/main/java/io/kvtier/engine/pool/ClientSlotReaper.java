package io.kvtier.engine.pool;

import io.kvtier.client.pool.ClientSlotDescriptor;
import io.kvtier.client.pool.PinTableDescriptor;
import io.kvtier.nativeaccess.libc.LibC;

import java.util.Optional;

/**
 * The engine's side of client slots: finds clients that died or went silent and gives their pins
 * back, so that a process killed with {@code kill -9} cannot keep pages pinned until the engine
 * restarts. Runs on the engine thread; allocates nothing while every client is alive.
 *
 * <p>A client is dead when the lock byte it took is free again (the kernel drops an
 * open-file-description lock with the process, whatever its PID namespace), or, for a client that
 * could not take the lock, when its PID is gone. A client whose heartbeat is older than the pool's
 * client timeout is treated the same way, alive or not: its lease is over.
 */
public final class ClientSlotReaper
{
    private static final System.Logger LOG = System.getLogger(ClientSlotReaper.class.getName());

    private final PagePool pool;
    private final LibC libc;
    private final long timeoutMs;
    private final int[] seenGeneration;
    private final long[] firstSeenMs;
    private int active;

    /**
     * @param pool      the owned pool
     * @param timeoutMs a client silent this long loses its slot and pins
     */
    public ClientSlotReaper(final PagePool pool, final long timeoutMs)
    {
        this.pool = pool;
        final Optional<LibC> instance = LibC.instance();
        this.libc = instance.orElse(null);
        this.timeoutMs = timeoutMs;
        this.seenGeneration = new int[pool.clientSlots().count()];
        this.firstSeenMs = new long[pool.clientSlots().count()];
        java.util.Arrays.fill(seenGeneration, -1);
    }

    /** @return client slots held by live clients at the last {@link #reap} */
    public int active()
    {
        return active;
    }

    /**
     * Reclaims the slots of dead or silent clients.
     *
     * @param nowMs    the current time, epoch ms
     * @param reclaims where to add what was reclaimed: [0] slots, [1] pins
     */
    public void reap(final long nowMs, final long[] reclaims)
    {
        int live = 0;
        for (int slot = 0; slot < seenGeneration.length; slot++)
        {
            final long word = pool.clientSlots().slotWordVolatile(slot);
            if (ClientSlotDescriptor.state(word) != ClientSlotDescriptor.ACTIVE)
            {
                continue;
            }
            final int generation = ClientSlotDescriptor.generation(word);
            if (seenGeneration[slot] != generation)
            {
                seenGeneration[slot] = generation;
                firstSeenMs[slot] = nowMs;
            }
            final boolean dead = isDead(slot, ClientSlotDescriptor.pid(word));
            final long silentMs = nowMs - Math.max(pool.clientSlots().heartbeatAcquire(slot), firstSeenMs[slot]);
            if (!dead && silentMs <= timeoutMs)
            {
                live++;
                continue;
            }
            final long pins = reclaim(slot, word);
            if (pins >= 0)
            {
                reclaims[0]++;
                reclaims[1] += pins;
                LOG.log(System.Logger.Level.INFO, "client pid " + ClientSlotDescriptor.pid(word) + " (slot " + slot + ") "
                    + (dead ? "is gone" : "sent no heartbeat for " + silentMs + " ms") + ": its " + pins + " pins were given back");
            }
        }
        active = live;
    }

    private boolean isDead(final int slot, final int pid)
    {
        if (libc == null)
        {
            return pid > 0 && ProcessHandle.of(pid).isEmpty();
        }
        if ((pool.clientSlots().flagsAcquire(slot) & ClientSlotDescriptor.FLAG_LOCKED) != 0 && pool.lockFd() >= 0)
        {
            return libc.ofdLockHolder(pool.lockFd(), ClientSlotDescriptor.lockByte(slot), 1) == LibC.F_UNLCK;
        }
        return pid > 0 && libc.kill(pid, 0) == -LibC.ESRCH;
    }

    /** @return pins given back, or -1 if the slot changed meanwhile (the client left by itself) */
    private long reclaim(final int slot, final long word)
    {
        final int generation = ClientSlotDescriptor.generation(word);
        final long reclaiming = ClientSlotDescriptor.word(ClientSlotDescriptor.RECLAIMING, generation, ClientSlotDescriptor.pid(word));
        if (!pool.clientSlots().compareAndSetSlotWord(slot, word, reclaiming))
        {
            return -1;
        }
        long pins = 0;
        for (int page = 0; page < pool.pageCount(); page++)
        {
            int entry = pool.pinTable().entryVolatile(page, slot);
            while (PinTableDescriptor.count(entry) != 0)
            {
                if (pool.pinTable().compareAndSetEntry(page, slot, entry, PinTableDescriptor.entry(PinTableDescriptor.generation(entry), 0)))
                {
                    pins += PinTableDescriptor.count(entry);
                    break;
                }
                entry = pool.pinTable().entryVolatile(page, slot);
            }
        }
        pool.clientSlots().flagsRelease(slot, 0);
        pool.clientSlots().compareAndSetSlotWord(slot, reclaiming, ClientSlotDescriptor.word(ClientSlotDescriptor.FREE, generation, 0));
        return pins;
    }
}
