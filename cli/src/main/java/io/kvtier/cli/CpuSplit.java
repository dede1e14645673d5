package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.workload.ByteWorkBaseline;
import io.kvtier.bench.workload.ThreadsCpu;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/**
 * Where a demo's CPU went over its whole run, warm-up included, per request: the clients' threads (their page work,
 * and their spins and yields while they wait), the engine's side (its thread, the tiers' call threads, the other
 * kvtier threads such as the tiers' I/O workers, and the kernel's io_uring workers acting for them), and the JIT.
 * On a host with fewer cores than busy threads the demo's throughput is bounded by the engine side's CPU per request
 * against the clients', whatever the waits: this is the figure that says how far.
 *
 * @param groups      CPU nanoseconds per group of this process's threads ({@link ThreadsCpu}), empty where /proc is missing
 * @param clientNanos CPU nanoseconds of the client threads of this process; -1 where the clients are processes of their own
 * @param requests    requests in the run
 */
record CpuSplit(Map<String, Long> groups, long clientNanos, long requests)
{
    /** The groups that do the engine's work for the clients. */
    private static final String[] ENGINE_SIDE = {ThreadsCpu.ENGINE, ThreadsCpu.TIER_CALLS, ThreadsCpu.OTHER_KVTIER, ThreadsCpu.KERNEL_IO};

    /** @return the engine side's CPU nanoseconds: the engine thread, the tiers' call threads, the other kvtier threads, the kernel's io_uring workers */
    long engineSideNanos()
    {
        long sum = 0;
        for (final String group : ENGINE_SIDE)
        {
            sum += groups.getOrDefault(group, 0L);
        }
        return sum;
    }

    private double perRequestMicros(final long nanos)
    {
        return requests == 0 ? 0 : nanos / 1e3 / requests;
    }

    private static double baselinePerRequestMicros(final ByteWorkBaseline.Result baseline)
    {
        final long requests = baseline.warmup().requests() + baseline.steady().requests();
        return requests == 0 || baseline.clientCpuNanos() < 0 ? -1 : baseline.clientCpuNanos() / 1e3 / requests;
    }

    /**
     * @param baseline the no-engine baseline's run, or null when it did not run
     * @return one line, or a line saying why there is none
     */
    String toText(final ByteWorkBaseline.Result baseline)
    {
        if (groups.isEmpty())
        {
            return "cpu per request     unknown: /proc/self/task cannot be read here";
        }
        final StringBuilder line = new StringBuilder("cpu per request     whole run: ");
        if (clientNanos >= 0)
        {
            line.append(String.format(Locale.ROOT, "clients %,.0f us", perRequestMicros(clientNanos)));
            if (baseline != null && baselinePerRequestMicros(baseline) >= 0)
            {
                line.append(String.format(Locale.ROOT, " (the baseline's %,.0f us)", baselinePerRequestMicros(baseline)));
            }
            line.append(", ");
        }
        line.append(String.format(Locale.ROOT, "engine side %,.0f us (engine thread %,.0f, tier calls %,.0f, other kvtier threads %,.0f,"
                + " kernel io_uring workers %,.0f), JIT %,.0f us", perRequestMicros(engineSideNanos()),
            perRequestMicros(groups.get(ThreadsCpu.ENGINE)), perRequestMicros(groups.get(ThreadsCpu.TIER_CALLS)),
            perRequestMicros(groups.get(ThreadsCpu.OTHER_KVTIER)), perRequestMicros(groups.get(ThreadsCpu.KERNEL_IO)),
            perRequestMicros(groups.get(ThreadsCpu.JIT))));
        return line.toString();
    }

    /**
     * Writes {@code cpu_us_per_request}: each group's CPU over the whole run divided by the run's requests, the clients'
     * (null for clients that are processes, with the reason) and the baseline's clients'.
     *
     * @param g        the report's generator, inside its object
     * @param baseline the no-engine baseline's run, or null
     * @throws IOException from the generator
     */
    void writeJson(final JsonGenerator g, final ByteWorkBaseline.Result baseline) throws IOException
    {
        if (groups.isEmpty())
        {
            g.writeNullField("cpu_us_per_request");
            g.writeStringField("cpu_missing", "/proc/self/task cannot be read here");
            return;
        }
        g.writeObjectFieldStart("cpu_us_per_request");
        if (clientNanos >= 0)
        {
            g.writeNumberField("clients", round(perRequestMicros(clientNanos)));
        }
        else
        {
            g.writeNullField("clients");
        }
        g.writeNumberField("engine_side", round(perRequestMicros(engineSideNanos())));
        for (final Map.Entry<String, Long> group : groups.entrySet())
        {
            g.writeNumberField(group.getKey(), round(perRequestMicros(group.getValue())));
        }
        if (baseline != null && baselinePerRequestMicros(baseline) >= 0)
        {
            g.writeNumberField("baseline_clients", round(baselinePerRequestMicros(baseline)));
        }
        g.writeEndObject();
        if (clientNanos < 0)
        {
            g.writeStringField("cpu_clients_missing", "the clients are processes of their own: their CPU is not this process's");
        }
        else if (clientNanos > 0)
        {
            g.writeNumberField("cpu_engine_side_vs_clients", Math.round(engineSideNanos() * 1000.0 / clientNanos) / 1000.0);
        }
    }

    private static double round(final double micros)
    {
        return Math.round(micros * 10) / 10.0;
    }
}
