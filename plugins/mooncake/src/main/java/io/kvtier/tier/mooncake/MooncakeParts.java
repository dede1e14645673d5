package io.kvtier.tier.mooncake;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a Mooncake tier's threads share: the store and its settings, the key text's shape, the pool
 * registered with the store, and the counters.
 *
 * @param name               the tier's name
 * @param settings           its settings
 * @param store              the connected store
 * @param objectSize         the bytes of a page frame
 * @param logger             the engine's logger
 * @param replicateConfig    the native replicate config every put takes
 * @param prefix             {@code key-prefix}, as bytes
 * @param keyStride          bytes between two keys' text in a worker's native arrays
 * @param hostMemory         the pool, when registered with the store, else {@link MemorySegment#NULL}
 * @param hostRegistered     whether it is
 * @param objects            this instance's puts minus its removes
 * @param stats              counters of the bridged behaviours
 * @param registrationWarned whether a failed slice registration was logged already
 */
record MooncakeParts(String name, MooncakeSettings settings, MooncakeStore store, long objectSize, System.Logger logger,
                     MemorySegment replicateConfig, byte[] prefix, int keyStride, MemorySegment hostMemory, boolean hostRegistered,
                     AtomicLong objects, MooncakeTier.Stats stats, AtomicBoolean registrationWarned)
{
    /** @return the store client's handle */
    MemorySegment handle()
    {
        return store.handle();
    }

    /** Counts a removal, never below zero (the store evicts objects without telling). */
    void decrementObjects()
    {
        objects.getAndUpdate(n -> n > 0 ? n - 1 : 0);
    }
}
