package io.kvtier.engine.events;

import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.status.ThreadWatch;
import java.util.List;

/**
 * What a publisher of KV events takes from a running engine: the ring to read, the medium names by medium
 * number (the pool's first, then each L3 tier's), the events.* settings, the watch of its thread and the
 * counters it counts sent batches in.
 *
 * @param ring        the event ring; read it from one thread only
 * @param mediums     medium names: index {@link PageEvents#POOL} is the pool's, index t + 1 tier t's
 * @param endpoint    events.endpoint
 * @param topicPrefix events.topic-prefix
 * @param batchMax    events.batch-max
 * @param replayEndpoint events.replay-endpoint, empty for none
 * @param replayBatches  events.replay-batches
 * @param watch       the kvtier-events thread's watch (ThreadWatch)
 * @param counters    the engine's counters
 */
public record EventSource(EventRing ring, List<String> mediums, String endpoint, String topicPrefix, int batchMax, String replayEndpoint,
                          int replayBatches, ThreadWatch.Watched watch,
                          EngineCounters counters)
{
    /** The pool's medium name: host DRAM, which routers already weigh as {@code cpu}. */
    public static final String POOL_MEDIUM = "cpu";
}
