package io.kvtier.spi;

import java.util.Optional;
import java.util.Set;

/**
 * A storage tier below the shared host-memory pool: a POSIX directory, 3FS, Mooncake Store.
 * Objects are whole page frames, named by {@link PageKey} and immutable once written.
 *
 * <p>Every operation is asynchronous and works on a {@link TierBatch}: the call returns quickly and
 * the tier completes each key when it is done. A tier is safe for concurrent batches from many
 * threads. An exception thrown by an operation is a plugin failure: the engine completes the batch's
 * remaining keys as {@link TierStatus#IO_ERROR}, logs it, and keeps running.
 *
 * <p>Writes are atomic per key: a concurrent or later read sees the whole previous object, the whole
 * new one, or {@link TierStatus#NOT_FOUND}, never part of a write, even across a crash.
 */
public interface StorageTier extends AutoCloseable
{
    /** @return the tier's configured name, as in {@code tier.<name>.type} */
    String name();

    /** @return what the tier promises beyond the base contract; fixed once the tier is created */
    default Set<TierCapability> capabilities()
    {
        return Set.of();
    }

    /**
     * One line on how the tier runs here, beyond its settings: for example which I/O path it uses
     * and, when it fell back from the one configured, why. The engine records it in the pool, where
     * {@code kvtier stat} shows it next to the tier's name (the first 188 bytes of UTF-8).
     *
     * @return the description; empty by default
     */
    default String describe()
    {
        return "";
    }

    /**
     * The fill levels at which the tier evicts by itself, when it does and knows its capacity. The engine
     * treats the tier as full for backups and migrations at its high level, and refuses at start a
     * migration out of it whose trigger is not below that level. Called on the tier's call thread.
     *
     * @return its water levels, or empty when it does not evict by itself or has no capacity of its own
     */
    default Optional<TierWaterLevels> waterLevels()
    {
        return Optional.empty();
    }

    /**
     * Checks which keys are stored: {@link TierStatus#OK} when present, {@link TierStatus#NOT_FOUND}
     * when not, or a failure status ({@link TierStatus#CORRUPT} for an object that cannot be a whole
     * page, {@link TierStatus#IO_ERROR}, ...) when the tier cannot tell.
     *
     * @param batch the keys to check
     */
    void exists(TierBatch batch);

    /**
     * Reads each key's object into its segment. An object whose size differs from the segment's is
     * {@link TierStatus#CORRUPT}, never a partial read.
     *
     * @param batch the keys and their destination segments
     */
    void read(TierBatch batch);

    /**
     * Stores each segment's bytes under its key, replacing any previous object atomically.
     *
     * @param batch the keys and their source segments
     */
    void write(TierBatch batch);

    /**
     * Removes each key's object: {@link TierStatus#OK} when removed, {@link TierStatus#NOT_FOUND}
     * when it was not there.
     *
     * @param batch the keys to remove
     */
    void remove(TierBatch batch);

    /** @return how full the tier is */
    TierUsage usage();

    /**
     * Hands the tier's usage to a consumer, as {@link #usage()} answers it. The engine reads every tier's
     * usage a few times a second through this method, on the tier's call thread; a tier whose
     * {@code usage()} allocates may override it to report the same numbers without allocating.
     *
     * @param consumer takes the used bytes, the capacity and the objects
     */
    default void reportUsage(final TierUsage.Consumer consumer)
    {
        final TierUsage usage = usage();
        consumer.accept(usage.usedBytes(), usage.capacityBytes(), usage.objects());
    }

    /**
     * Finishes or fails in-flight keys, then releases resources. Every key handed over before the
     * call is completed before it returns, because the engine may unmap the pool right after.
     * Idempotent. Afterwards every key of every operation completes with {@link TierStatus#CLOSED}.
     */
    @Override
    void close();
}
