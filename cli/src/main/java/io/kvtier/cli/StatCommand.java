package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.pool.CountersReader;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.spi.ConfigValues;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code kvtier stat}: maps a running engine's pool from another process, as a client would, and
 * prints its header and counters. Nothing is changed.
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
    description = "Prints a running engine's counters by mapping its pool file from this process (the counters live in shared memory).")
public final class StatCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--pool", defaultValue = "/dev/shm/kvtier-pool", paramLabel = "FILE", description = "The engine's pool.path. Default: ${DEFAULT-VALUE}.")
    Path pool;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Option(names = "--watch", paramLabel = "DURATION", description = "Print again this often until interrupted, e.g. 1s;"
        + " if a new engine replaces the pool file meanwhile, follow it.")
    Duration watch;

    @Option(names = "--count", paramLabel = "N", description = "With --watch, stop after N samples.")
    Integer count;

    @Option(names = "--describe", description = "Also print each counter's type (counter or gauge) and what it counts,"
        + " as the pool's counters region records them.")
    boolean describe;

    @Option(names = "--check", description = "A health check: exit 0 when the engine is alive and none of its watched threads is"
        + " stuck or dead, 1 otherwise, saying why.")
    boolean check;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (count != null && (count < 1 || watch == null))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--count needs --watch and a number of samples of at least 1");
        }
        final Duration every = watch == null ? Duration.ZERO : watch;
        if (!Files.exists(pool))
        {
            err.println("kvtier: no pool at " + pool + ": is an engine running with pool.path = " + pool + "?");
            return ExitCode.UNAVAILABLE;
        }
        MappedPool attached = null;
        try
        {
            attached = MappedPool.attach(pool);
            int samples = 0;
            while (true)
            {
                final List<Counter> values = read(new CountersReader(attached.counters()));
                print(out, attached, values);
                samples++;
                if (every.isZero() || (count != null && samples >= count))
                {
                    return check && !problems(attached, values).isEmpty() ? ExitCode.FAILURE : ExitCode.OK;
                }
                Thread.sleep(every.toMillis());
                if (attached.header().poolStateAcquire() != PagePoolDescriptor.STATE_OPEN && Files.exists(pool))
                {
                    // Its engine stopped or was replaced: watch the pool now at the path, if it is another.
                    final MappedPool replacement = MappedPool.attach(pool);
                    if (replacement.header().epochPlain() != attached.header().epochPlain() || replacement.header().creatorPidPlain() != attached.header().creatorPidPlain())
                    {
                        attached.close();
                        attached = replacement;
                    }
                    else
                    {
                        replacement.close();
                    }
                }
            }
        }
        catch (final IllegalStateException ex)
        {
            // MappedPool.attach: the file is not a pool this build can read
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.UNAVAILABLE;
        }
        finally
        {
            if (attached != null)
            {
                attached.close();
            }
        }
    }

    private static String stateName(final int state)
    {
        return switch (state)
        {
            case PagePoolDescriptor.STATE_OPEN -> "open";
            case PagePoolDescriptor.STATE_CLOSED -> "closed";
            case PagePoolDescriptor.STATE_SUPERSEDED -> "superseded";
            default -> "unknown " + state;
        };
    }

    /** One counter as the pool's counters region names it: this command needs none of the engine's own list. */
    private record Counter(int id, String name, String type, String description, long value)
    {
        /** @return whether this is a tier's info record, whose value is the tier's state */
        boolean isTier()
        {
            return type.equals("info") && id >= CountersDescriptor.FIRST_TIER_INFO_ID;
        }

        /** @return the tier's state, as its record's value says */
        String tierState()
        {
            return switch ((int)value)
            {
                case CountersDescriptor.TIER_IN_SERVICE -> "in-service";
                case CountersDescriptor.TIER_STUCK -> "stuck";
                case CountersDescriptor.TIER_OUT_OF_SERVICE -> "out-of-service";
                default -> "state " + value;
            };
        }
    }

    private static List<Counter> read(final CountersReader counters)
    {
        final List<Counter> list = new ArrayList<>();
        counters.forEach((id, typeId, name, description, value) -> list.add(new Counter(id, name,
            typeId == CountersDescriptor.TYPE_GAUGE ? "gauge" : typeId == CountersDescriptor.TYPE_COUNTER ? "counter"
                : typeId == CountersDescriptor.TYPE_INFO ? "info" : "type " + typeId,
            description, value)));
        return list;
    }

    /** Info records are facts, not numbers: shown as lines of their own (a tier's I/O path), not among the counters. */
    private static boolean isInfo(final Counter counter)
    {
        return counter.type().equals("info");
    }

    private static boolean alive(final MappedPool pool)
    {
        final long heartbeatAge = Math.max(0, System.currentTimeMillis() - pool.header().heartbeatAcquire());
        return pool.header().poolStateAcquire() == PagePoolDescriptor.STATE_OPEN
            && ProcessHandle.of(pool.header().creatorPidPlain()).map(ProcessHandle::isAlive).orElse(false) && heartbeatAge < PagePoolDescriptor.HEARTBEAT_STALE_MS;
    }

    /**
     * What makes the engine unhealthy: not running (its heartbeat, which the engine thread beats, stopped),
     * or a watched thread stuck or dead, as its {@code thread_<name>} gauge says (1 stuck, 2 dead).
     */
    private static List<String> problems(final MappedPool pool, final List<Counter> values)
    {
        final List<String> problems = new ArrayList<>();
        if (!alive(pool))
        {
            problems.add("the engine is not running (or its engine thread stopped beating the pool's heartbeat)");
        }
        for (final Counter counter : values)
        {
            if (counter.name().startsWith(THREAD_GAUGE_PREFIX) && counter.value() != 0)
            {
                problems.add("thread " + counter.name().substring(THREAD_GAUGE_PREFIX.length()) + " is "
                    + (counter.value() == 1 ? "stuck (busy with one piece of work past health.stuck-after)" : "dead"));
            }
        }
        return problems;
    }

    private static final String THREAD_GAUGE_PREFIX = "thread_";

    private void print(final PrintWriter out, final MappedPool pool, final List<Counter> values) throws IOException
    {
        final long heartbeatAge = Math.max(0, System.currentTimeMillis() - pool.header().heartbeatAcquire());
        final int state = pool.header().poolStateAcquire();
        final boolean alive = alive(pool);
        final List<String> problems = problems(pool, values);
        if (json)
        {
            try (JsonGenerator g = new JsonFactory().createGenerator(out))
            {
                g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
                g.writeStartObject();
                g.writeStringField("pool", pool.path().toString());
                g.writeNumberField("engine_pid", pool.header().creatorPidPlain());
                g.writeBooleanField("engine_alive", alive);
                g.writeBooleanField("healthy", problems.isEmpty());
                g.writeArrayFieldStart("problems");
                for (final String problem : problems)
                {
                    g.writeString(problem);
                }
                g.writeEndArray();
                g.writeNumberField("heartbeat_age_ms", heartbeatAge);
                g.writeStringField("pool_state", stateName(state));
                g.writeNumberField("epoch", pool.header().epochPlain());
                g.writeNumberField("pages", pool.pageCount());
                g.writeNumberField("page_size_bytes", pool.pageSize());
                g.writeNumberField("index_entries", pool.index().size());
                g.writeObjectFieldStart("info");
                for (final Counter counter : values)
                {
                    if (isInfo(counter))
                    {
                        g.writeStringField(counter.name(), counter.description());
                    }
                }
                g.writeEndObject();
                g.writeObjectFieldStart("tier_states");
                for (final Counter counter : values)
                {
                    if (counter.isTier())
                    {
                        g.writeStringField(counter.name(), counter.tierState());
                    }
                }
                g.writeEndObject();
                g.writeObjectFieldStart("counters");
                for (final Counter counter : values)
                {
                    if (!isInfo(counter))
                    {
                        g.writeNumberField(counter.name(), counter.value());
                    }
                }
                g.writeEndObject();
                if (describe)
                {
                    g.writeObjectFieldStart("counter_types");
                    for (final Counter counter : values)
                    {
                        if (isInfo(counter))
                        {
                            continue;
                        }
                        g.writeObjectFieldStart(counter.name());
                        g.writeStringField("type", counter.type());
                        g.writeStringField("description", counter.description());
                        g.writeEndObject();
                    }
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            out.println();
        }
        else
        {
            out.printf("pool %s (%s, epoch %d): engine pid %d (%s, heartbeat %d ms ago), %d pages of %s, %d index entries%n", pool.path(),
                stateName(state), pool.header().epochPlain(), pool.header().creatorPidPlain(), alive ? "alive" : "not running", heartbeatAge, pool.pageCount(),
                ConfigValues.formatSize(pool.pageSize()), pool.index().size());
            out.println(problems.isEmpty() ? "  health: ok" : "  health: UNHEALTHY: " + String.join("; ", problems));
            for (final Counter counter : values)
            {
                if (isInfo(counter))
                {
                    // A tier out of service says so first: stuck (it will serve again once it answers) or for good (late writes).
                    final String tierState = counter.isTier() && counter.value() != CountersDescriptor.TIER_IN_SERVICE
                        ? "[" + counter.tierState() + "] " : "";
                    out.printf("  %-26s %s%s%n", counter.name(), tierState, counter.description());
                }
            }
            for (final Counter counter : values)
            {
                if (isInfo(counter))
                {
                    continue;
                }
                if (describe)
                {
                    out.printf("  %-26s %,15d  %-7s %s%n", counter.name(), counter.value(), counter.type(), counter.description());
                }
                else
                {
                    out.printf("  %-26s %,d%n", counter.name(), counter.value());
                }
            }
        }
        out.flush();
    }
}
