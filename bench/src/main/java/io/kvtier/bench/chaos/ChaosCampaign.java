package io.kvtier.bench.chaos;

import io.kvtier.bench.workload.PagePattern;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.IpcException;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.StorageTierProvider;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A chaos campaign: {@code kvtier serve} in its own process on two L3 tiers (the {@code faults} tier wrapping
 * {@code posix} where that type is installed, {@code posix} otherwise), honest client processes over IPC in each
 * language asked for (Java, C, Python: {@link ChaosClientLaunchers}; the client slots taken by the languages in
 * turn, a dead client replaced by one of its slot's language), and
 * faults drawn from one {@link SplittableRandom}: kills and stops of clients, kills of the engine, filled
 * filesystems, a descriptor limit, hostile clients. Then every fault is healed, the engine restarted with an
 * empty pool, and every page a client saw acknowledged as backed up is read back and checked.
 */
public final class ChaosCampaign
{
    /** The namespace's model id every honest client names (they share prefixes). */
    static final String MODEL = "chaos";
    private static final int PAGE_SIZE = 16 * 1024;
    private static final long CLIENT_TIMEOUT_MS = 1_000;
    private static final long SESSION_TIMEOUT_MS = 2_000;
    /** A stopped client sleeps this long: past its lease, so the engine drops it and reclaims what it held. */
    private static final long STOP_MS = SESSION_TIMEOUT_MS + 1_000;
    /**
     * Pages a dropped client had reserved rest this long before reuse: longer than any stop, so a late writer's
     * poison lands in a page nobody reads. (With it shorter than the stop, late writes land in other keys'
     * pages and readers count wrong bytes: the campaign caught exactly that with 1 s.)
     */
    private static final long QUARANTINE_MS = STOP_MS + 7_000;
    /**
     * The tier faults' rates: L3 sees few calls (most reads are pool hits, and pages are written to L3 once),
     * so every kind, the rare ones in the wild (slow, stalled) too, is drawn at about 1%: a campaign of an hour
     * makes some 15,000 L3 reads and as many writes, enough to inject each about 100 times or more.
     */
    // Writes reach L3 about once per key and engine run, far less often than reads, and calls are fewer than
    // keys: the write and call kinds are drawn more often so that a long campaign injects each of them about
    // as often as the read kinds (at 0.012 and 0.005, 70 minutes drew torn writes 79 times and eio-read 327).
    private static final String TIER_FAULTS = "eio-read:0.015, eio-write:0.03, enospc-write:0.03, slow-read:0.015, stall-read:0.015, "
        + "block-call:0.008, short-read:0.015, torn-write:0.03, bit-flip:0.03, replace:0.03, late-write:0.015";

    /** The rate a tier fault kind not injected yet is raised to. */
    private static final double BOOSTED_RATE = 0.05;
    /**
     * The rate a tier fault kind still short of {@code --min-each} is raised to once the duration has passed: writes
     * reach L3 about once per key and engine run, so at the configured rates a busy host's slower clients leave the
     * write kinds short, and waiting for them at those rates would double a campaign.
     */
    private static final double OVERTIME_RATE = 0.1;
    /** How often a fault the first round could not inject is drawn again before the campaign gives up on it. */
    private static final int RETRIES = 5;
    /** In overtime, how long an engine runs at least before it is killed again. */
    private static final long ENGINE_KILL_SPACING_MS = 10_000;

    private final ChaosOptions options;
    private final PrintWriter log;
    private final SplittableRandom random;
    private final ChaosReport report = new ChaosReport();
    private final List<String> events = new ArrayList<>();
    private final List<Client> clients = new ArrayList<>();
    /** The languages that run here, in the order asked: client slot i is language i modulo their count. */
    private final List<ChaosClientLaunchers.Launcher> languages = new ArrayList<>();
    /** The client in each slot, the latest started (null before the first). */
    private Client[] slots;
    /** Kills and stops so far: each goes to the next running language in turn (kills and stops apart), so each takes part. */
    private long killVictims;
    private long stopVictims;
    private final Path work;
    private final long start = System.nanoTime();
    private final boolean faultTier;
    private final java.util.concurrent.atomic.AtomicBoolean cleanedUp = new java.util.concurrent.atomic.AtomicBoolean();
    private EngineProcess engine;
    private boolean everyTierKindSeen;
    private long engineStarts;
    /** How often each fault the first round could not inject was drawn again. */
    private final Map<Fault, Integer> retried = new java.util.EnumMap<>(Fault.class);
    private Path enginePool;
    private Path[] l3Dirs;
    private String boosted = "";
    private Path shmDir;
    private Path l3Mount;
    private int clientSerial;
    private final List<Fault> firstRound = new ArrayList<>();
    private long drawn;
    private long hostileDrawn;
    /** Whether the faulty phase runs past its duration for the kinds short of {@code --min-each}. */
    private boolean overtime;
    /** When the engine last started (System.nanoTime). */
    private long engineStartedAt;
    /** The kinds short of {@code --min-each} and their counts, as last looked at in overtime. */
    private Map<String, Long> shortKinds = Map.of();

    /**
     * @param options what to run
     * @param log     where progress lines go (stderr)
     */
    public ChaosCampaign(final ChaosOptions options, final PrintWriter log)
    {
        this.options = options;
        this.log = log;
        this.random = new SplittableRandom(options.seed());
        this.work = options.workDir().toAbsolutePath();
        this.faultTier = ServiceLoader.load(StorageTierProvider.class).stream().anyMatch(p -> "faults".equals(p.get().type()));
    }

    /** @return whether the {@code faults} tier type is installed, so tier faults are injected */
    public boolean hasFaultTier()
    {
        return faultTier;
    }

    /** Logs a decision or an observation with the campaign time, to stderr and the replay file's event log. */
    private void event(final String what)
    {
        final String line = String.format("%.3f %s", (System.nanoTime() - start) / 1e9, what);
        synchronized (events)
        {
            events.add(line);
        }
        log.println("chaos: " + line);
        log.flush();
    }

    /**
     * Runs the campaign: the faulty phase for the options' duration, then the healed verification.
     *
     * @return the figures; {@link ChaosReport#failed()} when a must-be-zero one is not zero (then the
     *         work directory holds replay.json)
     * @throws IOException if the engine cannot be run at all
     */
    public ChaosReport run() throws IOException, InterruptedException
    {
        report.seed = options.seed();
        Files.createDirectories(work);
        // The client languages first: one that cannot run is named before anything is mounted or started.
        for (final ChaosClientLaunchers.Launcher launcher : ChaosClientLaunchers.prepare(new LinkedHashSet<>(options.clients()), log))
        {
            final String language = launcher.language();
            final ChaosReport.LanguageFigures figures = new ChaosReport.LanguageFigures();
            report.clientsByLanguage.put(language, figures);
            if (launcher.missing() != null)
            {
                figures.missing = launcher.missing();
                report.notes.add(language + " clients did not run: " + launcher.missing());
                event(language + " clients cannot run here, the campaign runs on without them: " + launcher.missing());
            }
            else
            {
                languages.add(launcher);
            }
        }
        if (languages.isEmpty())
        {
            throw new IOException("no client language of --clients " + String.join(",", options.clients()) + " can run here: "
                + String.join("; ", report.notes));
        }
        slots = new Client[options.clientProcesses()];
        final Path l3a = Files.createDirectories(work.resolve("l3a"));
        final Path l3b = Files.createDirectories(work.resolve("l3b"));
        l3Mount = mount(l3a, "160m", "the L3 filesystem filling up (l3-full)");
        shmDir = mount(Files.createDirectories(work.resolve("shm")), "48m", "/dev/shm filling up (shm-full)");
        final Path pool = shmDir != null ? shmDir.resolve("pool") : Path.of("/dev/shm/kvtier-chaos-" + ProcessHandle.current().pid());
        if (!faultTier)
        {
            report.notes.add("tier faults are not available: no tier of type faults is installed (plugins/faults); the L3 tiers are plain posix");
        }
        final Path config = writeConfig(pool, l3a, l3b);
        engine = new EngineProcess(options.serveCommand(), config, pool, work);
        // A campaign stopped by a signal (Ctrl-C, kill) would otherwise leave its engine and clients running and its filesystems mounted.
        final Thread hook = new Thread(() -> cleanUp(pool), "kvtier-chaos-clean-up");
        Runtime.getRuntime().addShutdownHook(hook);
        try
        {
            startEngine();
            event("engine started, pid " + engine.pid() + (faultTier ? ", tier faults on" : ", no tier faults"));
            for (int slot = 0; slot < slots.length; slot++)
            {
                // The wrong writer is the first client of its language, as the test asks.
                final String language = languageOf(slot);
                startClient(slot, language.equals(options.wrongWriter()) && slot == firstSlotOf(language));
            }
            awaitClientsWorking();
            final long end = System.nanoTime() + options.duration().toNanos();
            final long overtimeEnd = end + options.overtime().toNanos();
            // The first round always ends, so that every kind is injected once however slow the host.
            while (System.nanoTime() < end || drawn == 0 || !firstRound.isEmpty() || owed() != null || goOnInOvertime(overtimeEnd))
            {
                Thread.sleep(100 + random.nextInt(700));
                replaceDeadClients();
                try
                {
                    boostMissingTierFaults();
                    injectOne();
                }
                catch (final IOException ex)
                {
                    if (!engine.alive())
                    {
                        throw ex;
                    }
                    // The engine runs but did not serve a connection the fault needed: that is the engine failing
                    // to keep serving, not the campaign's to swallow.
                    report.failures.add("the engine (pid " + engine.pid() + ") runs but failed a connection: " + ex.getMessage());
                    event("the engine runs but failed a connection: " + ex.getMessage());
                }
            }
            endOvertime(end);
            finish(l3a, l3b);
        }
        finally
        {
            cleanUp(pool);
            removeHook(hook);
        }
        report.durationSeconds = (System.nanoTime() - start) / 1e9;
        if (report.failed())
        {
            writeReplay();
        }
        return report;
    }

    /** Kills the clients and the engine and unmounts what the campaign mounted; once, from the end of the run or a shutdown hook. */
    private void cleanUp(final Path pool)
    {
        if (!cleanedUp.compareAndSet(false, true))
        {
            return;
        }
        final List<Client> started;
        synchronized (clients)
        {
            started = List.copyOf(clients);
        }
        for (final Client client : started)
        {
            client.process.destroyForcibly();
        }
        try
        {
            engine.kill();
            Files.deleteIfExists(pool);
            Files.deleteIfExists(engine.socket());
            unmount(shmDir);
            unmount(l3Mount);
        }
        catch (final IOException ex)
        {
            log.println("chaos: clean-up failed: " + ex);
            log.flush();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static void removeHook(final Thread hook)
    {
        try
        {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (final IllegalStateException ex)
        {
            // Already shutting down: the hook runs, and finds the clean-up done.
        }
    }

    /** Writes the engine's config for its next run (each run's tier seeds its own), then starts it. */
    private void startEngine() throws IOException, InterruptedException
    {
        writeConfig(enginePool, l3Dirs[0], l3Dirs[1]);
        engineStarts++;
        engine.start(List.of());
        engineStartedAt = System.nanoTime();
    }

    /** Writes the engine's config: the pool, IPC with short leases, the admin API, and the two L3 tiers. */
    private Path writeConfig(final Path pool, final Path l3a, final Path l3b) throws IOException
    {
        enginePool = pool;
        l3Dirs = new Path[] {l3a, l3b};
        final List<String> lines = new ArrayList<>(List.of("pool.path = " + pool, "pool.size = 8MiB", "pool.page-size = " + PAGE_SIZE,
            "ipc.enabled = true", "ipc.ring-bytes = 64KiB", "ipc.client-timeout = " + CLIENT_TIMEOUT_MS + "ms",
            "lease.session-timeout = " + SESSION_TIMEOUT_MS + "ms", "lease.reservation-timeout = 1s", "lease.quarantine = " + QUARANTINE_MS + "ms",
            "l3.io-timeout = 1s", "admin.listen = 127.0.0.1:0", "l3.tiers = a, b"));
        // Both layouts under the same faults: tier a, whose filesystem the l3-full fault fills, in files (a slab writes into
        // the extents it made before the filesystem filled, and would meet that fault only when it grows); tier b takes the
        // POSIX tier's default for a directory of its own, the slab.
        tier(lines, "a", l3a, 1, "files");
        tier(lines, "b", l3b, 2, null);
        final Path config = work.resolve("kvtier.conf");
        Files.write(config, lines);
        return config;
    }

    /** Adds a tier's lines: faults wrapping posix where that type is installed, posix otherwise; the layout named, or the default. */
    private void tier(final List<String> lines, final String name, final Path dir, final long salt, final String layout) throws IOException
    {
        final String p = "tier." + name + ".";
        if (!faultTier)
        {
            lines.addAll(List.of(p + "type = posix", p + "dir = " + dir, p + "fanout-levels = 1"));
            if (layout != null)
            {
                lines.add(p + "layout = " + layout);
            }
            return;
        }
        if (layout != null)
        {
            lines.add(p + "wrap.layout = " + layout);
        }
        final Path control = work.resolve("faults-" + name + ".ctl");
        if (!Files.exists(control))
        {
            // Only at the first start: a restart keeps what the campaign set (boosted kinds, or healed).
            Files.writeString(control, "");
        }
        // A stall must outlast l3.io-timeout (1 s) to be one, and no more: the tier's default (31 s) would keep it out of
        // service for half a minute a time.
        lines.addAll(List.of(p + "type = faults", p + "wrap = posix", p + "wrap.dir = " + dir, p + "wrap.fanout-levels = 1",
            // A seed of its own for each engine run: with one seed, every run replayed the same first draws, and a
            // 65-minute campaign whose runs each made few L3 writes never reached a torn write or a replace.
            p + "seed = " + (options.seed() * 31 + salt + 1_000_003L * engineStarts), p + "faults = " + TIER_FAULTS, p + "slow = 50ms", p + "stall = 2s",
            p + "fault-log = " + work.resolve("faults-" + name + ".jsonl"), p + "fault-control = " + control, p + "trusted = false"));
    }

    /** @return the mounted directory, or null (the fault it serves is skipped, saying why) */
    private Path mount(final Path dir, final String size, final String fault)
    {
        try
        {
            final Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
            final String said = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (mount.waitFor() == 0)
            {
                return dir;
            }
            report.notes.add(fault + " skipped: cannot mount a tmpfs (" + said + ")");
        }
        catch (final IOException ex)
        {
            report.notes.add(fault + " skipped: cannot run mount (" + ex.getMessage() + ")");
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    /** Lazily unmounts a tmpfs the campaign mounted (null: none). */
    private static void unmount(final Path dir) throws InterruptedException
    {
        if (dir != null)
        {
            try
            {
                new ProcessBuilder("umount", "-l", dir.toString()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
            }
            catch (final IOException ex)
            {
                // Left mounted: the directory's owner sees it in mount's list.
            }
        }
    }

    /** One honest client process and what it said. */
    private final class Client
    {
        final int id;
        final int slot;
        final String language;
        final Process process;
        final Path acks;
        final BlockingQueue<String> said = new LinkedBlockingQueue<>();
        /** What it last said on a T line: its process's totals so far. */
        volatile ClientTotals totals = ClientTotals.NONE;
        /** Its W lines: a wrong page it read counts even when it dies before its next totals. */
        volatile long wrongSeen;
        volatile long late;
        boolean folded;

        Client(final int id, final int slot, final String language, final Process process, final Path acks)
        {
            this.id = id;
            this.slot = slot;
            this.language = language;
            this.process = process;
            this.acks = acks;
            Thread.ofPlatform().daemon().name("chaos-client-" + id).start(this::read);
        }

        private void read()
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                for (String line = in.readLine(); line != null; line = in.readLine())
                {
                    if (line.startsWith("T "))
                    {
                        totals = ClientTotals.parse(line);
                    }
                    else if (line.startsWith("W "))
                    {
                        wrongSeen++;
                        event("client " + name() + " read wrong bytes for key " + line.substring(2));
                    }
                    else if (line.startsWith("LATE "))
                    {
                        late = Long.parseLong(line.substring(5));
                        said.add(line);
                    }
                    else
                    {
                        said.add(line);
                    }
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                // The process died mid-line: its last whole totals stand.
            }
        }

        void command(final String line)
        {
            try
            {
                final OutputStream in = process.getOutputStream();
                in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            catch (final IOException ex)
            {
                // It died: the supervisor starts another.
            }
        }

        /** @return the client's id and language, as events name it */
        String name()
        {
            return id + " (" + language + ")";
        }

        boolean pauseAt(final String point) throws InterruptedException
        {
            command("PAUSE " + point);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline && process.isAlive())
            {
                final String line = said.poll(100, TimeUnit.MILLISECONDS);
                if (("PAUSED " + point).equals(line))
                {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Waits, at most two minutes, until every client started so far has answered a request: the duration is of
     * faults against working clients, not of JVMs starting on a loaded host (where a 5 s campaign once ended
     * before any client had read a page).
     */
    private void awaitClientsWorking() throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (clients.stream().anyMatch(c -> c.process.isAlive() && c.totals.requests() == 0))
        {
            if (System.nanoTime() > deadline)
            {
                event("not every client answered a request within 120 s; the faults start anyway");
                return;
            }
            Thread.sleep(20);
        }
        event("every client works; the faults start");
    }

    /** @return the language of a client slot: the running languages take the slots in turn */
    private String languageOf(final int slot)
    {
        return languages.get(slot % languages.size()).language();
    }

    /** @return the first slot of a language, or -1 when it does not run */
    private int firstSlotOf(final String language)
    {
        for (int slot = 0; slot < slots.length; slot++)
        {
            if (languageOf(slot).equals(language))
            {
                return slot;
            }
        }
        return -1;
    }

    /** Starts an honest client process in a slot, of the slot's language (the wrong writer only when the test asks for one). */
    private void startClient(final int slot, final boolean wrongWriter) throws IOException
    {
        final int id = clientSerial++;
        final ChaosClientLaunchers.Launcher launcher = languages.get(slot % languages.size());
        final Path acks = work.resolve("acks-" + id + ".txt");
        final List<String> args = new ArrayList<>(List.of(engine.socket().toString(), Long.toString(options.seed() * 1_000_003 + id),
            acks.toString(), MODEL));
        if (wrongWriter)
        {
            args.add("wrong-writer");
        }
        final ProcessBuilder builder = launcher.start(args);
        builder.redirectError(work.resolve("client-" + id + ".err").toFile());
        synchronized (clients)
        {
            if (cleanedUp.get())
            {
                throw new IOException("the campaign is stopping: no client is started");
            }
            final Client client = new Client(id, slot, launcher.language(), builder.start(), acks);
            clients.add(client);
            slots[slot] = client;
        }
        report.clientsByLanguage.get(launcher.language()).started++;
    }

    /** Replaces a client the campaign just killed with a new one of its slot's language. */
    private void restart(final Client client) throws IOException
    {
        startClient(client.slot, false);
    }

    /**
     * @param live the live clients
     * @param turn how many kills (or stops) came before this one
     * @return the live client a kill or stop hits: one of the turn's language (any live one when that language has
     *         none live), drawn from the seed; with one language, any live client as drawn
     */
    private Client victim(final List<Client> live, final long turn)
    {
        final String language = languages.get((int)(turn % languages.size())).language();
        final List<Client> of = live.stream().filter(c -> c.language.equals(language)).toList();
        final List<Client> pool = of.isEmpty() ? live : of;
        return pool.get(random.nextInt(pool.size()));
    }

    /** @return the honest client processes still running */
    private List<Client> live()
    {
        return clients.stream().filter(c -> c.process.isAlive()).toList();
    }

    /** Starts a client for each one that died (killed, or dropped by the engine), of its slot's language, so that the load stays. */
    private void replaceDeadClients() throws IOException
    {
        for (int slot = 0; slot < slots.length; slot++)
        {
            if (slots[slot] == null || !slots[slot].process.isAlive())
            {
                startClient(slot, false);
            }
        }
    }

    /** The faults the campaign draws besides the tier's own, each counted under its name in the report. */
    enum Fault
    {
        // Weighed so that a long campaign injects every kind about equally often (each hostile attack as one
        // kind: they take turns), engine kills a tenth as often; 1,730 draws give each about 100.
        CLIENT_KILL_PINS("client-kill-pins", 10),
        CLIENT_KILL_WRITE("client-kill-write", 10),
        CLIENT_KILL_RANDOM("client-kill-random", 10),
        CLIENT_STOP("client-stop", 10),
        ENGINE_KILL("engine-kill", 3),
        HOSTILE("hostile", 10 * HostileClients.Attack.values().length),
        FD_LIMIT("fd-limit", 10),
        L3_FULL("l3-full", 10),
        SHM_FULL("shm-full", 10),
        POOL_FULL("pool-full", 10);

        final String kind;
        final int weight;

        Fault(final String kind, final int weight)
        {
            this.kind = kind;
            this.weight = weight;
        }
    }

    /**
     * @return the next fault: every one once first (the hostile clients once per attack), in an order drawn from the
     *         seed, then drawn by weight
     */
    private Fault nextFault()
    {
        if (firstRound.isEmpty() && drawn == 0)
        {
            firstRound.addAll(List.of(Fault.values()));
            for (int i = 1; i < HostileClients.Attack.values().length; i++)
            {
                firstRound.add(Fault.HOSTILE);
            }
            for (int i = firstRound.size() - 1; i > 0; i--)
            {
                java.util.Collections.swap(firstRound, i, random.nextInt(i + 1));
            }
        }
        drawn++;
        if (!firstRound.isEmpty())
        {
            return firstRound.removeFirst();
        }
        final Fault owed = owed();
        if (owed != null)
        {
            retried.merge(owed, 1, Integer::sum);
            event(owed.kind + " drawn again: the first round could not inject it (try " + retried.get(owed) + " of " + RETRIES + ")");
            return owed;
        }
        // In overtime only the kinds still short are drawn; when only tier kinds are short, every kind is, to keep
        // the clients writing through engine restarts. An engine younger than ENGINE_KILL_SPACING_MS is not killed
        // in overtime: drawn back to back, engine kills alone left the clients no time to write, and so the tier
        // write kinds no writes to fault (a campaign at c18967a spent most of its 28 minutes of overtime so).
        final boolean engineYoung = System.nanoTime() - engineStartedAt < TimeUnit.MILLISECONDS.toNanos(ENGINE_KILL_SPACING_MS);
        final List<Fault> candidates = new ArrayList<>();
        for (final Fault fault : Fault.values())
        {
            if (overtime && kindsOf(fault).stream().anyMatch(shortKinds::containsKey) && !(fault == Fault.ENGINE_KILL && engineYoung))
            {
                candidates.add(fault);
            }
        }
        if (candidates.isEmpty())
        {
            candidates.addAll(List.of(Fault.values()));
        }
        int total = 0;
        for (final Fault fault : candidates)
        {
            total += fault.weight;
        }
        int pick = random.nextInt(total);
        for (final Fault fault : candidates)
        {
            pick -= fault.weight;
            if (pick < 0)
            {
                return fault;
            }
        }
        throw new AssertionError("weights");
    }

    /** @return the report names of what a fault injects: one per hostile attack, else its own kind */
    private static List<String> kindsOf(final Fault fault)
    {
        if (fault != Fault.HOSTILE)
        {
            return List.of(fault.kind);
        }
        final List<String> kinds = new ArrayList<>();
        for (final HostileClients.Attack attack : HostileClients.Attack.values())
        {
            kinds.add(hostileKind(attack));
        }
        return kinds;
    }

    /** @return the report name of a hostile attack */
    private static String hostileKind(final HostileClients.Attack attack)
    {
        return "hostile-" + attack.name().toLowerCase().replace('_', '-');
    }

    /** @return whether the campaign can inject the fault at all: a filesystem the command may not mount it cannot fill */
    private boolean mayInject(final Fault fault)
    {
        return !(fault == Fault.L3_FULL && l3Mount == null || fault == Fault.SHM_FULL && shmDir == null);
    }

    /**
     * Asked once the duration has passed: whether the faulty phase goes on because some kind is still short of
     * {@code --min-each} and the overtime allowed is not used up. Logs when overtime starts.
     */
    private boolean goOnInOvertime(final long overtimeEnd) throws IOException
    {
        if (options.minEach() == 0)
        {
            return false;
        }
        shortKinds = shortOfMinEach();
        final boolean goOn = !shortKinds.isEmpty() && System.nanoTime() < overtimeEnd;
        if (goOn && !overtime)
        {
            overtime = true;
            event("the duration has passed with kinds injected fewer than " + options.minEach() + " times (--min-each): " + shortKinds
                + "; drawing only those for at most " + options.overtime().toSeconds() + " s more");
        }
        return goOn;
    }

    /** Records how long the faulty phase ran past its duration and which kinds stayed short of {@code --min-each}. */
    private void endOvertime(final long end) throws IOException
    {
        report.minEach = options.minEach();
        report.overtimeSeconds = Math.max(0, System.nanoTime() - end) / 1e9;
        if (options.minEach() == 0)
        {
            return;
        }
        report.shortOfMinEach.putAll(shortOfMinEach());
        if (report.shortOfMinEach.isEmpty())
        {
            event(String.format("every kind injected at least %d times (--min-each), %.0f s past the duration", options.minEach(),
                report.overtimeSeconds));
        }
        else
        {
            final String note = "kinds injected fewer than " + options.minEach() + " times (--min-each) when the overtime allowed ("
                + options.overtime().toSeconds() + " s) ran out: " + report.shortOfMinEach;
            report.notes.add(note);
            event(note);
        }
        overtime = false;
        if (faultTier && !boosted.isEmpty())
        {
            // The configured rates again for whatever follows (the healed phase writes all=0 anyway).
            Files.writeString(work.resolve("faults-a.ctl"), "");
            Files.writeString(work.resolve("faults-b.ctl"), "");
            boosted = "";
        }
    }

    /** @return every kind the campaign can inject that has been injected fewer than {@code --min-each} times, with its count */
    private Map<String, Long> shortOfMinEach() throws IOException
    {
        final Map<String, Long> counts = new TreeMap<>();
        for (final Fault fault : Fault.values())
        {
            if (mayInject(fault))
            {
                for (final String kind : kindsOf(fault))
                {
                    counts.put(kind, report.faults.getOrDefault(kind, 0L));
                }
            }
        }
        if (faultTier)
        {
            counts.putAll(tierFaultCounts());
        }
        counts.values().removeIf(count -> count >= options.minEach());
        return counts;
    }

    /** @return how often each tier fault kind has been injected so far, from both fault tiers' logs */
    private Map<String, Long> tierFaultCounts() throws IOException
    {
        final Map<String, Long> counts = FaultLogs.zeros();
        FaultLogs.read(work.resolve("faults-a.jsonl"), counts, new LinkedHashSet<>());
        FaultLogs.read(work.resolve("faults-b.jsonl"), counts, new LinkedHashSet<>());
        return counts;
    }

    /**
     * @return a fault of the campaign's own the first round drew but could not inject (a client that did not pause
     *         in time on a loaded host, a prlimit that failed), while it has tries left; null when none is owed
     */
    private Fault owed()
    {
        for (final Fault fault : Fault.values())
        {
            // Hostile attacks always count; a filesystem the command may not mount is skipped for good, saying why.
            final boolean unavailable = fault == Fault.HOSTILE || !mayInject(fault);
            if (!unavailable && report.faults.getOrDefault(fault.kind, 0L) == 0 && retried.getOrDefault(fault, 0) < RETRIES)
            {
                return fault;
            }
        }
        return null;
    }

    /** Counts a fault injected under its report name. */
    private void count(final Fault fault)
    {
        report.faults.merge(fault.kind, 1L, Long::sum);
    }

    /** Draws one fault and injects it, logging what was done. */
    private void injectOne() throws IOException, InterruptedException
    {
        final Fault fault = nextFault();
        final List<Client> live = live();
        switch (fault)
        {
            case CLIENT_KILL_PINS, CLIENT_KILL_WRITE, CLIENT_KILL_RANDOM ->
            {
                if (live.isEmpty())
                {
                    return;
                }
                final Client client = victim(live, killVictims++);
                final String point = fault == Fault.CLIENT_KILL_PINS ? "pins" : fault == Fault.CLIENT_KILL_WRITE ? "write" : null;
                final boolean paused = point == null || client.pauseAt(point);
                client.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                report.clientKills++;
                report.clientsByLanguage.get(client.language).killed++;
                count(fault);
                event("kill -9 client " + client.name() + " " + (point == null ? "at a random point" : (paused ? "paused " : "(did not pause in 10 s) ")
                    + ("pins".equals(point) ? "holding pins" : "mid-write, holding reservations")));
            }
            case CLIENT_STOP ->
            {
                if (!live.isEmpty())
                {
                    stopPastLease(victim(live, stopVictims++));
                }
            }
            case ENGINE_KILL ->
            {
                event("kill -9 engine, pid " + engine.pid());
                engine.kill();
                for (final Client client : live)
                {
                    client.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
                count(fault);
                startEngine();
                report.engineRestarts++;
                event("engine restarted on the same L3, pid " + engine.pid());
            }
            case HOSTILE -> hostile();
            case FD_LIMIT -> descriptorLimit();
            case L3_FULL -> fill(l3Mount, "l3-full");
            case SHM_FULL -> fill(shmDir, "shm-full");
            case POOL_FULL -> poolFull();
        }
    }

    /** Runs one hostile client's attack; one the engine let through fails the campaign. */
    private void hostile() throws IOException, InterruptedException
    {
        // The attacks take turns, so that each is run as often as any other.
        final HostileClients.Attack[] attacks = HostileClients.Attack.values();
        final HostileClients.Attack attack = attacks[(int)(hostileDrawn % attacks.length)];
        hostileDrawn++;
        final String answer;
        try
        {
            answer = new HostileClients(engine.socket(), CLIENT_TIMEOUT_MS).run(attack, random);
        }
        catch (final IpcException ex)
        {
            // Refused at the handshake for a reason of its own (a resource fault in force): the attack never ran.
            event("hostile " + attack + ": not attempted, the engine refused the connection (" + ex.errorCode() + ")");
            return;
        }
        if (HostileClients.NOT_ATTEMPTED.equals(answer))
        {
            event("hostile " + attack + ": not attempted (its set-up was refused: the pool is full)");
            return;
        }
        report.faults.merge(hostileKind(attack), 1L, Long::sum);
        if (HostileClients.SERVED_AS_COPIED.equals(answer))
        {
            event("hostile " + attack + ": " + answer);
        }
        else if (answer == null)
        {
            report.failures.add("hostile " + attack + " was neither refused nor dropped");
            event("hostile " + attack + ": NOT refused");
        }
        else
        {
            report.hostileRefused++;
            event("hostile " + attack + ": " + answer);
        }
    }

    /**
     * Fills the pool with reservations of a client that holds them (a second or so, within its lease), so
     * honest clients meet a full pool, then lets them go.
     */
    private void poolFull() throws IOException, InterruptedException
    {
        final int chunk = 64;
        final int chunks = 10;
        final Namespace namespace = new Namespace(MODEL + "-hog", "chaos-page16", 0, "");
        final PageKeyChain chain = new PageKeyChain(chunk * chunks);
        for (int i = 0; i < chunk * chunks; i++)
        {
            chain.add(random.nextLong(), random.nextLong());
        }
        final long before = engine.counter(EngineCounter.RESERVE_POOL_FULL);
        final List<AutoCloseable> held = new ArrayList<>();
        int reserved = 0;
        try (KvtierClient hog = KvtierClient.connect(engine.socket(), ClientOptions.of(chunk * chunks, namespace)))
        {
            for (int i = 0; i < chunks; i++)
            {
                final var pages = hog.reserve(chain, i * chunk, chunk);
                held.add(pages);
                reserved += pages.reservedCount();
                if (pages.reservedCount() < chunk)
                {
                    break;
                }
            }
            count(Fault.POOL_FULL);
            event("pool-full: a client holds " + reserved + " reservations; reserve_pool_full went from " + before + " to "
                + engine.counter(EngineCounter.RESERVE_POOL_FULL));
            Thread.sleep(500 + random.nextInt(500));
            for (final AutoCloseable pages : held)
            {
                pages.close();
            }
        }
        catch (final IpcException ex)
        {
            event("pool-full: not attempted, the engine refused the connection (" + ex.errorCode() + ")");
        }
        catch (final Exception ex)
        {
            event("pool-full: the hog client failed (" + ex + ")");
        }
        event("pool-full: reservations given back");
    }

    /** SIGSTOP of a client holding reservations, past its lease, then SIGCONT: its late commit must land nothing. */
    private void stopPastLease(final Client client) throws IOException, InterruptedException
    {
        if (!client.pauseAt("write"))
        {
            return;
        }
        final long pid = client.process.pid();
        signal("STOP", pid);
        Thread.sleep(STOP_MS);
        signal("CONT", pid);
        client.command("POISON");
        client.process.waitFor(30, TimeUnit.SECONDS);
        report.clientStops++;
        report.clientsByLanguage.get(client.language).stopped++;
        count(Fault.CLIENT_STOP);
        event("SIGSTOP client " + client.name() + " holding reservations past its lease, SIGCONT, it wrote poison and its commit landed "
            + client.late + " pages");
        if (client.late != 0)
        {
            report.failures.add("a late writer's commit landed " + client.late + " pages after its lease ran out (client " + client.name() + ")");
        }
    }

    /** Sends a signal by name (kill -NAME PID). */
    private static void signal(final String name, final long pid) throws IOException, InterruptedException
    {
        new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    }

    /** Lowers the engine's soft open-files limit to just above what it holds while a client reconnects, then puts it back. */
    private void descriptorLimit() throws IOException, InterruptedException
    {
        // At any moment, a cold engine's included: the engine loads its request path's classes before it serves
        // (ClassDirectories), so a limit reached before its first request no longer leaves it unable to serve.
        final long pid = engine.pid();
        final long open;
        try (var fds = Files.list(Path.of("/proc/" + pid + "/fd")))
        {
            open = fds.count();
        }
        final String soft = softNoFile(pid);
        final Process set = new ProcessBuilder("prlimit", "--pid", Long.toString(pid), "--nofile=" + (open + 2) + ":")
            .redirectErrorStream(true).start();
        final String said = new String(set.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (set.waitFor() != 0)
        {
            event("descriptor limit skipped: prlimit failed (" + said + ")");
            return;
        }
        count(Fault.FD_LIMIT);
        event("descriptor limit of the engine set to " + (open + 2) + " (it holds " + open + "); a client reconnects under it");
        final List<Client> live = live();
        if (!live.isEmpty())
        {
            live.getFirst().process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            restart(live.getFirst());
        }
        Thread.sleep(1_500);
        if (engine.alive() && engine.pid() == pid)
        {
            final Process reset = new ProcessBuilder("prlimit", "--pid", Long.toString(pid), "--nofile=" + soft + ":").redirectErrorStream(true)
                .start();
            final String answer = new String(reset.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            final String now = softNoFile(pid);
            if (reset.waitFor() != 0 || !now.equals(soft))
            {
                // The campaign's own failure, not the engine's: say so rather than blame the engine for what follows.
                throw new IllegalStateException("the engine's descriptor limit could not be put back to " + soft + " (it is " + now + "): " + answer);
            }
        }
        event("descriptor limit lifted (back to " + soft + ")");
    }

    /** @return the process's soft limit of open files, as /proc/PID/limits says it */
    private static String softNoFile(final long pid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/limits")))
        {
            if (line.startsWith("Max open files"))
            {
                return line.substring("Max open files".length()).trim().split("\\s+")[0];
            }
        }
        throw new IOException("/proc/" + pid + "/limits names no open-files limit");
    }

    /** Fills a tmpfs the campaign mounted to its last byte for a second or two, then frees it (null: skipped). */
    private void fill(final Path dir, final String kind) throws IOException, InterruptedException
    {
        if (dir == null)
        {
            return;
        }
        final Path filler = dir.resolve("chaos-filler");
        long written = 0;
        try (var out = Files.newByteChannel(filler, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE))
        {
            final ByteBuffer block = ByteBuffer.allocate(1 << 16);
            while (true)
            {
                block.clear();
                written += out.write(block);
            }
        }
        catch (final IOException ex)
        {
            // ENOSPC: full, as wanted.
        }
        report.faults.merge(kind, 1L, Long::sum);
        event(kind + ": filled " + dir + " (" + written + " bytes)");
        if ("shm-full".equals(kind))
        {
            final List<Client> live = live();
            if (!live.isEmpty())
            {
                // A client that attaches now needs ring files in the full filesystem.
                live.getFirst().process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                restart(live.getFirst());
            }
        }
        Thread.sleep(1_000 + random.nextInt(1_000));
        Files.deleteIfExists(filler);
        event(kind + ": freed " + dir);
    }

    /** Ends the faulty phase: stops the clients, heals, counts leaks, then verifies every acknowledged page on a fresh engine. */
    private void finish(final Path l3a, final Path l3b) throws IOException, InterruptedException
    {
        event("faulty phase over: clients stop, faults heal");
        for (final Client client : clients)
        {
            client.process.getOutputStream().close();
        }
        for (final Client client : clients)
        {
            if (!client.process.waitFor(30, TimeUnit.SECONDS))
            {
                client.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            final ClientTotals t = client.totals;
            // A client killed between a W line and its next totals: the W lines count.
            final long wrong = Math.max(t.wrong(), client.wrongSeen);
            report.pagesVerified += t.verified();
            report.wrongBytesServed += wrong;
            final ChaosReport.LanguageFigures figures = report.clientsByLanguage.get(client.language);
            figures.pagesVerified += t.verified();
            figures.wrongBytesServed += wrong;
            figures.pagesCommitted += t.committed();
            figures.pagesAcknowledged += t.acknowledged();
            figures.requests += t.requests();
            figures.refused += t.refused();
        }
        heal();
        if (!engine.alive())
        {
            startEngine();
            report.engineRestarts++;
        }
        // Leaks: once no client is attached and the backups have ended, wait out every lease.
        awaitZero(EngineCounter.IPC_CLIENTS, "IPC clients attached");
        awaitZero(EngineCounter.BACKUPS_IN_FLIGHT, "backups in flight");
        Thread.sleep(SESSION_TIMEOUT_MS + 2_000);
        final long[] leaks = engine.leaks();
        report.pinsLeaked = leaks[0];
        report.reservationsLeaked = leaks[1];
        event("after every lease expired: " + leaks[0] + " pages pinned, " + leaks[1] + " pages WRITING");
        report.tiersJson = tiers();
        // The healed phase: a fresh engine with an empty pool on the same L3 reads back every page
        // acknowledged as backed up.
        engine.kill();
        // The killed engine's pool goes first: a warm restart would adopt its pages and serve from the pool what
        // this phase must read back from L3 (the restarts of the faulty phase do adopt, under the clients' checks).
        Files.deleteIfExists(enginePool);
        report.engineRestarts++;
        startEngine();
        event("engine restarted with an empty pool for the healed verification");
        final Map<String, Long> tierFaults = FaultLogs.zeros();
        final Set<String> destroyed = new LinkedHashSet<>();
        if (faultTier)
        {
            FaultLogs.read(work.resolve("faults-a.jsonl"), tierFaults, destroyed);
            FaultLogs.read(work.resolve("faults-b.jsonl"), tierFaults, destroyed);
            report.faults.putAll(tierFaults);
        }
        verifyAcknowledged(destroyed);
        engine.stop();
    }

    /**
     * Raises, through the control files, the rate of every tier fault kind not injected yet, until each has been
     * once, and in overtime of every kind short of {@code --min-each}, until each has been that often; then the
     * configured rates again. The rates alone leave a rare kind (a stalled read, a blocked call) uninjected in a
     * short campaign on a loaded host, where clients make few L3 calls.
     */
    private void boostMissingTierFaults() throws IOException
    {
        // After the first round: by then the rates had their chance.
        if (!faultTier || everyTierKindSeen && !overtime || drawn == 0 || !firstRound.isEmpty())
        {
            return;
        }
        final long target = overtime ? options.minEach() : 1;
        final double rate = overtime ? OVERTIME_RATE : BOOSTED_RATE;
        final List<String> missing = tierFaultCounts().entrySet().stream().filter(e -> e.getValue() < target).map(Map.Entry::getKey).toList();
        final StringBuilder control = new StringBuilder();
        for (final String kind : missing)
        {
            control.append(kind).append('=').append(rate).append('\n');
        }
        if (!control.toString().equals(boosted))
        {
            Files.writeString(work.resolve("faults-a.ctl"), control);
            Files.writeString(work.resolve("faults-b.ctl"), control);
            boosted = control.toString();
            event(missing.isEmpty() ? "every tier fault kind injected at least " + (target == 1 ? "once" : target + " times") + ": the configured rates again"
                : "tier fault kinds injected fewer than " + target + " times, at a rate of " + rate + " until they are: " + missing);
        }
        if (!overtime)
        {
            everyTierKindSeen = missing.isEmpty();
        }
    }

    /** Heals the tier faults: every rate 0 in each control file. */
    private void heal() throws IOException
    {
        if (faultTier)
        {
            Files.writeString(work.resolve("faults-a.ctl"), "all=0\n");
            Files.writeString(work.resolve("faults-b.ctl"), "all=0\n");
            event("tier faults healed (all=0)");
        }
    }

    /** Waits, at most a minute, for an engine gauge to reach 0; one that does not is a failure naming it. */
    private void awaitZero(final EngineCounter counter, final String what) throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long value;
        while ((value = engine.counter(counter)) != 0)
        {
            if (System.nanoTime() > deadline)
            {
                report.failures.add(what + " still " + value + " a minute after the clients stopped");
                return;
            }
            Thread.sleep(50);
        }
    }

    /** @return the tiers array of the admin API's GET /v1/tiers, or [] when it cannot be read (noted) */
    private String tiers()
    {
        if (engine.adminUrl() == null)
        {
            report.notes.add("tier counters not read: the engine printed no admin API URL");
            return "[]";
        }
        try (HttpClient http = HttpClient.newHttpClient())
        {
            final String body = http.send(HttpRequest.newBuilder(URI.create(engine.adminUrl().replaceAll("/$", "") + "/v1/tiers"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            final int open = body.indexOf('[');
            final int close = body.lastIndexOf(']');
            return open < 0 || close < open ? "[]" : body.substring(open, close + 1);
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            report.notes.add("tier counters not read: " + ex);
            event("tier counters not read from " + engine.adminUrl() + ": " + ex);
            return "[]";
        }
    }

    /**
     * Acquires every acknowledged key alone from a fresh engine with an empty pool: checks the bytes of what
     * comes back, and counts what does not as lost unless a fault log names it destroyed.
     */
    private void verifyAcknowledged(final Set<String> destroyed) throws IOException
    {
        final Map<String, String> acked = new TreeMap<>();
        final List<long[]> keys = new ArrayList<>();
        for (final Client client : clients)
        {
            if (!Files.exists(client.acks))
            {
                continue;
            }
            for (final String line : Files.readAllLines(client.acks, StandardCharsets.US_ASCII))
            {
                // A client killed mid-write leaves at most a last line cut short: only whole lines count.
                final String[] f = line.split(" ");
                if (f.length == 2 && f[1].length() == 32 && acked.putIfAbsent(f[1], f[0] + " by client " + client.name()) == null)
                {
                    keys.add(new long[] {Long.parseUnsignedLong(f[1].substring(0, 16), 16), Long.parseUnsignedLong(f[1].substring(16), 16)});
                }
            }
        }
        report.pagesAcknowledged = keys.size();
        final Namespace namespace = new Namespace(MODEL, "chaos-page16", 0, "");
        final PageKeyChain chain = new PageKeyChain(1);
        // The fault logs name the objects the tier was given: a namespaced page's L3 name (docs/keys.md), not its key.
        // The campaign's engine sets no l3.key-salt.
        final io.kvtier.client.L3ObjectName names = new io.kvtier.client.L3ObjectName("");
        long lost = 0;
        long gone = 0;
        try (KvtierClient client = KvtierClient.connect(engine.socket(), ClientOptions.of(1, namespace)))
        {
            for (final long[] key : keys)
            {
                chain.clear();
                chain.add(key[0], key[1]);
                try (PinnedPages pinned = client.acquire(chain))
                {
                    final String hex = String.format("%016x%016x", key[0], key[1]);
                    names.name(namespace.tag(), key[0], key[1]);
                    final String stored = String.format("%016x%016x", names.high(), names.low());
                    if (pinned.count() == 0)
                    {
                        if (destroyed.contains(hex) || destroyed.contains(stored))
                        {
                            gone++;
                        }
                        else
                        {
                            lost++;
                            final String when = acked.get(hex);
                            event("lost: key " + hex + " was acknowledged as backed up (at "
                                + java.time.Instant.ofEpochMilli(Long.parseLong(when.split(" ")[0])) + when.substring(when.indexOf(' '))
                                + ") and no tier serves it");
                        }
                    }
                    else if (pinned.payloadLength(0) == PAGE_SIZE && PagePattern.matches(pinned.page(0), key[0], key[1], PAGE_SIZE))
                    {
                        report.pagesVerified++;
                    }
                    else
                    {
                        report.wrongBytesServed++;
                        event("healed phase: wrong bytes served for key " + hex);
                    }
                }
            }
        }
        report.pagesLost = lost;
        report.pagesDestroyedByFaults = gone;
        event("healed verification: " + keys.size() + " acknowledged pages, " + lost + " lost, " + gone + " destroyed by faults");
        if (keys.isEmpty())
        {
            report.notes.add("no client saw a page acknowledged as backed up, so pages_lost = 0 checked nothing this run; a longer"
                + " --duration, or a less busy host, gives the clients' backups time to land");
        }
    }

    /** Writes replay.json: the seed, the options and the event log. */
    private void writeReplay() throws IOException
    {
        final StringBuilder json = new StringBuilder();
        json.append("{\"seed\": ").append(options.seed()).append(", \"duration_s\": ").append(options.duration().toSeconds())
            .append(", \"clients\": \"").append(String.join(",", options.clients())).append("\", \"client_processes\": ")
            .append(options.clientProcesses()).append(", \"min_each\": ").append(options.minEach()).append(", \"overtime_s\": ")
            .append(options.overtime().toSeconds()).append(", \"events\": [");
        synchronized (events)
        {
            for (int i = 0; i < events.size(); i++)
            {
                json.append(i == 0 ? "\n  \"" : ",\n  \"").append(events.get(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
            }
        }
        json.append("\n]}\n");
        Files.writeString(work.resolve("replay.json"), json.toString());
    }

    /**
     * @param replay a replay file a failed campaign wrote
     * @return its seed, duration in seconds, client list and client processes ({@code client_processes}, which a
     *         replay file of a campaign before the C and Python clients calls {@code java_clients})
     * @throws IOException if it cannot be read or is not a replay file, naming what is missing
     */
    public static Map<String, String> readReplay(final Path replay) throws IOException
    {
        final String text = Files.readString(replay);
        final Map<String, String> fields = new TreeMap<>();
        for (final String name : List.of("seed", "duration_s", "client_processes"))
        {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + name + "\"\\s*:\\s*(-?[0-9]+)").matcher(text);
            boolean found = m.find();
            if (!found && "client_processes".equals(name))
            {
                m = java.util.regex.Pattern.compile("\"java_clients\"\\s*:\\s*(-?[0-9]+)").matcher(text);
                found = m.find();
            }
            if (!found)
            {
                throw new IOException(replay + " is not a chaos replay file: it has no \"" + name + "\"");
            }
            fields.put(name, m.group(1));
        }
        // A campaign before --min-each ran for its duration alone.
        for (final String name : List.of("min_each", "overtime_s"))
        {
            final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + name + "\"\\s*:\\s*([0-9]+)").matcher(text);
            fields.put(name, m.find() ? m.group(1) : "0");
        }
        final java.util.regex.Matcher clients = java.util.regex.Pattern.compile("\"clients\"\\s*:\\s*\"([a-z,]*)\"").matcher(text);
        fields.put("clients", clients.find() ? clients.group(1) : "java");
        return fields;
    }
}
