package io.kvtier.engine.core;

/** What the parts ask of the copies to L3 ({@link Backups}, their owner). Engine thread only. */
interface BackupRequests
{
    /**
     * Copies a resident page to L3 unless it is there or being copied.
     *
     * @param page the page
     */
    void backupIfMissing(int page);
}
