/**
 * The GPU side: KV layouts, copy plans and their executors. Makes restricted FFM calls itself
 * ({@code MemorySegment.reinterpret} in the emulated executor), so it is granted native access by name.
 */
module io.kvtier.device
{
    requires io.kvtier.nativeaccess;

    // Layouts, plans and executors: the engine's device operations, bench (bench device) and cli.
    exports io.kvtier.device;
}
