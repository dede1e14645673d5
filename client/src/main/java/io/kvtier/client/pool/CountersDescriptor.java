package io.kvtier.client.pool;

import java.util.List;

/**
 * Layout of the counters region: the values first, then one metadata record per counter that names
 * it, so that any process, in any language, lists the counters from shared memory alone (the model
 * is Agrona's {@code CountersReader}). Little-endian. Counter {@code id}'s value is at
 * {@code 8 * id}; its record at {@code Metadata Offset + 256 * id}.
 *
 * <pre>
 * Region
 * +--------------------------+ 0
 * | Values                   |  Max Counters x 8 bytes
 * +--------------------------+ Metadata Offset = 8 x Max Counters (4096)
 * | Metadata records         |  Max Counters x 256 bytes
 * +--------------------------+ Region Length (135168)
 *
 * Value (8 bytes): single writer (the engine thread, store-opaque); readers load-opaque
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Value (signed 64-bit)                     |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *
 * Metadata record (256 bytes)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   Record State (0 unused, 1 allocated; store-release, last)   |   0
 *  +---------------------------------------------------------------+
 *  |   Type Id (1 counter: only grows; 2 gauge: a current level;    |   4
 *  |            3 info: a fact in the description, value unused)   |
 *  +---------------------------------------------------------------+
 *  |                     Name Length (bytes)                       |   8
 *  +---------------------------------------------------------------+
 *  |   Name: UTF-8, snake_case, up to 52 bytes, zero-padded       ...  12
 *  +---------------------------------------------------------------+
 *  |                     Description Length (bytes)                |  64
 *  +---------------------------------------------------------------+
 *  |   Description: UTF-8, up to 188 bytes, zero-padded           ...  68
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>A reader reads Record State with acquire semantics and, if it is allocated, every other field of
 * the record after it. Ids are stable and never reused, so a record once allocated never changes: a
 * reader may cache names by id. The engine's ids are those of
 * {@link io.kvtier.engine.status.EngineCounter}, but nothing here needs that enum; ids from
 * {@link #FIRST_TIER_INFO_ID} hold one info record per configured tier, in order, named
 * {@code tier_<name>}, whose description is the tier's type and its {@code describe()} line, and whose
 * value is the tier's state ({@link #TIER_IN_SERVICE}, {@link #TIER_STUCK}, {@link #TIER_OUT_OF_SERVICE}),
 * which the engine changes as a gauge; ids from {@link #FIRST_THREAD_ID} one gauge per watched engine
 * thread, named {@code thread_<name>}: 0 runs, 1 stuck, 2 dead ({@code io.kvtier.engine.status.ThreadWatch}).
 *
 * <p>Ids from {@link #FIRST_REQUEST_TYPE_ID} count the requests the engine took, one counter per
 * message type (the id is {@code FIRST_REQUEST_TYPE_ID + type}), named {@code requests_<type name>}.
 * Ids from {@link #FIRST_TIER_COUNTER_ID} hold a block of {@link #TIER_COUNTER_STRIDE} counters per
 * configured tier, in configuration order, the same order as the tier info records: tier {@code t}'s
 * counter {@code c} (one of the {@code TIER_*} offsets below) is at
 * {@code FIRST_TIER_COUNTER_ID + t * TIER_COUNTER_STRIDE + c}, named {@code l3_<tier>_<what>}
 * (cut to 52 bytes: a reader takes the tier from the id, never from the name). The usage gauges
 * ({@link #TIER_USED_BYTES}, {@link #TIER_CAPACITY_BYTES}, {@link #TIER_OBJECTS}) are written by
 * the tier's own call thread, each of the others by the engine thread: every value still has one writer.
 *
 * <pre>
 * Ids
 *   0 ..  95  engine counters (io.kvtier.engine.status.EngineCounter)
 *  96 .. 127  requests by message type
 * 128 .. 397  per-tier blocks, 9 ids each, 30 tiers
 * 398 .. 415  engine counters, second block (398 .. 400: the warm restart's)
 * 416 .. 447  watched threads
 * 448 .. 477  tier info records
 * </pre>
 */
public final class CountersDescriptor
{
    /** Number of counter slots. */
    public static final int MAX_COUNTERS = 512;
    /** Length of one value. */
    public static final int VALUE_LENGTH = 8;
    /** Where the metadata records start within the region. */
    public static final int METADATA_OFFSET = MAX_COUNTERS * VALUE_LENGTH;
    /** Length of one metadata record. */
    public static final int RECORD_LENGTH = 256;
    /** Length of the region. */
    public static final int REGION_LENGTH = METADATA_OFFSET + MAX_COUNTERS * RECORD_LENGTH;

    /** Offset of the record state within a record. */
    public static final int RECORD_STATE_OFFSET = 0;
    /** Offset of the type id within a record. */
    public static final int TYPE_ID_OFFSET = 4;
    /** Offset of the name's length within a record. */
    public static final int NAME_LENGTH_OFFSET = 8;
    /** Offset of the name within a record. */
    public static final int NAME_OFFSET = 12;
    /** Longest name, in bytes of UTF-8. */
    public static final int MAX_NAME_LENGTH = 52;
    /** Offset of the description's length within a record. */
    public static final int DESCRIPTION_LENGTH_OFFSET = 64;
    /** Offset of the description within a record. */
    public static final int DESCRIPTION_OFFSET = 68;
    /** Longest description, in bytes of UTF-8. */
    public static final int MAX_DESCRIPTION_LENGTH = RECORD_LENGTH - DESCRIPTION_OFFSET;

