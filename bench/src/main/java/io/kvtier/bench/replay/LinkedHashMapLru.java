package io.kvtier.bench.replay;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The baseline a replay's speed is judged against: the LRU any Java programmer would write, a
 * {@link LinkedHashMap} in access order whose {@code removeEldestEntry} keeps it at capacity, replaying the
 * same requests with the same semantics as {@link ReplayPolicy#lru()}. Its hit count must equal the
 * engine structures' on every trace, which checks both.
 */
public final class LinkedHashMapLru
{
    private LinkedHashMapLru()
    {
    }

    /**
     * @param requests       the requests in arrival order
     * @param capacityBlocks the most resident blocks, or {@link TraceReplay#UNBOUNDED}
     * @return the blocks in the requests' cached leading runs
     */
    public static long hitBlocks(final List<TraceRequest> requests, final long capacityBlocks)
    {
        final Map<Long, Boolean> cache = new LinkedHashMap<>(16, 0.75f, true)
        {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(final Map.Entry<Long, Boolean> eldest)
            {
                return size() > capacityBlocks;
            }
        };
        long hits = 0;
        for (final TraceRequest request : requests)
        {
            final long[] ids = request.hashIds();
            // Touching the leading run as it is judged gives the same order as judging it first: nothing is
            // evicted before the first miss.
            int run = 0;
            while (run < ids.length && cache.get(ids[run]) != null)
            {
                run++;
            }
            hits += run;
            for (int i = run; i < ids.length; i++)
            {
                // In access order this touches a resident block and inserts an absent one, evicting the eldest.
                cache.putIfAbsent(ids[i], Boolean.TRUE);
            }
        }
        return hits;
    }
}
