package io.kvtier.bench.tier;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code kvtier bench tier} measures a tier against, in the same run: a program outside kvtier
 * doing the same work on the same kind of storage, so that the ratio says what kvtier's path costs
 * (fio for a directory backend; Mooncake's own C client for the Mooncake tier).
 */
interface Baseline extends AutoCloseable
{
    /**
     * One case as both sides run it: the same objects of the same size, the same keys in flight, the
     * same batch bound.
     *
     * @param pageBytes  object size
     * @param pages      objects written, then read
     * @param queueDepth objects in flight
     * @param maxBatch   most objects per batch
     * @param tag        names the run's data set, so that a read finds what the write of the same run wrote
     */
    record Workload(long pageBytes, int pages, int queueDepth, int maxBatch, long tag)
    {
        /** @return bytes moved per op */
        public long bytes()
        {
            return pages * pageBytes;
        }
    }

    /**
     * What the baseline did in one op of one run.
     *
     * @param bytesPerSecond its throughput
     * @param iops           objects (or blocks) per second
     */
    record Figures(double bytesPerSecond, double iops)
    {
    }

    /** @return a short name, e.g. {@code fio}, the JSON's {@code baseline} */
    String name();

    /** @return why this baseline gives no figures in this run (with what to install or set), or empty when it does */
    Optional<String> missing();

    /** @return the baseline's version as it reported it, once it has run, or null */
    String version();

    /** @return what the baseline does, and in which topology, for the output */
    String describe();

    /**
     * @return settings the tier is given (under the user's {@code --tier-setting}s) so that it runs in the
     *         baseline's topology, e.g. the same Mooncake master
     */
    default Map<String, String> tierSettings()
    {
        return Map.of();
    }

    /**
     * Runs one op of one case. A {@code read} follows the {@code write} of the same workload.
     *
     * @param workload the case and run
     * @param op       {@code write} or {@code read}
     * @return its figures
     * @throws IOException if the baseline fails or prints no figures
     * @throws InterruptedException if interrupted while waiting for it
     */
    Figures run(Workload workload, String op) throws IOException, InterruptedException;

    /** Stops whatever the baseline started. */
    @Override
    default void close() throws IOException
    {
    }
}
