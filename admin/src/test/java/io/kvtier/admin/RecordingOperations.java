package io.kvtier.admin;

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
import io.kvtier.engine.operations.Retention;
import io.kvtier.engine.operations.TierReport;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A test double of the engine's operations for the HTTP layer's own rules: it knows two tiers (nvme and
 * shared), records every call with its argument, answers fixed reports, refuses an unknown tier as the
 * engine does (NOT_FOUND naming the field), and can hold calls until released or throw what a test sets.
 */
final class RecordingOperations implements EngineOperations
{
    /** One call: the method's name and its argument (or null). */
    record Call(String method, Object argument)
    {
    }

    static final Instant STARTED = Instant.parse("2026-11-27T10:00:00Z");
    static final List<String> TIERS = List.of("nvme", "shared");

    final List<Call> calls = new CopyOnWriteArrayList<>();
    /** While set, every call waits for a permit of {@link #release}; {@link #entered} counts calls waiting. */
    volatile boolean hold;
    final Semaphore release = new Semaphore(0);
    final Semaphore entered = new Semaphore(0);
    /** Thrown by the next calls while set. */
    volatile RuntimeException failure;
    volatile Health health = new Health(true, true, null);
    final List<MarkReport> marks = new CopyOnWriteArrayList<>();

    private void record(final String method, final Object argument)
    {
        calls.add(new Call(method, argument));
        if (hold)
        {
            entered.release();
            try
            {
                if (!release.tryAcquire(30, TimeUnit.SECONDS))
                {
                    throw new IllegalStateException("the test never released the held call " + method);
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
        final RuntimeException thrown = failure;
        if (thrown != null)
        {
            throw thrown;
        }
    }

    private static void known(final String tier, final String field)
    {
        if (!TIERS.contains(tier))
        {
            throw new OperationException(OperationException.Kind.NOT_FOUND, field, "no tier " + tier + "; the tiers are " + TIERS);
        }
    }

    static MigrationReport report(final long id, final String state)
    {
        return new MigrationReport(id, "admin", state, "nvme", "shared", MigrationMethod.BOTH, Retention.KEEP_SOURCE, 10, 7, 5, 2, 1, 5L << 18,
            Map.of("too_young", 2L, "target_full", 1L), STARTED, "running".equals(state) ? null : STARTED.plusSeconds(3), null);
    }

    @Override
    public List<TierReport> tiers()
    {
        record("tiers", null);
        return List.of(
            new TierReport("nvme", "posix", "in-service", 3L << 30, 4L << 30, 12_288, 0.9, 0.8, 0.75, "above 0.7 copy to shared", Map.of("hits", 5L, "misses", 2L)),
            new TierReport("shared", "3fs", "in-service", 1L << 30, Long.MAX_VALUE, 4096, null, null, 0, null, Map.of("hits", 1L)));
    }

    @Override
    public MigrationReport migrate(final MigrateRequest request)
    {
        record("migrate", request);
        known(request.source(), "source");
        known(request.target(), "target");
        return report(41, request.dryRun() ? "dry-run" : "running");
    }

    @Override
    public Optional<MigrationReport> migration(final long id)
    {
        record("migration", id);
        return id == 41 ? Optional.of(report(41, "done")) : Optional.empty();
    }

    @Override
    public List<MigrationReport> migrations()
    {
        record("migrations", null);
        return List.of(report(41, "done"), report(40, "done"));
    }

    @Override
    public EvictReport evict(final EvictRequest request)
    {
        record("evict", request);
        known(request.tier(), "tier");
        return new EvictReport(request.tier(), 3, Map.of("not_held", 1L), request.dryRun());
    }

    @Override
    public MarkReport mark(final MarkRequest request)
    {
        record("mark", request);
        known(request.tier(), "tier");
        final MarkReport mark = new MarkReport(7, request.tier(), request.keys().size(), request.namespace(), "admin", STARTED.plus(request.ttl()));
        marks.add(mark);
        return mark;
    }

    @Override
    public List<MarkReport> marks()
    {
        record("marks", null);
        return new ArrayList<>(marks);
    }

    @Override
    public boolean unmark(final long id)
    {
        record("unmark", id);
        return marks.removeIf(mark -> mark.id() == id);
    }

    @Override
    public Health health()
    {
        record("health", null);
        return health;
    }

    /** @return whether no call reached the double */
    boolean untouched()
    {
        return calls.isEmpty();
    }
}
