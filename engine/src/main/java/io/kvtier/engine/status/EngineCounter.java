package io.kvtier.engine.status;

import io.kvtier.client.pool.CountersDescriptor;

/**
 * Every engine counter, with the id that locates it in the pool's counters region, its type and what
 * it counts; the engine writes all of that into the region at start, so readers do not need this enum.
 * Ids are stable and never reused; new counters take new ids.
 */
public enum EngineCounter
{
    /** Requests taken off the ring. */
    REQUESTS(0, "requests", Type.COUNTER,
        "Requests taken off the ring."),
    /** Lookup requests. */
    LOOKUPS(1, "lookups", Type.COUNTER,
        "Lookup requests."),
    /** Keys named by acquire requests. */
    ACQUIRE_PAGES_REQUESTED(2, "acquire_pages_requested", Type.COUNTER,
        "Keys named by acquire requests."),
    /** Acquired pages that were already in the pool. */
    L2_HIT_PAGES(3, "l2_hit_pages", Type.COUNTER,
        "Acquired pages that were already in the pool."),
    /** Acquired pages loaded from L3 and verified. */
    L3_HIT_PAGES(4, "l3_hit_pages", Type.COUNTER,
        "Acquired pages loaded from L3 and verified."),
    /** Pages reserved for writing. */
    PAGES_RESERVED(5, "pages_reserved", Type.COUNTER,
        "Pages reserved for writing."),
    /** Pages committed. */
    PAGES_COMMITTED(6, "pages_committed", Type.COUNTER,
        "Pages committed."),
    /** Reservations aborted by their writer. */
    PAGES_ABORTED(7, "pages_aborted", Type.COUNTER,
        "Reservations aborted by their writer."),
    /** Reserve requests that found no free page and nothing to evict. */
    RESERVE_POOL_FULL(8, "reserve_pool_full", Type.COUNTER,
        "Reserve requests that found no free page and nothing to evict."),
    /** Pages evicted from the pool. */
    PAGES_EVICTED(9, "pages_evicted", Type.COUNTER,
        "Pages evicted from the pool."),
    /** Page reads issued to L3. */
    L3_READS(10, "l3_reads", Type.COUNTER,
        "Page reads issued to L3."),
    /** L3 reads that found nothing. */
    L3_READ_MISSES(11, "l3_read_misses", Type.COUNTER,
        "L3 reads that found nothing."),
    /** L3 reads whose frame failed verification (bad trailer, wrong key, CRC mismatch) or that the tier reported corrupt. */
    L3_CORRUPT(12, "l3_corrupt", Type.COUNTER,
        "L3 reads whose frame failed verification (bad trailer, wrong key, CRC mismatch) or that the tier reported corrupt."),
    /** L3 operations that failed with an I/O error, a timeout or a plugin exception. */
    L3_ERRORS(13, "l3_errors", Type.COUNTER,
        "L3 operations that failed with an I/O error, a timeout or a plugin exception."),
    /** Backups (pool → L3 writes) started. */
    BACKUPS_STARTED(14, "backups_started", Type.COUNTER,
        "Backups (pool → L3 writes) started."),
    /** Backups completed. */
    BACKUPS_COMPLETED(15, "backups_completed", Type.COUNTER,
        "Backups completed."),
    /** Backups that failed. */
    BACKUPS_FAILED(16, "backups_failed", Type.COUNTER,
        "Backups that failed."),
    /** Pages loaded by prefetch. */
    PREFETCH_PAGES(17, "prefetch_pages", Type.COUNTER,
        "Pages loaded by prefetch."),
    /** Keys probed in L3 by lookups. */
    PROBE_KEYS(18, "probe_keys", Type.COUNTER,
        "Keys probed in L3 by lookups."),
    /** Probed keys that L3 had. */
    PROBE_HITS(19, "probe_hits", Type.COUNTER,
        "Probed keys that L3 had."),
    /** Sessions whose lease expired. */
    SESSIONS_EXPIRED(20, "sessions_expired", Type.COUNTER,
        "Sessions whose lease expired."),
    /** Reservations reclaimed after their lease lapsed. */
    RESERVATIONS_EXPIRED(21, "reservations_expired", Type.COUNTER,
        "Reservations reclaimed after their lease lapsed."),
    /** L3 knowledge dropped because the index was full. */
    INDEX_FULL(22, "index_full", Type.COUNTER,
        "L3 knowledge dropped because the index was full."),
    /** L3 batches that outlived l3.io-timeout. */
    L3_TIMEOUTS(23, "l3_timeouts", Type.COUNTER,
        "L3 batches that outlived l3.io-timeout."),
    /** Exceptions thrown by tier plugins. */
    PLUGIN_ERRORS(24, "plugin_errors", Type.COUNTER,
        "Exceptions thrown by tier plugins."),
    /** Objects a tier reported it dropped on its own. */
    L3_REMOVED_BY_TIER(25, "l3_removed_by_tier", Type.COUNTER,
        "Objects a tier reported it dropped on its own."),
    /** Pages loaded from L3 (by acquire or prefetch) and verified. */
    L3_PAGES_LOADED(26, "l3_pages_loaded", Type.COUNTER,
        "Pages loaded from L3 (by acquire or prefetch) and verified."),
    /** Bytes read from L3 into the pool. */
    L3_BYTES_READ(27, "l3_bytes_read", Type.COUNTER,
        "Bytes read from L3 into the pool."),
    /** Bytes written from the pool to L3. */
    L3_BYTES_WRITTEN(28, "l3_bytes_written", Type.COUNTER,
        "Bytes written from the pool to L3."),
    /** Requests rejected as malformed. */
    REQUESTS_INVALID(29, "requests_invalid", Type.COUNTER,
        "Requests rejected as malformed."),
    /** Pages currently in use (not free): a gauge. */
    PAGES_IN_USE(30, "pages_in_use", Type.GAUGE,
        "Pages currently in use (not free)."),
    /** Backups in flight: a gauge. */
    BACKUPS_IN_FLIGHT(31, "backups_in_flight", Type.GAUGE,
        "Backups in flight."),
    /** Reclaimed pages resting in quarantine: a gauge. */
    PAGES_QUARANTINED(32, "pages_quarantined", Type.GAUGE,
        "Reclaimed pages resting in quarantine."),
    /** Client processes holding a client slot of the pool: a gauge. */
    CLIENTS_ATTACHED(33, "clients_attached", Type.GAUGE,
        "Client processes holding a client slot of the pool (the pool's own liveness slots; processes attached over IPC are ipc_clients)."),
    /** Client slots taken back from processes that died or stopped heartbeating. */
    CLIENTS_RECLAIMED(34, "clients_reclaimed", Type.COUNTER,
        "Client slots taken back from processes that died or stopped heartbeating."),
    /** Pins given back with those slots. */
    CLIENT_PINS_RECLAIMED(35, "client_pins_reclaimed", Type.COUNTER,
        "Pins given back with those slots."),
    /** Write-back pages dropped from the pool without an L3 copy after their backups kept failing. */
    BACKUPS_LOST(36, "backups_lost", Type.COUNTER,
        "Write-back pages dropped from the pool without an L3 copy after their backups kept failing."),
    /** Lookups and acquires answered from remembered negative probes instead of asking L3 again. */
    PROBES_SKIPPED(37, "probes_skipped", Type.COUNTER,
        "Lookups and acquires answered from remembered negative probes instead of asking L3 again."),
    /** Keys known only from L3 that the index forgot to make room (found again by probing). */
    INDEX_FORGOTTEN(38, "index_forgotten", Type.COUNTER,
        "Keys known only from L3 that the index forgot to make room (found again by probing)."),
    /** Pages waiting, unpinned, for a backup to start (l3.max-backup-pages in flight): a gauge. */
    BACKUPS_QUEUED(39, "backups_queued", Type.GAUGE,
        "Pages waiting, unpinned, for a backup to start (l3.max-backup-pages in flight)."),
    /** Write-through copies that never started: the page left the pool while its backup waited. */
    BACKUPS_SKIPPED(40, "backups_skipped", Type.COUNTER,
        "Write-through copies that never started: the page left the pool while its backup waited."),
    /** Keys a client named whose page belongs to a namespace it did not name: answered as misses. */
    NAMESPACE_MISSES(41, "namespace_misses", Type.COUNTER,
        "Keys a client named whose page belongs to a namespace it did not name: answered as misses, never served."),
    /** Blocks the device thread filled from pinned pages for IPC clients (DEVICE_LOAD answered COPIED). */
    DEVICE_BLOCKS_LOADED(42, "device_blocks_loaded", Type.COUNTER,
        "Blocks of IPC clients' KV buffers filled from pinned pages (DEVICE_LOAD, answered COPIED)."),
    /** Blocks the device thread copied into reserved pages for IPC clients (DEVICE_SAVE), before their commit. */
    DEVICE_BLOCKS_SAVED(43, "device_blocks_saved", Type.COUNTER,
        "Blocks of IPC clients' KV buffers copied into reserved pages to be committed (DEVICE_SAVE)."),
    /** Device loads whose pin lapsed before the copy ended: answered EXPIRED, never COPIED. */
    DEVICE_LOADS_EXPIRED(44, "device_loads_expired", Type.COUNTER,
        "Device loads whose page stopped being the pinned page before the copy ended: answered EXPIRED, never COPIED."),
    /** Bytes the device thread copied between pages and IPC clients' KV buffers, both ways. */
    DEVICE_BYTES(45, "device_bytes", Type.COUNTER,
        "Bytes copied between pool pages and IPC clients' KV buffers, both ways (DEVICE_LOAD and DEVICE_SAVE)."),
    /** Tiers out of service now, stuck or caught writing late: a gauge. */
    L3_TIERS_OUT_OF_SERVICE(46, "l3_tiers_out_of_service", Type.GAUGE,
        "Tiers out of service now: stuck (a call or a batch outlived l3.io-timeout) or caught writing into pages after their load."),
    /** Times a tier was taken out of service as stuck. */
    L3_STUCK(47, "l3_stuck", Type.COUNTER,
        "Times a tier was taken out of service as stuck: a call that did not return, or a batch not completed, within l3.io-timeout."),
    /** Keys never handed to a tier because it was out of service. */
    L3_REFUSED(48, "l3_refused", Type.COUNTER,
        "Keys never handed to a tier because it was out of service: reads and probes answered as misses, backups ended as failed."),
    /** Pages loaded from L3 whose bytes changed after their verification, caught by re-verification. */
    L3_LATE_WRITES(49, "l3_late_writes", Type.COUNTER,
        "Pages loaded from L3 whose bytes changed after they were verified (a tier writing late), caught by re-verification: not served,"
            + " quarantined."),
    /** Pinned pages loaded from L3 that were verified again. */
    L3_REVERIFIED(50, "l3_reverified", Type.COUNTER,
        "Pages loaded from L3 verified again when pinned, a sample (l3.reverify.rate) of those loaded within l3.reverify.window."),
    /** Pages read through staging frames (untrusted tiers). */
    L3_STAGED_READS(51, "l3_staged_reads", Type.COUNTER,
        "Pages read from tiers the engine does not trust into staging frames, then copied into the pool and verified there."),
    /** Flush requests answered at l3.io-timeout with backups not yet ended. */
    FLUSHES_TIMED_OUT(52, "flushes_timed_out", Type.COUNTER,
        "Flush requests answered at l3.io-timeout while backups had not ended (their count is the answer)."),
    /** Connections the IPC socket could not accept (out of descriptors or memory); it keeps listening. */
    IPC_ACCEPT_ERRORS(53, "ipc_accept_errors", Type.COUNTER,
        "Connections the IPC socket could not accept (out of descriptors or memory); it keeps listening."),
    /** Watched engine threads busy with one piece of work past health.stuck-after. */
    THREADS_STUCK(54, "threads_stuck", Type.GAUGE,
        "Watched engine threads busy with one piece of work past health.stuck-after (each thread_<name> gauge says which)."),
    /** Watched engine threads that ended while the engine runs. */
    THREADS_DEAD(55, "threads_dead", Type.GAUGE,
        "Watched engine threads that ended while the engine runs (each thread_<name> gauge says which)."),
    /** Requests an engine thread failed unexpectedly on and answered INTERNAL_ERROR, carrying on. */
    THREAD_FAILURES(56, "thread_failures", Type.COUNTER,
        "Requests an engine thread failed on unexpectedly (an exception or error) and answered INTERNAL_ERROR, carrying on."),
    /** Pages copied from one L3 tier to another by a migration, verified, and recorded for the target. */
    PAGES_MIGRATED(57, "pages_migrated", Type.COUNTER,
        "Pages a migration copied from one L3 tier to another: read and verified, written to the target, then recorded for it."),
    /** Bytes of the pages migrated. */
    MIGRATION_BYTES(58, "migration_bytes", Type.COUNTER,
        "Bytes of the pages a migration copied between L3 tiers."),
    /** Migration copies that failed. */
    MIGRATION_FAILURES(59, "migration_failures", Type.COUNTER,
        "Migration copies that failed: the source read missed, failed or was corrupt, or the target write failed; the page stays where it was."),
    /** Migrations running now. */
    MIGRATIONS_RUNNING(60, "migrations_running", Type.GAUGE,
        "Migrations running now: a tier past its trigger, or a migration asked for through the admin API."),
    /** Marks in force now. */
    MARKS_ACTIVE(61, "marks_active", Type.GAUGE,
        "Marks in force now: pages, chains or namespaces whose backups go straight to a named tier until the mark expires."),
    /** Backups sent to a tier by a mark. */
    MARKED_BACKUPS(62, "marked_backups", Type.COUNTER,
        "Backups sent straight to the tier a mark names."),
    /** Marks that expired. */
    MARKS_EXPIRED(63, "marks_expired", Type.COUNTER,
        "Marks that reached their time-to-live and were dropped."),
    /** Pages removed from an L3 tier by the engine. */
    L3_EVICTIONS(64, "l3_evictions", Type.COUNTER,
        "Pages the engine removed from an L3 tier: above its water level, moved by a migration, or through the admin API."),
    /** Pages a backup or a migration considered and admitted. */
    ADMISSION_ADMITTED(65, "admission_admitted", Type.COUNTER,
        "Pages a backup or a migration considered and admitted to a tier."),
    /** Admission: the page is already being migrated. */
    ADMISSION_ALREADY_MIGRATING(66, "admission_reason_already_migrating", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because a migration of the page is already running."),
    /** Admission: the target already holds the page. */
    ADMISSION_TARGET_HOLDS(67, "admission_reason_target_holds", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the target tier already holds them."),
    /** Admission: the target is writing the page. */
    ADMISSION_TARGET_WRITING(68, "admission_reason_target_writing", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because a write of the page to the target tier is in flight."),
    /** Admission: the source no longer holds the page. */
    ADMISSION_SOURCE_MISSING(69, "admission_reason_source_missing", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the source tier no longer holds them."),
    /** Admission: the page is pinned or being written in the pool. */
    ADMISSION_POOL_BUSY(70, "admission_reason_pool_busy", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the page is pinned or being written in the pool."),
    /** Admission: the target is full. */
    ADMISSION_TARGET_FULL(71, "admission_reason_target_full", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the target tier is at its high water level."),
    /** Admission: the migration's rate limit. */
    ADMISSION_RATE_LIMITED(72, "admission_reason_rate_limited", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the migration's rate limit (bytes per second) was spent."),
    /** Admission: the target's write budget. */
    ADMISSION_WRITE_BUDGET_SPENT(73, "admission_reason_write_budget_spent", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the target tier's write budget (bytes per day) was spent."),
    /** Admission: the page is younger than the migration's minimum age. */
    ADMISSION_TOO_YOUNG(74, "admission_reason_too_young", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because they were used more recently than the migration's minimum age."),
    /** Admission: the target is out of service. */
    ADMISSION_TARGET_OUT_OF_SERVICE(75, "admission_reason_target_out_of_service", Type.COUNTER,
        "Pages not admitted (or, in shadow mode, passed anyway) because the target tier is out of service (stuck or caught writing late)."),
    /** Pages shadow mode let through although a reason named them. */
    ADMISSION_SHADOW_PASSED(76, "admission_shadow_passed", Type.COUNTER,
        "Pages admission.mode = shadow let through although a reason refused them (each reason is counted too)."),
    /** Admin API calls that changed something. */
    ADMIN_CALLS(77, "admin_calls", Type.COUNTER,
        "Admin API calls the engine carried out (migrate, evict, mark, unmark)."),
    /** KV events recorded in the event ring. */
    EVENTS_RECORDED(78, "events_recorded", Type.COUNTER,
        "KV events for routers the engine thread recorded in the event ring (events.enabled)."),
    /** KV events dropped because the event ring was full. */
    EVENTS_DROPPED(79, "events_dropped", Type.COUNTER,
        "KV events dropped: the event ring was full (the engine never waits for the publisher), or the publisher refused a record it cannot encode."),
    /** KV event batches the publisher sent. */
    EVENT_BATCHES_PUBLISHED(80, "event_batches_published", Type.COUNTER,
        "KV event batches (messages) the kvtier-events thread sent on its ZMQ socket."),
    /** Processes attached over the IPC protocol: a gauge. */
    IPC_CLIENTS(81, "ipc_clients", Type.GAUGE,
        "Processes attached over the IPC protocol: sessions connected, or dropped and still being released."),
    /** Sleeps of the engine thread when idle. */
    ENGINE_SLEEPS(82, "engine_sleeps", Type.COUNTER,
        "Sleeps the engine thread announced when it found no work through its spins (on the IPC Doorbell, or parked): each one a client or a tier must wake."),
    /** Nanoseconds the engine thread spent in those sleeps. */
    ENGINE_SLEEP_NANOS(83, "engine_sleep_ns", Type.COUNTER,
        "Nanoseconds the engine thread spent in its idle sleeps."),
    /** Yields of the engine thread when idle. */
    ENGINE_YIELDS(84, "engine_yields", Type.COUNTER,
        "Thread.yield() calls of the idle engine thread (on a busy host each one may give its core away for a time slice)."),
    /** How long the adaptive idle strategy spins before it sleeps. */
    ENGINE_SPIN_BUDGET_NANOS(85, "engine_spin_budget_ns", Type.GAUGE,
        "How long the idle engine thread spins before it sleeps (engine.idle-strategy = adaptive: follows the gaps between requests)."),
    /** Write-back evictions that had to wait for their page's copy to L3 (the page was not copied ahead). */
    EVICTIONS_HELD(414, "evictions_held", Type.COUNTER,
        "Write-back evictions that had to wait for their page's copy to L3 before the page could leave (policy.write.clean-ahead copies"
            + " pages ahead of eviction so that few do)."),
    /** Write-back copies started ahead of eviction (policy.write.clean-ahead). */
    BACKUPS_CLEANED_AHEAD(415, "backups_cleaned_ahead", Type.COUNTER,
        "Write-back copies to L3 started for pages at the cold end of the eviction order before eviction reached them"
            + " (policy.write.clean-ahead)."),
    /** Pages of the pool whose blocks are allocated, the only ones the engine hands out: all of them once the pool is grown. */
    POOL_PAGES_ALLOCATED(86, "pool_pages_allocated", Type.GAUGE,
        "Pool pages whose memory is allocated, the only ones handed out: pool.allocate-first at start, all once grown in the background."),
    /** Pages of a dead engine's pool adopted at a warm restart, each verified in the new pool before it was served. */
    POOL_PAGES_ADOPTED(398, "pool_pages_adopted", Type.COUNTER,
        "Pages of a dead engine's pool adopted at a warm restart (pool.warm-restart), each verified in the new pool before it was served."),
    /** Committed pages of a dead engine's pool dropped at a warm restart because their checksum or trailer did not verify. */
    POOL_ADOPT_CORRUPT(399, "pool_adopt_corrupt", Type.COUNTER,
        "Committed pages of a dead engine's pool dropped at a warm restart because their checksum or trailer did not verify (never served)."),
    /** Committed pages of a dead engine's pool not adopted for another reason. */
    POOL_ADOPT_SKIPPED(400, "pool_adopt_skipped", Type.COUNTER,
        "Committed pages of a dead engine's pool not adopted at a warm restart: key already in the pool, page changed while copied, no free"
            + " page below pool.evict-high, or engine stopping.");

    /** What a counter's value means, as recorded in shared memory beside its name. */
    public enum Type
    {
        /** A count that only grows. */
        COUNTER(CountersDescriptor.TYPE_COUNTER),
        /** A current level, which goes up and down. */
        GAUGE(CountersDescriptor.TYPE_GAUGE);

        private final int typeId;

        Type(final int typeId)
        {
            this.typeId = typeId;
        }

        /** @return the type id written in the counter's metadata record */
        public int typeId()
        {
            return typeId;
        }
    }

    private final int id;
    private final String label;
    private final Type type;
    private final String description;

    EngineCounter(final int id, final String label, final Type type, final String description)
    {
        this.id = id;
        this.label = label;
        this.type = type;
        this.description = description;
    }

    /** @return the counter's slot in the counters region */
    public int id()
    {
        return id;
    }

    /** @return the counter's name in reports and JSON, and in its metadata record */
    public String label()
    {
        return label;
    }

    /** @return whether it only grows or is a level */
    public Type type()
    {
        return type;
    }

    /** @return what it counts, one sentence */
    public String description()
    {
        return description;
    }
}
