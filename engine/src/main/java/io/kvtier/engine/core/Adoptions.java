package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.collections.KeyTable;

import java.util.ArrayDeque;

/**
 * A warm restart ({@code pool.warm-restart}): the committed pages of the pool a dead engine left at
 * {@code pool.path}, adopted into this engine's new pool in the background while it serves.
 *
 * <p>The engine thread lends the {@link AdoptThread} free pages of the new pool ({@link PageSpace#allocateFree}:
 * never by evicting, and only below the high water level), each WRITING, owned by the engine and bound to
 * no key, so that no request can find, pin or evict it while the adopter copies and verifies a frame into
 * it. When one comes back verified, this part binds its key and makes it SERVING, as a verified load from
 * L3 does: from then on lookups and acquires find it. When the key is already in the new pool (a client
 * committed it, or a load brought it in, meanwhile) the copy is dropped and the page freed; the pool's own
 * page wins. Nothing uncommitted of the dead engine's is ever looked at (only SERVING pages are listed),
 * and a page the engine dies holding is WRITING in its pool, so the next engine never adopts it.
 *
 * <p>Only pages whose blocks are allocated are ever lent: while the new pool is still being allocated in the
 * background ({@code pool.allocate-first}), adoption takes its pages as they join and waits for more rather
 * than ending. Adoption ends when the old pool has no more pages to offer, or when the new pool, whole, has
 * no free page below its high water level, or when the engine closes; the counts are in {@code pool_pages_adopted},
 * {@code pool_adopt_corrupt} and {@code pool_adopt_skipped}, and one line of the log says what happened.
 * Engine thread only.
 */
final class Adoptions implements TimedPart
{
    private static final System.Logger LOG = System.getLogger(Adoptions.class.getName());
    private static final int NONE = PoolSpace.NONE;

    private final PagePool pool;
    private final PageIndex index;
    private final PageSpace space;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final AdoptThread adopter;
    private final ArrayDeque<AdoptJob> idle;
    private final long startedNanos;
    private int inFlight;
    private boolean exhausted;
    private boolean stopping;
    private boolean finished;
    private int candidates = -1;
    private long adopted;
    private long corrupt;
    private long skipped;

    /**
     * @param pool    the new pool
     * @param index   the key index
     * @param space   the pool's space
     * @param counters the engine's counters
     * @param clock   the engine's clock
     * @param adopter the adopting thread
     * @param jobs    pages lent at once
     */
    Adoptions(final PagePool pool, final PageIndex index, final PageSpace space, final EngineCounters counters, final EngineClock clock,
              final AdoptThread adopter, final int jobs)
    {
        this.pool = pool;
        this.index = index;
        this.space = space;
        this.counters = counters;
        this.clock = clock;
        this.adopter = adopter;
        this.idle = new ArrayDeque<>(jobs);
        for (int j = 0; j < jobs; j++)
        {
            idle.add(new AdoptJob());
        }
        this.startedNanos = System.nanoTime();
    }

    @Override
    public void onTime(final long nowNanos)
    {
        lend();
    }

    /** The engine is closing: no more pages are lent, and adoption ends once the lent ones are back. */
    void stop()
    {
        stopping = true;
        if (inFlight == 0)
        {
            finish("the engine is closing");
        }
    }

    /** Lends a free page to every idle job, while there are pages to adopt and free pages below high water. */
    private void lend()
    {
        while (!finished && !stopping && !exhausted && !idle.isEmpty())
        {
            final int page = space.allocateFree();
            if (page == NONE)
            {
                // Pages still joining as the pool is allocated in the background: lend them as they come (onTime).
                if (inFlight == 0 && !space.growing())
                {
                    finish("the pool has no free page below pool.evict-high");
                }
                return;
            }
            final long word = pool.metadata().stateWordAcquire(page);
            pool.metadata().reservationPlain(page, EngineConductor.ENGINE_OWNER, 0);
            pool.metadata().hitCountPlain(page, 0);
            pool.metadata().payloadInfoPlain(page, 0, 0);
            // WRITING and bound to no key: no request can find, pin or evict it while the adopter writes it.
            if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.WRITING)))
            {
                throw new IllegalStateException("free page " + page + " changed while the engine took it");
            }
            final AdoptJob job = idle.poll();
            job.page = page;
            if (!adopter.submit(job))
            {
                freePage(page);
                idle.add(job);
                return;
            }
            inFlight++;
        }
    }

    /**
     * The adopter answered a job.
     *
     * @param job the job, with its answer
     */
    void onAdopted(final AdoptJob job)
    {
        inFlight--;
        candidates = job.candidates;
        if (job.corrupt > 0)
        {
            corrupt += job.corrupt;
            counters.add(EngineCounter.POOL_ADOPT_CORRUPT, job.corrupt);
        }
        if (job.changed > 0)
        {
            skip(job.changed);
        }
        if (job.adopted && !stopping && serve(job))
        {
            adopted++;
            counters.increment(EngineCounter.POOL_PAGES_ADOPTED);
        }
        else
        {
            if (job.adopted)
            {
                skip(1);
            }
            freePage(job.page);
        }
        exhausted |= job.last;
        idle.add(job);
        if (exhausted || stopping)
        {
            if (inFlight == 0)
            {
                finish(stopping ? "the engine is closing" : "every committed page was looked at");
            }
            return;
        }
        lend();
    }

    /** Makes a verified copy visible, unless the new pool has a page of its own for the key. */
    private boolean serve(final AdoptJob job)
    {
        final int slot = index.find(job.keyHigh, job.keyLow);
        if (slot != KeyTable.NONE && index.page(slot) != PageIndex.NO_PAGE)
        {
            return false;
        }
        final int page = job.page;
        index.bindPage(job.keyHigh, job.keyLow, page);
        final long word = pool.metadata().stateWordAcquire(page);
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.SERVING)))
        {
            throw new IllegalStateException("page " + page + " changed while the adopter held it");
        }
        space.touch(page, NONE);
        pool.metadata().lastAccessPlain(page, clock.nanoTime());
        index.events().stored(job.keyHigh, job.keyLow, pool.metadata().namespaceTagPlain(page), PageEvents.POOL);
        return true;
    }

    private void skip(final long pages)
    {
        skipped += pages;
        counters.add(EngineCounter.POOL_ADOPT_SKIPPED, pages);
    }

    /** Gives back a lent page nobody ever saw. */
    private void freePage(final int page)
    {
        final long word = pool.metadata().stateWordAcquire(page);
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, PageStateWord.FREE)))
        {
            throw new IllegalStateException("page " + page + " changed while the engine freed it");
        }
        space.free(page);
    }

    private void finish(final String why)
    {
        if (finished)
        {
            return;
        }
        finished = true;
        if (candidates >= 0)
        {
            final long notReached = candidates - adopted - corrupt - skipped;
            if (notReached > 0)
            {
                skip(notReached);
            }
        }
        // The thread ends and unmaps the old pool, which gives its memory back.
        adopter.end();
        LOG.log(corrupt > 0 ? System.Logger.Level.WARNING : System.Logger.Level.INFO, "warm restart: adopted {0} of the {1} committed pages"
            + " of the dead engine''s pool in {2} ms ({3} failed verification and were dropped, {4} skipped); it ended because {5}",
            adopted, Math.max(0, candidates), (System.nanoTime() - startedNanos) / 1_000_000, corrupt, skipped, why);
    }
}
