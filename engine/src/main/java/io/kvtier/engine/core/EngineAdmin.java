package io.kvtier.engine.core;

import io.kvtier.engine.operations.Retention;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.config.MigrationStrategy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.operations.EvictReport;
import io.kvtier.engine.operations.EvictRequest;
import io.kvtier.engine.operations.Health;
import io.kvtier.engine.operations.MarkReport;
import io.kvtier.engine.operations.MarkRequest;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.OperationException;
import io.kvtier.engine.operations.TierReport;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.spi.PageKey;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The operator's calls ({@link EngineOperations}) on this engine. A request is checked first, on the
 * caller's thread, against what does not change while the engine runs (the tiers' names, the rules); what
 * it reads or changes of the engine's state is done on the engine thread, as an event on its ring, and the
 * caller waits for the answer (at most {@link #WAIT_SECONDS}). A refused call changes nothing.
 */
final class EngineAdmin implements EngineOperations
{
    /** Longest wait for the engine thread to carry a call out. */
    static final long WAIT_SECONDS = 10;
    /** Most keys one call may name. */
    static final int MAX_KEYS = 65_536;

    private final EngineConductor conductor;
    private final TierLevels levels;
    private final Migrations migrations;
    private final Marks marks;
    private final PageIndex index;
    private final List<TierHandle> tiers;
    private final EngineCounters counters;
    private final Supplier<Health> health;

    EngineAdmin(final EngineConductor conductor, final TierLevels levels, final Migrations migrations, final Marks marks,
                final PageIndex index, final List<TierHandle> tiers, final EngineCounters counters, final Supplier<Health> health)
    {
        this.conductor = conductor;
        this.levels = levels;
        this.migrations = migrations;
        this.marks = marks;
        this.index = index;
        this.tiers = List.copyOf(tiers);
        this.counters = counters;
        this.health = health;
    }

    private <T> T onEngineThread(final Supplier<T> call)
    {
        if (conductor.isClosing())
        {
            throw new OperationException(OperationException.Kind.UNAVAILABLE, null, "the engine is closing");
        }
        final CompletableFuture<T> answer = new CompletableFuture<>();
        final boolean published = conductor.publishCall(() ->
        {
            try
            {
                answer.complete(call.get());
            }
            catch (final RuntimeException | Error ex)
            {
                answer.completeExceptionally(ex);
            }
        });
        if (!published)
        {
            throw new OperationException(OperationException.Kind.UNAVAILABLE, null, "the engine has stopped");
        }
        try
        {
            return answer.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException("the engine failed the call", ex.getCause());
        }
        catch (final TimeoutException ex)
        {
            throw new OperationException(OperationException.Kind.UNAVAILABLE, null, "the engine thread did not carry the call out within "
                + WAIT_SECONDS + " s; it may be stuck (kvtier stat --check)");
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new OperationException(OperationException.Kind.UNAVAILABLE, null, "interrupted while waiting for the engine");
        }
    }

    @Override
    public List<TierReport> tiers()
    {
        return onEngineThread(() ->
        {
            final List<TierReport> result = new ArrayList<>();
            for (int t = 0; t < levels.count(); t++)
            {
                final Map<String, Long> values = new LinkedHashMap<>();
                for (final int c : new int[] {CountersDescriptor.TIER_HITS, CountersDescriptor.TIER_MISSES, CountersDescriptor.TIER_ERRORS,
                    CountersDescriptor.TIER_BYTES_READ, CountersDescriptor.TIER_BYTES_WRITTEN, CountersDescriptor.TIER_EVICTIONS})
                {
                    values.put(CountersDescriptor.TIER_COUNTER_NAMES.get(c), counters.tierOpaque(t, c));
                }
                if (levels.budgetAvailable(t) >= 0)
                {
                    values.put("write_budget_available_bytes", levels.budgetAvailable(t));
                }
                final MigrationStrategy strategy = migrations.strategyOf(t);
                final int state = counters.tierStateOpaque(t);
                result.add(new TierReport(levels.name(t), tiers.get(t).type(), state == CountersDescriptor.TIER_IN_SERVICE ? "in-service"
                    : state == CountersDescriptor.TIER_STUCK ? "stuck" : "out-of-service", levels.usedBytes(t), levels.capacityBytes(t),
                    counters.tierOpaque(t, CountersDescriptor.TIER_OBJECTS), Double.isNaN(levels.high(t)) ? null : levels.high(t),
                    Double.isNaN(levels.low(t)) ? null : levels.low(t), levels.fill(t), strategy == null ? null : strategy.describe(), values));
            }
            return result;
        });
    }

    private int tier(final String name, final String field)
    {
        if (name == null || name.isBlank())
        {
            throw new OperationException(OperationException.Kind.INVALID, field, field + " is required: the name of a tier, one of " + names());
        }
        final int tier = levels.indexOf(name);
        if (tier < 0)
        {
            throw new OperationException(OperationException.Kind.NOT_FOUND, field, "no tier named " + name + " (" + field + "); tiers: " + names());
        }
        return tier;
    }

    private List<String> names()
    {
        return tiers.stream().map(TierHandle::name).toList();
    }

    private static long[] pairs(final List<PageKey> keys, final String field)
    {
        if (keys.size() > MAX_KEYS)
        {
            throw new OperationException(OperationException.Kind.INVALID, field, field + " names " + keys.size() + " keys; at most " + MAX_KEYS
                + " per call");
        }
        final long[] result = new long[2 * keys.size()];
        for (int i = 0; i < keys.size(); i++)
        {
            if (keys.get(i) == null)
            {
                throw new OperationException(OperationException.Kind.INVALID, field + "[" + i + "]", field + "[" + i + "] is null");
            }
            result[2 * i] = keys.get(i).high();
            result[2 * i + 1] = keys.get(i).low();
        }
        return result;
    }

    @Override
    public MigrationReport migrate(final MigrateRequest request)
    {
        final int source = tier(request.source(), "source");
        final int target = tier(request.target(), "target");
        if (source == target)
        {
            throw new OperationException(OperationException.Kind.INVALID, "target", "target is the source tier (" + request.source()
                + "); name another tier");
        }
        if (request.method() == null)
        {
            throw new OperationException(OperationException.Kind.INVALID, "method", "method is required: copy, mark or both");
        }
        if (request.retention() == null)
        {
            throw new OperationException(OperationException.Kind.INVALID, "retention", "retention is required: move or keep-source");
        }
        final long[] keys = request.keys().isEmpty() ? null : pairs(request.keys(), "keys");
        if (keys == null)
        {
            if (request.limit() < 1 || request.limit() > 1 << 24)
            {
                throw new OperationException(OperationException.Kind.INVALID, "limit", "limit = " + request.limit() + ": expected a whole number"
                    + " from 1 to " + (1 << 24) + " (the most pages a sampling rule takes)");
            }
            if (!(request.fraction() > 0 && request.fraction() <= 1))
            {
                throw new OperationException(OperationException.Kind.INVALID, "fraction", "fraction = " + request.fraction() + ": expected a"
                    + " share in (0, 1]");
            }
        }
        if (request.minAge() == null || request.minAge().isNegative())
        {
            throw new OperationException(OperationException.Kind.INVALID, "min_age", "min_age must be a duration of zero or more");
        }
        if (request.retention() == Retention.KEEP_SOURCE && request.method() != MigrationMethod.MARK
            && !levels.selfEvicting(source))
        {
            throw new OperationException(OperationException.Kind.INVALID, "retention", "retention keep-source: tier " + request.source()
                + " does not evict by itself, so the copies kept there could never be reclaimed; use move");
        }
        final MigrationReport report = onEngineThread(() -> request.dryRun()
            ? migrations.dryRun(source, target, request.method(), request.retention(), keys, request.namespace(), request.minAge().toNanos(),
                request.fraction(), request.limit())
            : migrations.startAdmin(source, target, request.method(), request.retention(), keys, request.namespace(),
                request.minAge().toNanos(), request.fraction(), request.limit()));
        if (!request.dryRun())
        {
            countCall();
        }
        return report;
    }

    @Override
    public Optional<MigrationReport> migration(final long id)
    {
        return Optional.ofNullable(onEngineThread(() -> migrations.report(id)));
    }

    @Override
    public List<MigrationReport> migrations()
    {
        return onEngineThread(migrations::reports);
    }

    @Override
    public EvictReport evict(final EvictRequest request)
    {
        final int tier = tier(request.tier(), "tier");
        final long[] keys = request.keys().isEmpty() ? null : pairs(request.keys(), "keys");
        if (keys == null && (request.limit() < 1 || request.limit() > 1 << 24))
        {
            throw new OperationException(OperationException.Kind.INVALID, "limit", "limit = " + request.limit() + ": expected a whole number from 1"
                + " to " + (1 << 24) + " (the most of the tier's coldest pages to remove)");
        }
        final EvictReport report = onEngineThread(() -> evictOnEngineThread(tier, keys, request.namespace(), request.limit(), request.dryRun()));
        if (!request.dryRun())
        {
            countCall();
        }
        return report;
    }

    private EvictReport evictOnEngineThread(final int tier, final long[] named, final long namespace, final int limit, final boolean dryRun)
    {
        final long[] keys = named != null ? named : coldest(tier, namespace, limit);
        long removed = 0;
        final Map<String, Long> refusals = new LinkedHashMap<>();
        for (int i = 0; i < keys.length; i += 2)
        {
            final long high = keys[i];
            final long low = keys[i + 1];
            final int slot = index.find(high, low);
            if (slot == KeyTable.NONE || (index.tiers(slot) & (1 << tier)) == 0)
            {
                refusals.merge("not_held", 1L, Long::sum);
                continue;
            }
            if (migrations.isMoving(high, low))
            {
                refusals.merge("migrating", 1L, Long::sum);
                continue;
            }
            final int page = index.page(slot);
            if (page != PageIndex.NO_PAGE && conductor.isBackingUp(page, tier))
            {
                refusals.merge("backing_up", 1L, Long::sum);
                continue;
            }
            if (!dryRun)
            {
                final long tag = index.tierTag(slot);
                index.removeTier(high, low, tier);
                migrations.remove(tier, high, low, tag);
                counters.increment(EngineCounter.L3_EVICTIONS);
                counters.addTier(tier, CountersDescriptor.TIER_EVICTIONS, 1);
            }
            removed++;
        }
        return new EvictReport(levels.name(tier), removed, refusals, dryRun);
    }

    /** The tier's coldest keys the index knows, of one namespace or any, as high, low pairs. */
    private long[] coldest(final int tier, final long namespace, final int limit)
    {
        final KeyTable table = index.table();
        final long slots = table.slotCount();
        long[] ages = new long[1024];
        long[] found = new long[2048];
        int count = 0;
        for (long slot = 0; slot < slots; slot++)
        {
            if (!table.isOccupied(slot) || (index.tiers((int)slot) & (1 << tier)) == 0 || (namespace != 0 && table.aux(slot) != namespace))
            {
                continue;
            }
            if (count == ages.length)
            {
                ages = Arrays.copyOf(ages, 2 * count);
                found = Arrays.copyOf(found, 4 * count);
            }
            final long high = table.keyHigh(slot);
            final long low = table.keyLow(slot);
            found[2 * count] = high;
            found[2 * count + 1] = low;
            ages[count] = ((long)index.ageSeconds(high, low) << 32) | count;
            count++;
        }
        Arrays.sort(ages, 0, count);
        final int keep = Math.min(limit, count);
        final long[] result = new long[2 * keep];
        for (int k = 0; k < keep; k++)
        {
            final int at = (int)(ages[count - 1 - k] & 0xFFFF_FFFFL);
            result[2 * k] = found[2 * at];
            result[2 * k + 1] = found[2 * at + 1];
        }
        return result;
    }

    @Override
    public MarkReport mark(final MarkRequest request)
    {
        final int tier = tier(request.tier(), "tier");
        if (request.ttl() == null || request.ttl().isNegative() || request.ttl().isZero())
        {
            throw new OperationException(OperationException.Kind.INVALID, "ttl", "ttl must be more than zero: a mark of no time-to-live expires"
                + " before any backup can use it");
        }
        final boolean hasKeys = !request.keys().isEmpty();
        if (hasKeys == (request.namespace() != 0))
        {
            throw new OperationException(OperationException.Kind.INVALID, hasKeys ? "namespace" : "keys", "a mark names either keys (pages, a"
                + " chain) or a namespace, exactly one of them");
        }
        final long[] keys = hasKeys ? pairs(request.keys(), "keys") : null;
        final long ttl = request.ttl().toNanos();
        final MarkReport report = onEngineThread(() -> marks.add(tier, keys, request.namespace(), ttl, "admin"));
        countCall();
        return report;
    }

    @Override
    public List<MarkReport> marks()
    {
        return onEngineThread(marks::reports);
    }

    @Override
    public boolean unmark(final long id)
    {
        final boolean removed = onEngineThread(() -> marks.remove(id));
        if (removed)
        {
            countCall();
        }
        return removed;
    }

    @Override
    public Health health()
    {
        return health.get();
    }

    private void countCall()
    {
        conductor.publishCall(() -> counters.increment(EngineCounter.ADMIN_CALLS));
    }
}
