package io.kvtier.cli;

import io.kvtier.admin.AdminServer;
import io.kvtier.events.EventPublisher;
import io.kvtier.admin.AdminSettings;
import io.kvtier.engine.Engine;
import io.kvtier.metrics.MetricsEndpoint;
import io.kvtier.engine.EngineGroup;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.ConfigFile;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.config.TrustDomains;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.spi.ConfigValues;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import sun.misc.Signal;

/**
 * {@code kvtier serve}: runs the engine until SIGINT or SIGTERM, then shuts down cleanly.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = {"Runs the engine until SIGINT or SIGTERM. On the signal, new requests are refused, in-flight backups get"
        + " l3.io-timeout to finish (unfinished ones are reported), the tiers close, the pool file is removed, and serve exits 0."},
    footer = {"", "Without --config the embedded defaults apply (docs/config.md)."})
public final class ServeCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "Settings file (key = value lines; see docs/config.md).")
    Path config;

    @Option(names = "--stats-interval", defaultValue = "0", paramLabel = "DURATION",
        description = "Print a counters line to stderr this often, e.g. 10s; 0 for never. Default: ${DEFAULT-VALUE}.")
    Duration statsInterval;

    @Mixin
    SettingsMixin settings;

    private final CountDownLatch stopped = new CountDownLatch(1);

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final TrustDomains domains = TrustDomains.load(config, withIpcOn(config, settings.settings()));
        // The admin settings are checked before the engine starts: a token file others can read stops the start early.
        final Map<String, AdminServer.Builder> admins = admins(domains);
        final EngineGroup group = EngineGroup.start(domains);
        final Map<String, AdminServer> servers = startAdmins(group, admins);
        final Map<String, EventPublisher> publishers = startPublishers(group, servers);
        final AtomicReference<String> signal = new AtomicReference<>();
        final AtomicBoolean closed = new AtomicBoolean();
        final Runnable stop = () ->
        {
            if (closed.compareAndSet(false, true))
            {
                err.println("kvtier: stopping" + (signal.get() == null ? "" : " on SIG" + signal.get()));
                err.flush();
                long inFlight = 0;
                for (final EngineGroup.Member member : group.members())
                {
                    inFlight += member.engine().backupsInFlight();
                }
                // The admin API stops first: no call reaches an engine that is closing.
                servers.values().forEach(AdminServer::close);
                // The publishers send what the engines recorded until now, then the engines close.
                publishers.values().forEach(EventPublisher::close);
                group.close();
                err.println("kvtier: stopped" + (inFlight > 0 ? " (" + inFlight + " backups were in flight at the signal; see the log for any left unfinished)" : ""));
                err.flush();
            }
        };
        // SIGTERM and SIGINT are the normal way to stop a service: handle them here, so that the clean stop
        // ends with exit code 0 instead of the JVM's 128 + signal. The hook covers any other way out.
        for (final String name : new String[] {"TERM", "INT"})
        {
            try
            {
                Signal.handle(new Signal(name), received ->
                {
                    signal.set(received.getName());
                    stopped.countDown();
                });
            }
            catch (final IllegalArgumentException ex)
            {
                err.println("kvtier: cannot handle SIG" + name + " (" + ex.getMessage() + "); it will stop the engine through a shutdown hook");
            }
        }
        final Thread hook = new Thread(stop, "kvtier-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        for (final EngineGroup.Member member : group.members())
        {
            final Engine engine = member.engine();
            final EngineConfig running = engine.config();
            out.println("kvtier serving" + (member.domain().isEmpty() ? "" : " trust domain " + member.domain()) + ": pool " + running.poolPath()
                + " (" + running.pageCount() + " pages of " + ConfigValues.formatSize(running.pageSize()) + "), tiers "
                + engine.tiers().stream().map(TierHandle::name).toList() + ", write policy " + running.writePolicy().configName() + ", eviction policy "
                + running.evictionPolicy() + engine.ipc().map(ipc -> ", IPC socket " + ipc.socketPath()).orElse(", IPC off") + ".");
        }
        servers.forEach((domain, server) -> out.println("kvtier admin API" + (domain.isEmpty() ? "" : " of trust domain " + domain) + ": "
            + server.uri() + (server.hasToken() ? " (calls that change something need the token of admin.token-file)"
            : " (read only: admin.token-file is not set)")));
        publishers.forEach((domain, publisher) -> out.println("kvtier KV events" + (domain.isEmpty() ? "" : " of trust domain " + domain)
            + ": " + publisher.endpoint() + (publisher.replayEndpoint().isEmpty() ? "" : ", replay " + publisher.replayEndpoint())
            + " (docs/kv-events.md)"));
        out.println("Stop with Ctrl-C or SIGTERM.");
        out.flush();
        try
        {
            while (!stopped.await(statsInterval.isZero() ? 3_600_000 : statsInterval.toMillis(), TimeUnit.MILLISECONDS))
            {
                if (!statsInterval.isZero())
                {
                    for (final EngineGroup.Member member : group.members())
                    {
                        err.println((member.domain().isEmpty() ? "" : "[" + member.domain() + "] ") + statsLine(member.engine().snapshot()));
                    }
                    err.flush();
                }
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        stop.run();
        try
        {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (final IllegalStateException ex)
        {
            // the JVM is already shutting down: the hook has run stop() or finds it done
        }
        return ExitCode.OK;
    }

    /** @return the operations of a running engine that its admin API serves: the one place serve reaches them */
    static EngineOperations operations(final Engine engine)
    {
        return engine.operations();
    }

    /** @return the admin API's builder of each trust domain ("" without domains) whose settings set admin.listen, checked */
    private static Map<String, AdminServer.Builder> admins(final TrustDomains domains)
    {
        final Map<String, AdminServer.Builder> admins = new LinkedHashMap<>();
        if (domains.isEmpty())
        {
            AdminSettings.configure(domains.shared()).ifPresent(builder -> admins.put("", builder));
            return admins;
        }
        final Map<String, String> listening = new HashMap<>();
        for (final TrustDomains.Domain domain : domains.domains())
        {
            final String listen = domain.config().get(EngineSettings.ADMIN_LISTEN);
            final String other = listen.endsWith(":0") ? null : listening.putIfAbsent(listen, domain.name());
            if (other != null)
            {
                throw new ConfigException(EngineSettings.ADMIN_LISTEN.key(), "trust domains " + other + " and " + domain.name() + " both set"
                    + " admin.listen = " + listen + ": give each its own (domain.<name>.admin.listen), or set it for one only");
            }
            AdminSettings.configure(domain.config()).ifPresent(builder -> admins.put(domain.name(), builder));
        }
        return admins;
    }

    /** Starts the KV event publisher of each engine with events.enabled; if one cannot start, closes everything that started. */
    private static Map<String, EventPublisher> startPublishers(final EngineGroup group, final Map<String, AdminServer> servers)
    {
        final Map<String, EventPublisher> publishers = new LinkedHashMap<>();
        try
        {
            for (final EngineGroup.Member member : group.members())
            {
                member.engine().events().ifPresent(source -> publishers.put(member.domain(), EventPublisher.start(source)));
            }
            return publishers;
        }
        catch (final RuntimeException ex)
        {
            publishers.values().forEach(EventPublisher::close);
            servers.values().forEach(AdminServer::close);
            group.close();
            throw ex;
        }
    }

    /** Starts each configured admin API on its engine; if one cannot start, closes what started and the engines. */
    private static Map<String, AdminServer> startAdmins(final EngineGroup group, final Map<String, AdminServer.Builder> admins) throws IOException
    {
        final Map<String, AdminServer> servers = new LinkedHashMap<>();
        try
        {
            for (final EngineGroup.Member member : group.members())
            {
                final AdminServer.Builder builder = admins.get(member.domain());
                if (builder != null)
                {
                    // /metrics reads the engine's own mapping of its pool: the server stops before the engine closes.
                    builder.route(MetricsEndpoint.PATH, MetricsEndpoint.of(member.engine()).handler());
                    servers.put(member.domain(), builder.start(operations(member.engine())));
                }
            }
            return servers;
        }
        catch (final IOException | RuntimeException ex)
        {
            servers.values().forEach(AdminServer::close);
            group.close();
            throw ex;
        }
    }

    /**
     * A served engine exists for other processes: IPC is on unless the file or the command line says
     * {@code ipc.enabled = false} (the embedded engine's default stays off).
     */
    private static Map<String, String> withIpcOn(final Path file, final Map<String, String> overrides)
    {
        final String key = EngineSettings.IPC_ENABLED.key();
        if (overrides.containsKey(key) || (file != null && ConfigFile.read(file).containsKey(key)))
        {
            return overrides;
        }
        final Map<String, String> on = new java.util.LinkedHashMap<>(overrides);
        on.put(key, "true");
        return on;
    }

    private static String statsLine(final Map<EngineCounter, Long> counters)
    {
        final StringBuilder line = new StringBuilder("kvtier stats:");
        for (final EngineCounter counter : new EngineCounter[] {EngineCounter.REQUESTS, EngineCounter.PAGES_IN_USE, EngineCounter.L2_HIT_PAGES,
            EngineCounter.L3_HIT_PAGES, EngineCounter.PAGES_COMMITTED, EngineCounter.PAGES_EVICTED, EngineCounter.BACKUPS_COMPLETED,
            EngineCounter.BACKUPS_IN_FLIGHT, EngineCounter.L3_CORRUPT, EngineCounter.L3_ERRORS})
        {
            line.append(' ').append(counter.label()).append('=').append(counters.get(counter));
        }
        return line.toString();
    }
}
