package io.kvtier.engine.core;

/** The open clients' records, by id ({@link SessionTable}, their owner). Engine thread only. */
interface SessionRecords
{
    /**
     * @param id a client id
     * @return its record, or null if it is not open
     */
    ClientRecord record(int id);
}
