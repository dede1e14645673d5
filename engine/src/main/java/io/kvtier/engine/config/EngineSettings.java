package io.kvtier.engine.config;

import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.spi.ConfigValues;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Every engine setting, declared once with its type, default, range and meaning (as Aeron's
 * {@code Configuration} pairs each property with its typed default). {@link EngineConfig} reads them,
 * and the settings table of {@code docs/config.md} is rendered from them ({@code ConfigDocTest} checks
 * the file and rewrites it on request).
 *
 * <p>A default or a bound that depends on other settings is declared as derived, with the words that
 * document it. Conditions between settings that are neither (pool.evict-low below pool.evict-high, the
 * session timeout not shorter than the reservation timeout, a pool that fits its filesystem) are
 * checked by {@link EngineConfig} and documented here as notes.
 */
public final class EngineSettings
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;
    /** Page payloads are whole 4 KiB blocks: frames are read and written with O_DIRECT-friendly alignment. */
    private static final long PAGE_ALIGNMENT = 4 * KIB;

    private EngineSettings()
    {
    }

    /** The pool file; under /dev/shm by default, or on hugetlbfs. */
    public static final Setting<Path> POOL_PATH = Setting.path("pool.path")
        .byDefault(Path.of("/dev/shm/kvtier-pool"))
        .note("in an existing directory (tmpfs or hugetlbfs for zero-copy sharing)")
        .note("naming no file yet or a kvtier pool, which is replaced only if its engine is dead")
        .documented("the shared-memory pool file other processes map");

    /** Payload bytes per page. */
    public static final Setting<Long> POOL_PAGE_SIZE = Setting.size("pool.page-size")
        .byDefault(256 * KIB)
        .range(PAGE_ALIGNMENT, GIB)
        .rule("a multiple of " + ConfigValues.formatSize(PAGE_ALIGNMENT), size -> size % PAGE_ALIGNMENT == 0)
        .documented("payload bytes per page (one page of KV for one key)");

    /** Bytes of page payload in the pool. */
    public static final Setting<Long> POOL_SIZE = Setting.size("pool.size")
        .byDefault(GIB)
        .min("2 pages", v -> 2 * v.get(POOL_PAGE_SIZE))
        .max("2^30 pages", v -> v.get(POOL_PAGE_SIZE) << 30)
        .note("fitting the pool filesystem's free space")
        .documented("page payload bytes in the pool (rounded down to whole pages)");

    /** Eviction starts above this fraction of pages in use. */
    public static final Setting<Double> POOL_EVICT_HIGH = Setting.fraction("pool.evict-high")
        .byDefault(0.95)
        .above(0.0)
        .note("above pool.evict-low")
        .documented("eviction starts when more than this fraction of pages is in use");

    /** Eviction stops at this fraction. */
    public static final Setting<Double> POOL_EVICT_LOW = Setting.fraction("pool.evict-low")
        .byDefault(0.85)
        .below(1.0)
        .note("below pool.evict-high")
        .documented("eviction frees unpinned pages, least recently used first, down to this fraction");

    /** Processes that may pin pool pages directly (client slots in the pool file). */
    public static final Setting<Integer> POOL_CLIENT_SLOTS = Setting.integer("pool.client-slots")
        .byDefault(32)
        .range(0, 1024)
        .documented("processes that may attach to the pool and pin pages directly; each pin is recorded under its process,"
            + " which loses it when it dies or stays silent for lease.session-timeout");

    /** Whether a new engine adopts the committed pages of a dead engine's pool it replaces (a warm restart). */
    public static final Setting<Boolean> POOL_WARM_RESTART = Setting.flag("pool.warm-restart")
        .byDefault(true)
        .documented("whether an engine that replaces a dead engine's pool at pool.path adopts that pool's committed pages, in the"
            + " background while it serves, each only once its checksum and trailer verify (docs/architecture.md, warm restart);"
            + " false starts every pool empty");

    /**
     * Whether a clean stop leaves the pool file in place for the next engine to adopt: what makes an upgrade
     * or a planned restart warm, at the price of the file's memory staying in use while no engine runs.
     */
    public static final Setting<Boolean> POOL_KEEP_ON_STOP = Setting.flag("pool.keep-on-stop")
        .byDefault(false)
        .documented("whether a clean stop (kvtier serve on SIGTERM, Engine.close) leaves the pool file at pool.path, marked"
            + " closed, so that the next engine there adopts its committed pages as after a crash (pool.warm-restart): an upgrade or"
            + " a planned restart starts warm; the file keeps its memory (in /dev/shm, the pool's size) until an engine takes it"
            + " over or it is removed; false removes it, so the next start is cold");

    /**
     * Page payload bytes whose blocks are allocated before the engine serves; the rest are allocated in the
     * background: what keeps the start of a pool of tens or hundreds of GiB short.
     */
    public static final Setting<Long> POOL_ALLOCATE_FIRST = Setting.size("pool.allocate-first")
        .byDefault(256 * MIB)
        .min("1 page", v -> v.get(POOL_PAGE_SIZE))
        .note("pool.size or more allocates the whole pool before the engine serves")
        .documented("page payload bytes whose memory (the pool file's blocks: posix_fallocate, which on tmpfs commits and zeroes it) is"
            + " allocated before the engine serves; the rest is allocated in the background, in chunks of pool.allocate-chunk, and each"
            + " chunk's pages join the pool as it lands. No page is handed out before its blocks are allocated; a chunk the filesystem"
            + " refuses ends the growth, logged, and the engine serves with the pages it has (pool_pages_allocated)");

    /** Bytes of the pool file allocated at a time in the background. */
    public static final Setting<Long> POOL_ALLOCATE_CHUNK = Setting.size("pool.allocate-chunk")
        .byDefault(128 * MIB)
        .range(2 * MIB, 64 * GIB)
        .note("rounded down to a multiple of 2 MiB (a huge page)")
        .documented("bytes of the pool file the background allocation allocates at a time (pool.allocate-first): its pages join the"
            + " pool when the whole chunk is allocated");

    /** Whether the pool's mapping is advised to use transparent huge pages. */
    public static final Setting<String> POOL_TRANSPARENT_HUGE_PAGES = Setting.oneOf("pool.transparent-huge-pages", List.of("off", "advise"))
        .byDefault("off")
        .documented("advise asks the kernel for transparent huge pages over the pool's mapping (madvise MADV_HUGEPAGE: fewer TLB misses"
            + " on page copies); for a pool on tmpfs the kernel heeds it only when /sys/kernel/mm/transparent_hugepage/shmem_enabled allows"
            + " it, and the engine logs once why it has no effect when that says never or deny. A pool on hugetlbfs has huge pages already");

    /** On which NUMA nodes the pool's memory lies. */
    public static final Setting<String> POOL_NUMA = Setting.text("pool.numa")
        .byDefault("off")
        .rule(io.kvtier.engine.pool.NumaPlacement.GRAMMAR, EngineSettings::isNumaPlacement)
        .note("every node named must be online (/sys/devices/system/node/online), else the engine refuses to start, naming this host's nodes")
        .documented("where the pool's memory lies on a host of several NUMA nodes: off leaves it to the kernel (the node of the thread"
            + " that allocates it); bind:NODES keeps it on those nodes only, preferred:NODE on that node while it has room, interleave:NODES"
            + " spreads it page by page. Set with mbind on the pool's mapping, which for a pool on tmpfs is the policy of the file's own pages"
            + " (so the background allocation and every client follow it), and set_mempolicy for the threads that allocate it;"
            + " /proc/PID/numa_maps shows the result. Put the pool next to the inference processes or the GPUs' PCIe root");

    /** Entries in the key index (pool pages plus known L3 pages). */
    public static final Setting<Long> INDEX_ENTRIES = Setting.longInteger("index.entries")
        .byDefault("max(4 x pages, 65536)", v -> Math.max(4L * pages(v), 65_536L))
        .min("the page count", EngineSettings::pages)
        .max(1L << 30)
        .documented("keys the index can hold: every pool page plus L3 pages it knows of");

    /** A session idle this long loses its pins and reservations. */
    public static final Setting<Duration> LEASE_SESSION_TIMEOUT = Setting.duration("lease.session-timeout")
        .byDefault(Duration.ofSeconds(60))
        .min(Duration.ofMillis(100))
        .note("not shorter than lease.reservation-timeout")
        .documented("a client silent this long loses its pins and its reservations");

    /** A reservation not committed within this time is reclaimed. */
    public static final Setting<Duration> LEASE_RESERVATION_TIMEOUT = Setting.duration("lease.reservation-timeout")
        .byDefault(Duration.ofSeconds(30))
        .min(Duration.ofMillis(100))
        .note("not longer than lease.session-timeout")
        .documented("a reserved page not committed in this time is reclaimed and never becomes visible");

    /** How long a reclaimed page rests before reuse, so a late writer cannot scribble on a new page. */
    public static final Setting<Duration> LEASE_QUARANTINE = Setting.duration("lease.quarantine")
        .byDefault("lease.reservation-timeout", v -> v.get(LEASE_RESERVATION_TIMEOUT))
        .documented("a reclaimed page rests this long before reuse, so a late writer cannot change another page");

    /** When committed pages are copied to L3. */
    public static final Setting<WritePolicy> POLICY_WRITE = Setting.choice("policy.write", WritePolicy.values(), WritePolicy::configName)
        .byDefault(WritePolicy.WRITE_THROUGH)
        .documented("when committed pages are copied to L3");

    /** The order in which resident pages leave the pool. */
    public static final Setting<String> POLICY_EVICTION = Setting.oneOf("policy.eviction", EvictionPolicies.names())
        .byDefault(EvictionPolicies.DEFAULT)
        .documented("the order in which resident pages leave the pool: adaptive picks, as the workload goes, whichever of the"
            + " chain-aware settings (chain, probation, admission, frequency) a sampled simulation says hits most; lru is plain"
            + " recency (docs/PERFORMANCE.md, Eviction policies)");

    /** Hits before write-through-selective copies a page. */
    public static final Setting<Integer> POLICY_WRITE_HIT_THRESHOLD = Setting.integer("policy.write.hit-threshold")
        .byDefault(2)
        .range(1, 1_000_000)
        .documented("hits before write-through-selective copies a page");

    /** Whether write-back copies the pages eviction will reach next before it reaches them. */
    public static final Setting<Boolean> POLICY_WRITE_BACK_CLEAN_AHEAD = Setting.flag("policy.write.clean-ahead")
        .byDefault(false)
        .documented("with policy.write = write-back, whether the engine copies the pages at the cold end of the eviction order to L3"
            + " before eviction reaches them (once the pool is filled to pool.evict-low less the gap between the water levels, in the"
            + " engine thread's idle time and on its ticks, using at most half of l3.max-backup-pages), so that an eviction finds them"
            + " copied and a reserve need not wait for a copy; false (the default: in the demo it cut the evictions that waited from"
            + " tens of thousands to hundreds but moved fewer bytes, docs/PERFORMANCE.md) copies a page only when eviction reaches it");

    /** How lookups prefetch L3 pages. */
    public static final Setting<PrefetchMode> POLICY_PREFETCH = Setting.choice("policy.prefetch", PrefetchMode.values(), PrefetchMode::configName)
        .byDefault(PrefetchMode.BEST_EFFORT)
        .documented("whether a lookup loads its L3 pages into the pool and how long it waits for them");

    /** L3 pages in a prefix before a lookup prefetches them. */
    public static final Setting<Integer> POLICY_PREFETCH_THRESHOLD = Setting.integer("policy.prefetch.threshold-pages")
        .byDefault(4)
        .range(1, 1_000_000)
        .documented("L3 pages a prefix must have before a lookup prefetches them");

    /** Longest wait of the timeout prefetch mode. */
    public static final Setting<Duration> POLICY_PREFETCH_TIMEOUT = Setting.duration("policy.prefetch.timeout")
        .byDefault(Duration.ofSeconds(2))
        .min(Duration.ofMillis(1))
        .documented("longest wait of the timeout prefetch mode");

    /** Most keys one session request can name. */
    public static final Setting<Integer> SESSION_MAX_KEYS = Setting.integer("session.max-keys")
        .byDefault(16_384)
        .range(1, 1 << 20)
        .documented("most pages one session request can name");

    /** Keys past the index's knowledge that a lookup asks L3 about. */
    public static final Setting<Integer> L3_PROBE_PAGES = Setting.integer("l3.probe-pages")
        .byDefault("min(64, session.max-keys)", v -> Math.min(64, v.get(SESSION_MAX_KEYS)))
        .min(0)
        .max("session.max-keys", v -> v.get(SESSION_MAX_KEYS))
        .documented("keys past what the index knows that a lookup asks L3 about (shared or restarted L3); 0 disables");

    /** How long an L3 answer "not found" to a probe is trusted before asking again. */
    public static final Setting<Duration> L3_NEGATIVE_PROBE_TTL = Setting.duration("l3.negative-probe-ttl")
        .byDefault(Duration.ofSeconds(2))
        .note("0 turns the memory off")
        .documented("how long the engine trusts an L3 answer that a key is missing before probing it again (a key this engine"
            + " backs up is forgotten at once; another node's writes show after this time)");

    /** An L3 batch unanswered this long is reported and its waiters answered. */
    public static final Setting<Duration> L3_IO_TIMEOUT = Setting.duration("l3.io-timeout")
        .byDefault(Duration.ofSeconds(30))
        .min(Duration.ofMillis(100))
        .documented("an L3 batch unanswered this long is reported; its waiters get a miss");

    /** Most pool pages pinned by backups in flight at once. */
    public static final Setting<Integer> L3_MAX_BACKUP_PAGES = Setting.integer("l3.max-backup-pages")
        .byDefault("a quarter of the pool's pages", v -> Math.max(1, (int)(pages(v) / 4)))
        .range(1, 1 << 30)
        .documented("most pool pages pinned by backups in flight at once (at most the pool's pages); more wait unpinned in a"
            + " backlog, and one evicted before its backup starts is counted in backups_skipped (write-through) so that a slow L3"
            + " never pins the whole pool");

    /** Largest number of keys in one L3 batch. */
    public static final Setting<Integer> L3_MAX_BATCH = Setting.integer("l3.max-batch")
        .byDefault(256)
        .range(1, 65_536)
        .documented("most keys in one batch handed to a tier");

    /** L3 batches in flight per tier. */
    public static final Setting<Integer> L3_MAX_INFLIGHT = Setting.integer("l3.max-inflight-batches")
        .byDefault(64)
        .range(1, 4096)
        .documented("batches in flight per tier; more requests wait in the engine");

    /** Staging frames that reads of untrusted tiers land in. */
    public static final Setting<Integer> L3_STAGING_FRAMES = Setting.integer("l3.staging-frames")
        .byDefault("min(256, max(1, pages / 4))", v -> (int)Math.min(256, Math.max(1, pages(v) / 4)))
        .range(1, 1 << 20)
        .note("each takes pool.page-size + 4KiB of memory, allocated only when a tier is not trusted")
        .documented("engine-owned frames that reads of tiers it does not trust (tier.<name>.trusted) land in; each is copied into the"
            + " pool and verified there, so whatever the tier writes after completing a read never reaches a page clients are served;"
            + " reads wait for a free frame");

    /** The share of recently loaded pages whose pins wait for them to be verified again. */
    public static final Setting<Double> L3_REVERIFY_RATE = Setting.fraction("l3.reverify.rate")
        .byDefault(0.05)
        .note("0 turns re-verification off")
        .documented("one pin in 1/rate of a page loaded from L3 within l3.reverify.window waits while another thread checks the page"
            + " against its load's CRC32C: a page a tier changed after its load is not served (a miss), counted in l3_late_writes and"
            + " quarantined (docs/PERFORMANCE.md, Tiers that misbehave)");

    /** How long after its load a page's pins are sampled for re-verification. */
    public static final Setting<Duration> L3_REVERIFY_WINDOW = Setting.duration("l3.reverify.window")
        .byDefault(Duration.ofSeconds(1))
        .documented("how long after its load a page is eligible for re-verification (late writes follow soon after the read they"
            + " belong to)");

    /** Pages a tier may be caught changing after their load before it is taken out of service. */
    public static final Setting<Integer> L3_LATE_WRITE_LIMIT = Setting.integer("l3.late-write-limit")
        .byDefault(3)
        .range(1, 1_000_000)
        .documented("pages a tier may be caught changing after their load before it is taken out of service until the engine restarts");

    /** Request ring slots. */
    public static final Setting<Integer> PIPELINE_RING_SIZE = Setting.integer("pipeline.ring-size")
        .byDefault(4096)
        .range(64, 1 << 20)
        .rule("a power of two", slots -> Integer.bitCount(slots) == 1)
        .documented("request ring slots");

    /** How the engine thread idles when a duty cycle found no work. */
    public static final Setting<IdleStrategyKind> ENGINE_IDLE_STRATEGY = Setting.choice("engine.idle-strategy", IdleStrategyKind.values(),
            IdleStrategyKind::configName)
        .byDefault("adaptive with ipc.enabled, else backoff", v -> v.get(EngineSettings.IPC_ENABLED) ? IdleStrategyKind.ADAPTIVE : IdleStrategyKind.BACKOFF)
        .note("when unset, the deprecated pipeline.wait-strategy or ipc.idle-strategy is read in its place; set with either to"
            + " another value, an error")
        .documented("how the engine thread idles when a cycle (its ring, the IPC clients' rings, its timers) found no work: adaptive"
            + " spins for a budget that follows the gaps between requests (5 to 100 µs), then sleeps until a client or a tier wakes it"
            + " (at most 1 ms at a time), and yields only to a client that has not read its answer, so that on a busy host it keeps"
            + " its core while IPC clients' requests flow (docs/PERFORMANCE.md, IPC round trips, round five); backoff spins 100 times,"
            + " yields 100 times, then sleeps, which gives the core to an embedding JVM's own threads sooner (the in-process demo"
            + " moved 13-15% more bytes with it); spin never sleeps (a core: for a host that can give the engine one); yield yields at"
            + " every step; sleep sleeps at once");

    /** Deprecated: {@link #ENGINE_IDLE_STRATEGY} in its place. */
    public static final Setting<WaitStrategyKind> PIPELINE_WAIT_STRATEGY = Setting.choice("pipeline.wait-strategy", WaitStrategyKind.values(),
            WaitStrategyKind::configName)
        .byDefault(WaitStrategyKind.PARK)
        .documented("deprecated, an alias of engine.idle-strategy (park and sleeping read as backoff, blocking as sleep, yielding as"
            + " yield, busy-spin as spin); without ipc.enabled it wins over ipc.idle-strategy");

    /** Housekeeping period: leases, timeouts, heartbeat. */
    public static final Setting<Duration> PIPELINE_TICK = Setting.duration("pipeline.tick-interval")
        .byDefault(Duration.ofMillis(10))
        .range(Duration.ofMillis(1), Duration.ofSeconds(1))
        .documented("housekeeping period: leases, timeouts, heartbeat");

    /** Whether the engine takes clients of other processes over the IPC protocol (docs/ipc-protocol.md). */
    public static final Setting<Boolean> IPC_ENABLED = Setting.flag("ipc.enabled")
        .byDefault(false)
        .note("kvtier serve turns it on unless set to false")
        .documented("whether processes attach over the IPC protocol's socket and shared rings (docs/ipc-protocol.md); an engine"
            + " embedded in a JVM serves that JVM's sessions either way");

    /** The socket clients connect to. */
    public static final Setting<Path> IPC_SOCKET_PATH = Setting.path("ipc.socket-path")
        .byDefault("<pool.path>.sock", v -> Path.of(v.get(POOL_PATH) + ".sock"))
        .note("in an existing directory; a stale socket file there is replaced")
        .documented("the Unix domain socket IPC clients connect to for their handshake");

    /** Users that may connect. */
    public static final Setting<int[]> IPC_ALLOWED_UIDS = Setting.ids("ipc.allowed-uids")
        .byDefault("(none)", v -> new int[0])
        .documented("user ids (from the socket's SO_PEERCRED) that may connect; with ipc.allowed-gids also empty, only the"
            + " engine's own user");

    /** Groups that may connect. */
    public static final Setting<int[]> IPC_ALLOWED_GIDS = Setting.ids("ipc.allowed-gids")
        .byDefault("(none)", v -> new int[0])
        .documented("group ids (the peer's primary group, from SO_PEERCRED) that may connect, besides ipc.allowed-uids");

    /** Which namespaces each user or group may name. */
    public static final Setting<String> IPC_ALLOWED_NAMESPACES = Setting.text("ipc.allowed-namespaces")
        .byDefault("(none)", v -> "")
        .rule("empty, or comma-separated uid:<n>=<root>, gid:<n>=<root> or *=<root>, each root 32 hex digits or the word untagged",
            EngineSettings::isNamespaceAllowList)
        .documented("namespace roots (docs/keys.md; kvtier namespace prints one) each client's user or primary group may name in"
            + " its HELLO; a HELLO naming another is refused (NAMESPACE_DENIED); once set, a HELLO naming no namespace (which works"
            + " on untagged pages) is refused too unless the peer is listed for untagged; empty: any namespace, or none");

    /** The group of the IPC files. */
    public static final Setting<String> IPC_GROUP = Setting.text("ipc.group")
        .byDefault("(none)", v -> "")
        .rule("a group of this host, or empty", EngineSettings::isGroupOrEmpty)
        .documented("a group name: the socket gets mode 0660 and this group instead of 0600, so that users of the group may connect"
            + " (ipc.allowed-uids and ipc.allowed-gids decide who is admitted); every file a client maps stays 0600 and reaches a"
            + " client of protocol 1.2 as a descriptor; empty for 0600");

    /** Bytes of each of a client's two rings. */
    public static final Setting<Long> IPC_RING_BYTES = Setting.size("ipc.ring-bytes")
        .byDefault(256 * KIB)
        .range(4 * KIB, GIB)
        .rule("a power of two", size -> Long.bitCount(size) == 1)
        .documented("bytes of each of a client's two rings (requests, responses); a request naming every slot must fit half of one");

    /** Deprecated: {@link #ENGINE_IDLE_STRATEGY} in its place. */
    // Not TIMED: a client's way of waiting only, whose engine side is adaptive; an alias of engine.idle-strategy takes the engine's names.
    public static final Setting<io.kvtier.client.protocol.IdleStrategy.Kind> IPC_IDLE_STRATEGY = Setting.choice("ipc.idle-strategy",
            new io.kvtier.client.protocol.IdleStrategy.Kind[] {io.kvtier.client.protocol.IdleStrategy.Kind.BACKOFF,
                io.kvtier.client.protocol.IdleStrategy.Kind.SPIN, io.kvtier.client.protocol.IdleStrategy.Kind.SLEEP,
                io.kvtier.client.protocol.IdleStrategy.Kind.ADAPTIVE}, io.kvtier.client.protocol.IdleStrategy.Kind::configName)
        .byDefault(io.kvtier.client.protocol.IdleStrategy.Kind.BACKOFF)
        .documented("deprecated, an alias of engine.idle-strategy (same values); with ipc.enabled it wins over"
            + " pipeline.wait-strategy");

    /** Silence that ends an IPC client. */
    public static final Setting<Duration> IPC_CLIENT_TIMEOUT = Setting.duration("ipc.client-timeout")
        .byDefault(Duration.ofSeconds(10))
        .range(Duration.ofMillis(100), Duration.ofHours(1))
        .documented("an IPC client whose heartbeat stands still this long, or whose response ring stays full this long, is"
            + " disconnected: its pins are dropped and its reservations go through quarantine");

    /** Most slots an IPC client gets. */
    public static final Setting<Integer> IPC_MAX_KEYS = Setting.integer("ipc.max-keys")
        .byDefault("min(4096, session.max-keys)", v -> Math.min(4096, v.get(SESSION_MAX_KEYS)))
        .range(1, 65_536)
        .note("granted up to what fits half of ipc.ring-bytes and up to session.max-keys")
        .documented("most key slots an IPC client gets, whatever its HELLO asks for");

    /** How many IPC clients may be connected at once. */
    public static final Setting<Integer> IPC_MAX_CLIENTS = Setting.integer("ipc.max-clients")
        .byDefault(256)
        .range(1, 4000)
        .note("each client's ring file takes twice ipc.ring-bytes in the pool's filesystem")
        .documented("most IPC clients connected at once; the next HELLO is refused with TOO_MANY_CLIENTS");

    /** Where third-party tier plugins are loaded from, each with a class loader of its own (docs/writing-a-tier.md). */
    public static final Setting<Path> PLUGINS_DIR = Setting.path("plugins.dir")
        .byDefault("(none)", v -> Path.of(""))
        .note("empty for none; otherwise a readable directory")
        .documented("tier plugins besides those on the class path: each subdirectory (its jars) or jar directly inside is one plugin,"
            + " loaded with a class loader that sees only the SPI and the JDK of the engine's, so plugins may bundle conflicting"
            + " libraries; a type found twice or a plugin without a provider stops the start, and a plugin built for an SPI this"
            + " engine does not run is refused: the start fails if a tier uses its type (docs/writing-a-tier.md)");

    /** Mixed into the names of this engine's objects in every L3 tier, keeping a trust domain's apart. */
    public static final Setting<String> L3_KEY_SALT = Setting.text("l3.key-salt")
        .byDefault("(none; a domain's name)", v -> "")
        .rule("text without control characters, at most 256 bytes of UTF-8",
            text -> text.chars().noneMatch(Character::isISOControl) && text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 256)
        .documented("mixed into the name of every object this engine stores in its L3 tiers (docs/keys.md, The name of a page in L3),"
            + " so that engines of different salts never reach each other's objects in a shared tier while engines of one salt, on any"
            + " node, share theirs; each trust domain (domain.<name>.*) gets its name unless it sets one");

    /** How long one piece of work may keep an engine thread busy before the thread counts as stuck. */
    public static final Setting<Duration> HEALTH_STUCK_AFTER = Setting.duration("health.stuck-after")
        .byDefault(Duration.ofSeconds(60))
        .min(Duration.ofMillis(100))
        .documented("an engine thread (the commit sealer, the device thread, a tier's call thread) busy with one piece of work this"
            + " long counts as stuck: logged, and shown by kvtier stat and its health check (--check)");

    /** The order in which L3 tiers are used: backups go to the first that admits them, reads and probes try them fastest first. */
    public static final Setting<String> L3_TIERS = Setting.text("l3.tiers")
        .byDefault("(the order the tier.<name>.type settings appear)", v -> "")
        .rule("empty, or a comma-separated list naming every configured tier once", text -> text.isBlank()
            || text.matches("\\s*[a-z0-9][a-z0-9_-]*\\s*(,\\s*[a-z0-9][a-z0-9_-]*\\s*)*"))
        .documented("the L3 tiers, fastest first (e.g. nvme, shared): a backup goes to the first tier that admits it (in service, below"
            + " its high water level, within its write budget) unless a mark names another; a load reads from the first tier that holds"
            + " the page, and probes ask every tier");

    /** Whether admission refuses what its reasons name or only counts them. */
    public static final Setting<AdmissionMode> ADMISSION_MODE = Setting.choice("admission.mode", AdmissionMode.values(), AdmissionMode::configName)
        .byDefault(AdmissionMode.ENFORCE)
        .documented("enforce: a page a backup or a migration considers is refused for the first reason that names it (already migrating,"
            + " target holds it, target writing it, source no longer holds it, pinned or being written in the pool, target full, rate"
            + " limited, write budget spent, too young, target out of service), counted in admission_reason_<reason> and logged at most"
            + " every 10 s per reason; shadow: counted and logged the same, and admitted anyway, to try a policy on live traffic");

    /** {@code tier.<name>.write-budget}: bytes per day a tier may be written, by backups and migrations together. */
    public static final Setting<Long> TIER_WRITE_BUDGET = Setting.size("tier.<name>.write-budget")
        .byDefault("(none)", v -> 0L)
        .min(0L)
        .note("0 for none")
        .documented("bytes per day that backups and migrations together may write into the tier (an SSD's endurance, say); a write"
            + " past it is refused (write_budget_spent) until the budget refills, at budget/86400 bytes per second");

    /** {@code tier.<name>.write-burst}: bytes a tier's write budget lets through at once. */
    public static final Setting<Long> TIER_WRITE_BURST = Setting.size("tier.<name>.write-burst")
        .byDefault("write-budget / 24 (an hour's worth)", v -> 0L)
        .min(0L)
        .documented("most bytes the write budget lets through at once after a quiet spell; the budget starts full to this level");

    /** {@code migration.<source>.target}: where a source tier's pages go. */
    public static final Setting<String> MIGRATION_TARGET = Setting.text("migration.<source>.target")
        .byDefault("(no migration)", v -> "")
        .rule("the name of another configured tier", text -> !text.isBlank())
        .documented("adds a migration strategy to tier <source>: its cold pages move to this tier; every migration.<source>.* setting"
            + " below belongs to it, is checked at start, and a strategy that could never run is refused");

    /** {@code migration.<source>.trigger}: the source's fill above which its migration runs. */
    public static final Setting<Double> MIGRATION_TRIGGER = Setting.fraction("migration.<source>.trigger")
        .byDefault(0.7)
        .above(0.0)
        .below(1.0)
        .note("below the source's eviction level (its evict-high); the source must know its capacity")
        .documented("the migration runs while the source's used bytes are above this fraction of its capacity, and stops below it");

    /** {@code migration.<source>.method}: copy, mark or both. */
    public static final Setting<io.kvtier.engine.operations.MigrationMethod> MIGRATION_METHOD = Setting.choice("migration.<source>.method",
            io.kvtier.engine.operations.MigrationMethod.values(), io.kvtier.engine.operations.MigrationMethod::label)
        .byDefault(io.kvtier.engine.operations.MigrationMethod.COPY)
        .documented("copy: the coldest pages are read from the source (verified), written to the target, then recorded there; mark: they"
            + " are marked for the target, so their next backups go straight to it; both: copy, and mark each page whose copy was refused at"
            + " admission or could not be submitted");

    /** {@code migration.<source>.retention}: what a copy leaves in the source. */
    public static final Setting<io.kvtier.engine.operations.Retention> MIGRATION_RETENTION = Setting.choice("migration.<source>.retention",
            io.kvtier.engine.operations.Retention.values(), io.kvtier.engine.operations.Retention::label)
        .byDefault(io.kvtier.engine.operations.Retention.MOVE)
        .note("keep-source only on a source that evicts by itself")
        .documented("move: the source's copy is removed once the target's is recorded; keep-source: it stays, for the source's own"
            + " eviction to reclaim");

    /** {@code migration.<source>.batch}: pages chosen at a time. */
    public static final Setting<Integer> MIGRATION_BATCH = Setting.integer("migration.<source>.batch")
        .byDefault(64)
        .range(1, 65_536)
        .documented("pages a migration chooses at a time, the coldest of a sample of the source's pages");

    /** {@code migration.<source>.min-age}: least time since a page was used before it may move. */
    public static final Setting<Duration> MIGRATION_MIN_AGE = Setting.duration("migration.<source>.min-age")
        .byDefault(Duration.ofSeconds(30))
        .documented("a page used more recently than this stays (too_young)");

    /** {@code migration.<source>.rate}: most bytes copied per second. */
    public static final Setting<Long> MIGRATION_RATE = Setting.size("migration.<source>.rate")
        .byDefault(256L << 20)
        .min(4 * KIB)
        .note("per second")
        .documented("most bytes the migration copies per second; pages over it wait (rate_limited)");

    /** {@code migration.<source>.concurrency}: most copies in flight. */
    public static final Setting<Integer> MIGRATION_CONCURRENCY = Setting.integer("migration.<source>.concurrency")
        .byDefault(16)
        .range(1, 4096)
        .note("each copy holds a free pool page while it runs")
        .documented("most page copies of the migration in flight at once; a copy runs only on a free pool page, never evicting one");

    /** {@code migration.<source>.mark-ttl}: how long a migration's mark lasts. */
    public static final Setting<Duration> MIGRATION_MARK_TTL = Setting.duration("migration.<source>.mark-ttl")
        .byDefault(Duration.ofMinutes(10))
        .min(Duration.ofMillis(1))
        .note("more than zero")
        .documented("how long a mark the migration makes lasts (mark and both); a mark of zero would expire before any backup used it");

    /** The settings declared once for many tiers, in the order docs/config.md lists them after the engine's own. */
    public static final List<Setting<?>> PER_TIER = List.of(TIER_WRITE_BUDGET, TIER_WRITE_BURST, MIGRATION_TARGET, MIGRATION_TRIGGER,
        MIGRATION_METHOD, MIGRATION_RETENTION, MIGRATION_BATCH, MIGRATION_MIN_AGE, MIGRATION_RATE, MIGRATION_CONCURRENCY, MIGRATION_MARK_TTL);
    /** Where the admin API listens (docs/admin-api.md); off when empty. */
    public static final Setting<String> ADMIN_LISTEN = Setting.text("admin.listen")
        .byDefault("(off)", v -> "")
        .rule("empty, or HOST:PORT with a port from 0 to 65535 (an IPv6 address in brackets, [::1]:PORT)",
            text -> text.isEmpty() || text.matches("(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):(0|[1-9][0-9]{0,4})")
                && Integer.parseInt(text.substring(text.lastIndexOf(':') + 1)) <= 65_535)
        .note("a loopback address unless admin.allow-remote is true; port 0 takes a free port, which kvtier serve prints")
        .documented("HOST:PORT of the HTTP admin API (docs/admin-api.md): the tiers, migrations, evictions, marks and health; kvtier"
            + " serve starts it when set");

    /** Whether the admin API may listen on an address other hosts reach. */
    public static final Setting<Boolean> ADMIN_ALLOW_REMOTE = Setting.flag("admin.allow-remote")
        .byDefault(false)
        .documented("whether admin.listen may name an address that is not loopback; the API speaks plain HTTP, so put it behind a"
            + " TLS proxy or a private network first");

    /** The file holding the bearer token of the admin API's mutating calls. */
    public static final Setting<Path> ADMIN_TOKEN_FILE = Setting.path("admin.token-file")
        .byDefault("(none)", v -> Path.of(""))
        .note("empty for none; otherwise a regular file of mode 0600 or 0400 owned by the engine's user, holding at least 16 printable"
            + " characters without spaces")
        .documented("the bearer token (the file's text, surrounding white space ignored) that the admin API's POST and DELETE calls"
            + " must send as Authorization: Bearer <token>; without it they answer 403 and only the GET routes work");

    /** The largest request body the admin API reads. */
    public static final Setting<Long> ADMIN_MAX_BODY = Setting.size("admin.max-body")
        .byDefault(1L << 20)
        .range(KIB, 64L << 20)
        .documented("the largest request body the admin API takes; a larger one is answered 413 without being read whole");

    /** How many admin API requests are served at once. */
    public static final Setting<Integer> ADMIN_MAX_CONCURRENT = Setting.integer("admin.max-concurrent")
        .byDefault(8)
        .range(1, 256)
        .documented("admin API requests served at once; one more is answered 503 with Retry-After");

    /** Whether the engine publishes KV events for routers (docs/kv-events.md). */
    public static final Setting<Boolean> EVENTS_ENABLED = Setting.flag("events.enabled")
        .byDefault(false)
        .documented("whether kvtier serve publishes BlockStored, BlockRemoved and AllBlocksCleared events for cache-aware routers"
            + " (docs/kv-events.md) on a ZMQ PUB socket, from the kvtier-events thread, never from the engine thread");

    /** The ZMQ endpoint the events are published on. */
    public static final Setting<String> EVENTS_ENDPOINT = Setting.text("events.endpoint")
        .byDefault("tcp://127.0.0.1:5557")
        .rule("a ZMQ endpoint: tcp://HOST:PORT, ipc://PATH or inproc://NAME", text -> text.matches("(tcp://[^\\s]+:([0-9]{1,5}|\\*)|ipc://\\S+|inproc://\\S+)"))
        .documented("the endpoint the PUB socket binds; routers' subscribers connect to it");

    /** What every event topic starts with. */
    public static final Setting<String> EVENTS_TOPIC_PREFIX = Setting.text("events.topic-prefix")
        .byDefault("kv@<host name>@", v -> "kv@" + hostName() + "@")
        .rule("printable text of at most 200 bytes", text -> text.chars().noneMatch(Character::isISOControl)
            && text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 200)
        .documented("the start of each message's topic; the namespace's tag (16 hex digits, or untagged) follows it, so a router"
            + " subscribes to one namespace, or to the prefix for all");

    /** Records in the engine's event ring. */
    public static final Setting<Integer> EVENTS_RING_ENTRIES = Setting.integer("events.ring-entries")
        .byDefault(65_536)
        .range(64, 1 << 24)
        .rule("a power of two", n -> Integer.bitCount(n) == 1)
        .note("32 bytes each, off the heap")
        .documented("events the engine thread can record before the publisher reads them; when the ring is full an event is dropped"
            + " and counted (events_dropped), the engine never waits");

    /** Most events in one published batch. */
    public static final Setting<Integer> EVENTS_BATCH_MAX = Setting.integer("events.batch-max")
        .byDefault(512)
        .range(1, 65_536)
        .documented("most events in one message (a KVEventBatch); a batch holds one namespace's events");

    /** The ZMQ endpoint of the replay socket, or none. */
    public static final Setting<String> EVENTS_REPLAY_ENDPOINT = Setting.text("events.replay-endpoint")
        .byDefault("(off)", v -> "")
        .rule("empty, or a ZMQ endpoint: tcp://HOST:PORT, ipc://PATH or inproc://NAME",
            text -> text.isEmpty() || text.matches("(tcp://[^\\s]+:([0-9]{1,5}|\\*)|ipc://\\S+|inproc://\\S+)"))
        .documented("the endpoint a ROUTER socket binds for replay: a subscriber that saw a gap in the sequence numbers sends the first"
            + " number it missed (8 bytes, big-endian) and gets every kept batch from there on, then an end marker (docs/kv-events.md)");

    /** Published batches kept for replay. */
    public static final Setting<Integer> EVENTS_REPLAY_BATCHES = Setting.integer("events.replay-batches")
        .byDefault(10_000)
        .range(1, 1_000_000)
        .note("on the kvtier-events thread's heap, each as its encoded bytes")
        .documented("the last published batches the replay socket can resend; older ones are gone, and a replay that starts after the"
            + " number asked for tells the subscriber so");

    /**
     * {@code tier.<name>.trusted}: a tier setting the engine reads and takes out before the rest go to the
     * tier's plugin. True or false; by default a tier whose plugin comes from {@code plugins.dir} is not
     * trusted and one on the engine's class path (the project's own) is.
     */
    public static final String TIER_TRUSTED = "trusted";

    /** What {@link #TIER_TRUSTED} allows, for docs/config.md. */
    public static final String TIER_TRUSTED_ALLOWED = "true or false; by default false for a tier whose plugin is in plugins.dir, true"
        + " for one on the class path (posix, 3fs, mooncake)";

    /** What {@link #TIER_TRUSTED} means, for docs/config.md. */
    public static final String TIER_TRUSTED_MEANING = "whether the tier may read straight into pool pages and is offered the pool as its"
        + " transfer memory; an untrusted tier reads into staging frames (l3.staging-frames), each copied into the pool and verified"
        + " there, so a write it makes after completing a read never reaches a served page";

    /** Every engine setting, in the order docs/config.md lists them. */
    public static final List<Setting<?>> ALL = List.of(
        POOL_PATH, POOL_SIZE, POOL_PAGE_SIZE, POOL_EVICT_HIGH, POOL_EVICT_LOW, POOL_CLIENT_SLOTS, POOL_WARM_RESTART, POOL_KEEP_ON_STOP,
        POOL_ALLOCATE_FIRST, POOL_ALLOCATE_CHUNK, POOL_TRANSPARENT_HUGE_PAGES, POOL_NUMA, INDEX_ENTRIES,
        LEASE_SESSION_TIMEOUT, LEASE_RESERVATION_TIMEOUT, LEASE_QUARANTINE,
        POLICY_WRITE, POLICY_WRITE_HIT_THRESHOLD, POLICY_WRITE_BACK_CLEAN_AHEAD, POLICY_EVICTION, POLICY_PREFETCH, POLICY_PREFETCH_THRESHOLD, POLICY_PREFETCH_TIMEOUT,
        L3_PROBE_PAGES, L3_NEGATIVE_PROBE_TTL, L3_IO_TIMEOUT, L3_MAX_BACKUP_PAGES, L3_MAX_BATCH, L3_MAX_INFLIGHT,
        L3_STAGING_FRAMES, L3_REVERIFY_RATE, L3_REVERIFY_WINDOW, L3_LATE_WRITE_LIMIT,
        ENGINE_IDLE_STRATEGY, PIPELINE_RING_SIZE, PIPELINE_WAIT_STRATEGY, PIPELINE_TICK, SESSION_MAX_KEYS,
        IPC_ENABLED, IPC_SOCKET_PATH, IPC_ALLOWED_UIDS, IPC_ALLOWED_GIDS, IPC_ALLOWED_NAMESPACES, IPC_GROUP, IPC_RING_BYTES, IPC_IDLE_STRATEGY, IPC_CLIENT_TIMEOUT, IPC_MAX_KEYS, IPC_MAX_CLIENTS,
        PLUGINS_DIR, HEALTH_STUCK_AFTER, L3_KEY_SALT, L3_TIERS, ADMISSION_MODE,
        ADMIN_LISTEN, ADMIN_ALLOW_REMOTE, ADMIN_TOKEN_FILE, ADMIN_MAX_BODY, ADMIN_MAX_CONCURRENT,
        EVENTS_ENABLED, EVENTS_ENDPOINT, EVENTS_TOPIC_PREFIX, EVENTS_RING_ENTRIES, EVENTS_BATCH_MAX,
        EVENTS_REPLAY_ENDPOINT, EVENTS_REPLAY_BATCHES);

    private static boolean isNumaPlacement(final String text)
    {
        try
        {
            io.kvtier.engine.pool.NumaPlacement.parse(text);
            return true;
        }
        catch (final IllegalArgumentException ex)
        {
            return false;
        }
    }

    private static boolean isGroupOrEmpty(final String group)
    {
        if (group.isEmpty())
        {
            return true;
        }
        try
        {
            java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(group);
            return true;
        }
        catch (final java.io.IOException | UnsupportedOperationException ex)
        {
            return false;
        }
    }

    /**
     * @param settings the other settings
     * @return pages in the pool: pool.size over pool.page-size, rounded down
     */
    static long pages(final Setting.Lookup settings)
    {
        return settings.get(POOL_SIZE) / settings.get(POOL_PAGE_SIZE);
    }

    /** @return this host's name, for the default topic prefix; localhost when it has none */
    private static String hostName()
    {
        try
        {
            return java.net.InetAddress.getLocalHost().getHostName();
        }
        catch (final java.io.IOException ex)
        {
            return "localhost";
        }
    }

    private static boolean isNamespaceAllowList(final String text)
    {
        return text.isEmpty() || text.matches("\\s*(uid:\\d+|gid:\\d+|\\*)\\s*=\\s*([0-9a-fA-F]{32}|(?i:untagged))\\s*(,\\s*(uid:\\d+|gid:\\d+|\\*)\\s*=\\s*([0-9a-fA-F]{32}|(?i:untagged))\\s*)*");
    }
}