    /**
     * Type id: not a number but a fact, in the description (a tier's I/O path, say). The value stays 0,
     * except for a tier's record, whose value is the tier's state: {@link #TIER_IN_SERVICE},
     * {@link #TIER_STUCK} or {@link #TIER_OUT_OF_SERVICE}.
     */
    public static final int TYPE_INFO = 3;

    /** The id of the first watched thread's gauge; the others follow (at most 32). */
    public static final int FIRST_THREAD_ID = 416;

    /** The id of the request counter of message type 0; the counter of type {@code t} is at this plus {@code t} (types below 32). */
    public static final int FIRST_REQUEST_TYPE_ID = 96;

    /** Message types with a request counter: types 0 to 31. */
    public static final int REQUEST_TYPES = 32;

    /** The id of the first tier's block of counters; each tier's block follows the one before, in configuration order. */
    public static final int FIRST_TIER_COUNTER_ID = 128;
    /** First id of the engine counters' second block, between the tier blocks and the threads (the first, below {@link #FIRST_REQUEST_TYPE_ID}, is full). */
    public static final int SECOND_ENGINE_BLOCK_ID = 398;

    /** Counters in a tier's block. */
    public static final int TIER_COUNTER_STRIDE = 9;

    /** Offset in a tier's block: reads from the tier that were verified and served (a counter). */
    public static final int TIER_HITS = 0;
    /** Offset in a tier's block: reads from the tier that found nothing (a counter). */
    public static final int TIER_MISSES = 1;
    /** Offset in a tier's block: reads, writes and probes that failed, timed out, or read corrupt bytes (a counter). */
    public static final int TIER_ERRORS = 2;
    /** Offset in a tier's block: payload bytes of verified reads (a counter). */
    public static final int TIER_BYTES_READ = 3;
    /** Offset in a tier's block: payload bytes of completed writes, backups and migrations (a counter). */
    public static final int TIER_BYTES_WRITTEN = 4;
    /** Offset in a tier's block: bytes the tier reports in use (a gauge, from the tier's usage()). */
    public static final int TIER_USED_BYTES = 5;
    /** Offset in a tier's block: the tier's capacity in bytes, or Long.MAX_VALUE when it sets none (a gauge). */
    public static final int TIER_CAPACITY_BYTES = 6;
    /** Offset in a tier's block: objects the tier reports holding (a gauge). */
    public static final int TIER_OBJECTS = 7;
    /** Offset in a tier's block: pages the engine removed from the tier (a counter). */
    public static final int TIER_EVICTIONS = 8;

    /** Names of a tier's block's counters, by offset, as they follow {@code l3_<tier>_} in their records. */
    public static final List<String> TIER_COUNTER_NAMES = List.of(
        "hits", "misses", "errors", "bytes_read", "bytes_written", "used_bytes", "capacity_bytes", "objects", "evictions");

    /**
     * @param tier    a tier's index in configuration order
     * @param counter one of the {@code TIER_*} offsets
     * @return the id of that tier's counter
     */
    public static int tierCounterId(final int tier, final int counter)
    {
        return FIRST_TIER_COUNTER_ID + tier * TIER_COUNTER_STRIDE + counter;
    }

    /** The id of the first tier's info record; the tiers' follow in configuration order (at most 30). */
    public static final int FIRST_TIER_INFO_ID = 448;

    /** A tier record's value: the tier takes batches. */
    public static final int TIER_IN_SERVICE = 0;
    /** A tier record's value: the tier is stuck (a call or a batch outlived l3.io-timeout); batches for it fail until it answers. */
    public static final int TIER_STUCK = 1;
    /** A tier record's value: the tier was caught writing into pages after their load; batches for it fail until the engine restarts. */
    public static final int TIER_OUT_OF_SERVICE = 2;

    /** Record state: no counter has this id. */
    public static final int RECORD_UNUSED = 0;
    /** Record state: the record names a counter. */
    public static final int RECORD_ALLOCATED = 1;

    /** Type id: a count that only grows. */
    public static final int TYPE_COUNTER = 1;
    /** Type id: a current level (pages in use, backups in flight), which goes up and down. */
    public static final int TYPE_GAUGE = 2;

    private CountersDescriptor()
    {
    }

    /**
     * @param id a counter id
     * @return its value's offset within the region
     */
    public static long valueOffset(final int id)
    {
        checkId(id);
        return (long)id * VALUE_LENGTH;
    }

    /**
     * @param id a counter id
     * @return its metadata record's offset within the region
     */
    public static long recordOffset(final int id)
    {
        checkId(id);
        return METADATA_OFFSET + (long)id * RECORD_LENGTH;
    }

    private static void checkId(final int id)
    {
        if (id < 0 || id >= MAX_COUNTERS)
        {
            throw new IllegalArgumentException("counter id=" + id + " outside [0, " + MAX_COUNTERS + ")");
        }
    }
}
