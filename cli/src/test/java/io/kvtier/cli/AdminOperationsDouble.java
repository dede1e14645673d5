package io.kvtier.cli;

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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A test double of the engine's operations behind the admin API the kvtier admin commands call: two tiers
 * (nvme, shared), fixed reports, every call recorded with its argument, an unknown tier refused as the
 * engine refuses it, and a failure a test can set.
 */
final class AdminOperationsDouble implements EngineOperations
{
    static final Instant STARTED = Instant.parse("2026-11-27T10:00:00Z");

    final List<Object> calls = new CopyOnWriteArrayList<>();
    volatile Health health = new Health(true, true, null);
    volatile RuntimeException failure;

    private void record(final Object call)
    {
        calls.add(call);
        final RuntimeException thrown = failure;
        if (thrown != null)
        {
            throw thrown;
        }
    }

    private static void known(final String tier, final String field)
    {
        if (!List.of("nvme", "shared").contains(tier))
        {
            throw new OperationException(OperationException.Kind.NOT_FOUND, field, "no tier " + tier + "; the tiers are [nvme, shared]");
        }
    }

    private static MigrationReport report(final long id, final String state)
    {
        return new MigrationReport(id, "admin", state, "nvme", "shared", MigrationMethod.COPY, Retention.MOVE, 10, 8, 8, 0, 0, 8L << 18,
            Map.of("too_young", 2L), STARTED, "running".equals(state) ? null : STARTED.plusSeconds(2), null);
    }

    @Override
    public List<TierReport> tiers()
    {
        record("tiers");
        return List.of(new TierReport("nvme", "posix", "in-service", 1L << 30, 4L << 30, 4096, 0.9, 0.8, 0.25, "above 0.7 copy to shared",
                Map.of("hits", 11L, "misses", 3L, "errors", 0L)),
            new TierReport("shared", "3fs", "in-service", 2L << 30, Long.MAX_VALUE, 8192, 0.95, 0.85, 0, null, Map.of("hits", 7L)));
    }

    @Override
    public MigrationReport migrate(final MigrateRequest request)
    {
        record(request);
        known(request.source(), "source");
        known(request.target(), "target");
        return report(41, request.dryRun() ? "dry-run" : "running");
    }

    @Override
    public Optional<MigrationReport> migration(final long id)
    {
        record("migration " + id);
        return id == 41 ? Optional.of(report(41, "done")) : Optional.empty();
    }

    @Override
    public List<MigrationReport> migrations()
    {
        record("migrations");
        return List.of(report(41, "done"));
    }

    @Override
    public EvictReport evict(final EvictRequest request)
    {
        record(request);
        known(request.tier(), "tier");
        return new EvictReport(request.tier(), 2, Map.of("not_held", 1L), request.dryRun());
    }

    @Override
    public MarkReport mark(final MarkRequest request)
    {
        record(request);
        known(request.tier(), "tier");
        return new MarkReport(7, request.tier(), request.keys().size(), request.namespace(), "admin", STARTED.plus(request.ttl()));
    }

    @Override
    public List<MarkReport> marks()
    {
        record("marks");
        return List.of(new MarkReport(7, "shared", 0, 0x0d8d5b6bec68e56eL, "admin", STARTED));
    }

    @Override
    public boolean unmark(final long id)
    {
        record("unmark " + id);
        return id == 7;
    }

    @Override
    public Health health()
    {
        record("health");
        return health;
    }
}
