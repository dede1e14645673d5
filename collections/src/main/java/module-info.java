/**
 * Allocation-free structures of the engine (the 128-bit key table, the LRU list, the parking queue).
 * Internal to kvtier: not an API for third-party plugins, whose class loader does not see it.
 */
module io.kvtier.collections
{
    // Used by the engine (index, pool), the built-in POSIX tier (FileIndex) and bench.
    exports io.kvtier.collections;
}
