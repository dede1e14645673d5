package io.kvtier.engine.status;

/**
 * Every engine counter, with the id that locates it in the pool's counters region. Ids are stable
 * and never reused; new counters take new ids.
 */
public enum EngineCounter
{
    /** Requests taken off the ring. */
    REQUESTS(0, "requests"),
    /** Lookup requests. */
    LOOKUPS(1, "lookups"),
    /** Keys named by acquire requests. */
    ACQUIRE_PAGES_REQUESTED(2, "acquire_pages_requested"),
    /** Acquired pages that were already in the pool. */
    L2_HIT_PAGES(3, "l2_hit_pages"),
    /** Acquired pages loaded from L3 and verified. */
    L3_HIT_PAGES(4, "l3_hit_pages"),
    /** Pages reserved for writing. */
    PAGES_RESERVED(5, "pages_reserved"),
    /** Pages committed. */
    PAGES_COMMITTED(6, "pages_committed"),
    /** Reservations aborted by their writer. */
    PAGES_ABORTED(7, "pages_aborted"),
    /** Reserve requests that found no free page and nothing to evict. */
    RESERVE_POOL_FULL(8, "reserve_pool_full"),
    /** Pages evicted from the pool. */
    PAGES_EVICTED(9, "pages_evicted"),
    /** Page reads issued to L3. */
    L3_READS(10, "l3_reads"),
    /** L3 reads that found nothing. */
    L3_READ_MISSES(11, "l3_read_misses"),
    /** L3 reads whose frame failed verification (bad trailer, wrong key, CRC mismatch) or that the tier reported corrupt. */
    L3_CORRUPT(12, "l3_corrupt"),
    /** L3 operations that failed with an I/O error, a timeout or a plugin exception. */
    L3_ERRORS(13, "l3_errors"),
    /** Backups (pool → L3 writes) started. */
    BACKUPS_STARTED(14, "backups_started"),
    /** Backups completed. */
    BACKUPS_COMPLETED(15, "backups_completed"),
    /** Backups that failed. */
    BACKUPS_FAILED(16, "backups_failed"),
    /** Pages loaded by prefetch. */
    PREFETCH_PAGES(17, "prefetch_pages"),
    /** Keys probed in L3 by lookups. */
    PROBE_KEYS(18, "probe_keys"),
    /** Probed keys that L3 had. */
    PROBE_HITS(19, "probe_hits"),
    /** Sessions whose lease expired. */
    SESSIONS_EXPIRED(20, "sessions_expired"),
    /** Reservations reclaimed after their lease lapsed. */
    RESERVATIONS_EXPIRED(21, "reservations_expired"),
    /** L3 knowledge dropped because the index was full. */
    INDEX_FULL(22, "index_full"),
    /** L3 batches that outlived l3.io-timeout. */
    L3_TIMEOUTS(23, "l3_timeouts"),
    /** Exceptions thrown by tier plugins. */
    PLUGIN_ERRORS(24, "plugin_errors"),
    /** Objects a tier reported it dropped on its own. */
    L3_REMOVED_BY_TIER(25, "l3_removed_by_tier"),
    /** Pages loaded from L3 (by acquire or prefetch) and verified. */
    L3_PAGES_LOADED(26, "l3_pages_loaded"),
    /** Bytes read from L3 into the pool. */
    L3_BYTES_READ(27, "l3_bytes_read"),
    /** Bytes written from the pool to L3. */
    L3_BYTES_WRITTEN(28, "l3_bytes_written"),
    /** Requests rejected as malformed. */
    REQUESTS_INVALID(29, "requests_invalid"),
    /** Pages currently in use (not free): a gauge. */
    PAGES_IN_USE(30, "pages_in_use"),
    /** Backups in flight: a gauge. */
    BACKUPS_IN_FLIGHT(31, "backups_in_flight"),
    /** Reclaimed pages resting in quarantine: a gauge. */
    PAGES_QUARANTINED(32, "pages_quarantined"),
    /** Client processes holding a client slot of the pool: a gauge. */
    CLIENTS_ATTACHED(33, "clients_attached"),
    /** Client slots taken back from processes that died or stopped heartbeating. */
    CLIENTS_RECLAIMED(34, "clients_reclaimed"),
    /** Pins given back with those slots. */
    CLIENT_PINS_RECLAIMED(35, "client_pins_reclaimed"),
    /** Write-back pages dropped from the pool without an L3 copy after their backups kept failing. */
    BACKUPS_LOST(36, "backups_lost"),
    /** Lookups and acquires answered from remembered negative probes instead of asking L3 again. */
    PROBES_SKIPPED(37, "probes_skipped"),
    /** Keys known only from L3 that the index forgot to make room (found again by probing). */
    INDEX_FORGOTTEN(38, "index_forgotten"),
    /** Pages waiting, unpinned, for a backup to start (l3.max-backup-pages in flight): a gauge. */
    BACKUPS_QUEUED(39, "backups_queued"),
    /** Write-through copies that never started: the page left the pool while its backup waited. */
    BACKUPS_SKIPPED(40, "backups_skipped");

    private final int id;
    private final String label;

    EngineCounter(final int id, final String label)
    {
        this.id = id;
        this.label = label;
    }

    /** @return the counter's slot in the counters region */
    public int id()
    {
        return id;
    }

    /** @return the counter's name in reports and JSON */
    public String label()
    {
        return label;
    }
}
