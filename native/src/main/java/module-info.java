/**
 * The FFM fronts of native capabilities. This module makes the restricted FFM calls (downcalls,
 * reinterpret), so the JVM grants it native access by name: {@code --enable-native-access=io.kvtier.nativeaccess}.
 * Internal to kvtier: not an API for third-party plugins, whose class loader does not see it. The
 * generated {@code bindings} packages are exported only to the module that needs one.
 */
module io.kvtier.nativeaccess
{
    // NativeAccess (why a front fell back): device, client, the Mooncake and 3FS tiers, cli.
    exports io.kvtier.nativeaccess;
    // Cuda: device's CUDA executor and its CUDA IPC handles.
    exports io.kvtier.nativeaccess.cuda;
    // The CUDA runtime's constants (copy kinds, error codes): device's CUDA executor.
    exports io.kvtier.nativeaccess.cuda.bindings to io.kvtier.device;
    // LibC (mmap, futex, memcpy, flock): client, engine, device, the POSIX and 3FS tiers, bench.
    exports io.kvtier.nativeaccess.libc;
    // Uring: the POSIX tier's io_uring path.
    exports io.kvtier.nativeaccess.uring;
}
