package io.kvtier.engine;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.TrustDomains;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.engine.tier.TierPlugins;
import io.kvtier.engine.tier.TierRegistry;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What {@code kvtier serve} runs: one engine, or one engine per trust domain ({@link TrustDomains}),
 * each with its own pool, socket and allow-lists, all on one set of L3 tiers started once and shared.
 * A domain's objects in those tiers are named with its own {@code l3.key-salt}, so no domain's
 * requests ever reach another's; a tier's report of an object it dropped goes to every domain, and
 * only the one whose name it is acts on it.
 *
 * <p>The shared tiers are given no transfer memory (there is one pool per domain, and a tier registers
 * at most one): they read and write pool slices as they would a staging frame.
 */
public final class EngineGroup implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(EngineGroup.class.getName());

    /**
     * One running engine.
     *
     * @param domain its domain's name, or empty for the single engine of a configuration without domains
     * @param engine the engine
     */
    public record Member(String domain, Engine engine)
    {
    }

    private final List<Member> members;
    private final List<TierHandle> sharedTiers;
    private final TierPlugins plugins;
    private final EngineConfig shared;

    private EngineGroup(final List<Member> members, final List<TierHandle> sharedTiers, final TierPlugins plugins, final EngineConfig shared)
    {
        this.members = List.copyOf(members);
        this.sharedTiers = sharedTiers;
        this.plugins = plugins;
        this.shared = shared;
    }

    /**
     * Starts the engine, or each domain's engine on tiers started once.
     *
     * @param domains validated settings
     * @return the running group
     * @throws IOException if a pool file cannot be created, or a socket
     */
    public static EngineGroup start(final TrustDomains domains) throws IOException
    {
        if (domains.isEmpty())
        {
            return new EngineGroup(List.of(new Member("", Engine.start(domains.shared()))), List.of(), null, domains.shared());
        }
        final EngineConfig shared = domains.shared();
        final long frameLength = domains.domains().getFirst().config().pageSize() + PageFrameDescriptor.TRAILER_BLOCK_LENGTH;
        final List<Pipeline> pipelines = new CopyOnWriteArrayList<>();
        final TierPlugins plugins = TierPlugins.discover(shared.get(io.kvtier.engine.config.EngineSettings.PLUGINS_DIR));
        final List<TierHandle> tiers;
        try
        {
            tiers = TierRegistry.start(shared.tiers(), plugins, frameLength, null, (tier, high, low) ->
            {
                for (final Pipeline pipeline : pipelines)
                {
                    pipeline.objectRemoved(tier, high, low);
                }
            });
        }
        catch (final RuntimeException | Error ex)
        {
            plugins.close();
            throw ex;
        }
        final List<Member> started = new ArrayList<>();
        try
        {
            for (final TrustDomains.Domain domain : domains.domains())
            {
                final Engine engine = Engine.startOnShared(domain.config(), EngineClock.SYSTEM, tiers, pipelines::add);
                started.add(new Member(domain.name(), engine));
                LOG.log(System.Logger.Level.INFO, "trust domain {0}: pool {1}{2}", domain.name(), domain.config().poolPath(),
                    engine.ipc().map(ipc -> ", socket " + ipc.socketPath()).orElse(", IPC off"));
            }
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            new EngineGroup(started, tiers, plugins, shared).close();
            throw ex;
        }
        return new EngineGroup(started, tiers, plugins, shared);
    }

    /** @return the running engines, in the order their domains were first named (one, without domains) */
    public List<Member> members()
    {
        return members;
    }

    /** @return the engine of a domain */
    public Engine engine(final String domain)
    {
        for (final Member member : members)
        {
            if (member.domain().equals(domain))
            {
                return member.engine();
            }
        }
        throw new IllegalArgumentException("no domain " + domain);
    }

    /** Stops every engine (each lets its backups finish, within its l3.io-timeout), then the tiers they shared. */
    @Override
    public void close()
    {
        for (int i = members.size() - 1; i >= 0; i--)
        {
            members.get(i).engine().close();
        }
        if (plugins == null)
        {
            return;
        }
        final List<String> notClosed = Engine.closeTiers(sharedTiers, shared.l3IoTimeout());
        if (notClosed.isEmpty())
        {
            plugins.close();
        }
        else
        {
            LOG.log(System.Logger.Level.ERROR, "the shared tiers {0} did not close within {1} ms; their plugins stay loaded until the process exits",
                notClosed, shared.l3IoTimeout().toMillis());
        }
    }
}
