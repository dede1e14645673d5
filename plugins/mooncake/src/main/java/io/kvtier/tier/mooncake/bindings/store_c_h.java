// Generated in the shape of jextract 22 from store_c.h (Mooncake 3b5a594) by plugins/mooncake/scripts/gen-bindings.py;
// see that script before editing. Functions are looked up lazily, each on first use, through SYMBOL_LOOKUP.

package io.kvtier.tier.mooncake.bindings;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.tier.mooncake.MooncakeLibrary;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

public class store_c_h {

    store_c_h() {
        // Should not be called directly
    }

    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /**
     * The libmooncake_store this process uses. jextract writes a libraryLookup of its --library argument
     * here, and a LINKER.downcallHandle in each holder; the script rewrites them so that the library is the
     * one {@link MooncakeLibrary} bound (the tier's {@code lib} setting, KVTIER_MOONCAKE_LIB or
     * KVTIER_MOONCAKE_HOME) and handles are made by {@link NativeAccess#downcall}, the project's one place
     * for restricted linker calls. MooncakeLibrary binds before anything here is touched.
     */
    static final class Library {
        // A holder, so that the layouts above (which the struct classes use) need no library: only a
        // function's first call binds it.
        static final SymbolLookup SYMBOL_LOOKUP = MooncakeLibrary.lookup();
    }

    /**
     * Every function of store_c.h, in header order: MooncakeLibrary checks them all before it binds. A
     * nested class, so reading the names does not bind the library.
     */
    public static final class Symbols {
        private Symbols() {
        }

        public static final List<String> NAMES = List.of(
            "mooncake_store_create",
            "mooncake_store_destroy",
            "mooncake_store_setup",
            "mooncake_store_init_all",
            "mooncake_store_health_check",
            "mooncake_store_put",
            "mooncake_store_put_from",
            "mooncake_store_batch_put_from",
            "mooncake_store_get_into",
            "mooncake_store_batch_get_into",
            "mooncake_store_is_exist",
            "mooncake_store_batch_is_exist",
            "mooncake_store_get_size",
            "mooncake_store_get_hostname",
            "mooncake_store_remove",
            "mooncake_store_remove_by_regex",
            "mooncake_store_remove_all",
            "mooncake_store_register_buffer",
            "mooncake_store_unregister_buffer"
        );
    }

    static MemorySegment findOrThrow(String symbol) {
        return Library.SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol + " (" + MooncakeLibrary.location() + ")"));
    }

    private static class mooncake_store_create {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_create";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * mooncake_store_t mooncake_store_create();
     * }
     */
    public static FunctionDescriptor mooncake_store_create$descriptor() {
        return mooncake_store_create.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * mooncake_store_t mooncake_store_create();
     * }
     */
    public static MethodHandle mooncake_store_create$handle() {
        return mooncake_store_create.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * mooncake_store_t mooncake_store_create();
     * }
     */
    public static MemorySegment mooncake_store_create$address() {
        return mooncake_store_create.ADDR;
    }

    /**
     * {@snippet lang=c :
     * mooncake_store_t mooncake_store_create();
     * }
     */
    public static MemorySegment mooncake_store_create() {
        var mh$ = mooncake_store_create.HANDLE;
        try {
            return (MemorySegment)mh$.invokeExact();
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_destroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.ofVoid(
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_destroy";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * void mooncake_store_destroy(mooncake_store_t store);
     * }
     */
    public static FunctionDescriptor mooncake_store_destroy$descriptor() {
        return mooncake_store_destroy.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * void mooncake_store_destroy(mooncake_store_t store);
     * }
     */
    public static MethodHandle mooncake_store_destroy$handle() {
        return mooncake_store_destroy.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * void mooncake_store_destroy(mooncake_store_t store);
     * }
     */
    public static MemorySegment mooncake_store_destroy$address() {
        return mooncake_store_destroy.ADDR;
    }

    /**
     * {@snippet lang=c :
     * void mooncake_store_destroy(mooncake_store_t store);
     * }
     */
    public static void mooncake_store_destroy(MemorySegment store) {
        var mh$ = mooncake_store_destroy.HANDLE;
        try {
            mh$.invokeExact(store);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_setup {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_LONG,
            C_POINTER,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_setup";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server, uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol, const char *device_name, const char *master_server_addr);
     * }
     */
    public static FunctionDescriptor mooncake_store_setup$descriptor() {
        return mooncake_store_setup.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server, uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol, const char *device_name, const char *master_server_addr);
     * }
     */
    public static MethodHandle mooncake_store_setup$handle() {
        return mooncake_store_setup.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server, uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol, const char *device_name, const char *master_server_addr);
     * }
     */
    public static MemorySegment mooncake_store_setup$address() {
        return mooncake_store_setup.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server, uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol, const char *device_name, const char *master_server_addr);
     * }
     */
    public static int mooncake_store_setup(MemorySegment store, MemorySegment local_hostname, MemorySegment metadata_server, long global_segment_size, long local_buffer_size, MemorySegment protocol, MemorySegment device_name, MemorySegment master_server_addr) {
        var mh$ = mooncake_store_setup.HANDLE;
        try {
            return (int)mh$.invokeExact(store, local_hostname, metadata_server, global_segment_size, local_buffer_size, protocol, device_name, master_server_addr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_init_all {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG
        );

        static final String ADDR_NAME = "mooncake_store_init_all";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size);
     * }
     */
    public static FunctionDescriptor mooncake_store_init_all$descriptor() {
        return mooncake_store_init_all.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size);
     * }
     */
    public static MethodHandle mooncake_store_init_all$handle() {
        return mooncake_store_init_all.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size);
     * }
     */
    public static MemorySegment mooncake_store_init_all$address() {
        return mooncake_store_init_all.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size);
     * }
     */
    public static int mooncake_store_init_all(MemorySegment store, MemorySegment protocol, MemorySegment device_name, long mount_segment_size) {
        var mh$ = mooncake_store_init_all.HANDLE;
        try {
            return (int)mh$.invokeExact(store, protocol, device_name, mount_segment_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_health_check {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_health_check";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_health_check(mooncake_store_t store);
     * }
     */
    public static FunctionDescriptor mooncake_store_health_check$descriptor() {
        return mooncake_store_health_check.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_health_check(mooncake_store_t store);
     * }
     */
    public static MethodHandle mooncake_store_health_check$handle() {
        return mooncake_store_health_check.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_health_check(mooncake_store_t store);
     * }
     */
    public static MemorySegment mooncake_store_health_check$address() {
        return mooncake_store_health_check.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_health_check(mooncake_store_t store);
     * }
     */
    public static int mooncake_store_health_check(MemorySegment store) {
        var mh$ = mooncake_store_health_check.HANDLE;
        try {
            return (int)mh$.invokeExact(store);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_put {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_put";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static FunctionDescriptor mooncake_store_put$descriptor() {
        return mooncake_store_put.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static MethodHandle mooncake_store_put$handle() {
        return mooncake_store_put.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static MemorySegment mooncake_store_put$address() {
        return mooncake_store_put.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static int mooncake_store_put(MemorySegment store, MemorySegment key, MemorySegment value, long size, MemorySegment config) {
        var mh$ = mooncake_store_put.HANDLE;
        try {
            return (int)mh$.invokeExact(store, key, value, size, config);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_put_from {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_put_from";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static FunctionDescriptor mooncake_store_put_from$descriptor() {
        return mooncake_store_put_from.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static MethodHandle mooncake_store_put_from$handle() {
        return mooncake_store_put_from.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static MemorySegment mooncake_store_put_from$address() {
        return mooncake_store_put_from.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config);
     * }
     */
    public static int mooncake_store_put_from(MemorySegment store, MemorySegment key, MemorySegment buffer, long size, MemorySegment config) {
        var mh$ = mooncake_store_put_from.HANDLE;
        try {
            return (int)mh$.invokeExact(store, key, buffer, size, config);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_batch_put_from {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_batch_put_from";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, const mooncake_replicate_config_t *config, int *results_out);
     * }
     */
    public static FunctionDescriptor mooncake_store_batch_put_from$descriptor() {
        return mooncake_store_batch_put_from.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, const mooncake_replicate_config_t *config, int *results_out);
     * }
     */
    public static MethodHandle mooncake_store_batch_put_from$handle() {
        return mooncake_store_batch_put_from.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, const mooncake_replicate_config_t *config, int *results_out);
     * }
     */
    public static MemorySegment mooncake_store_batch_put_from$address() {
        return mooncake_store_batch_put_from.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, const mooncake_replicate_config_t *config, int *results_out);
     * }
     */
    public static int mooncake_store_batch_put_from(MemorySegment store, MemorySegment keys, MemorySegment buffers, MemorySegment sizes, long count, MemorySegment config, MemorySegment results_out) {
        var mh$ = mooncake_store_batch_put_from.HANDLE;
        try {
            return (int)mh$.invokeExact(store, keys, buffers, sizes, count, config, results_out);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_get_into {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG
        );

        static final String ADDR_NAME = "mooncake_store_get_into";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size);
     * }
     */
    public static FunctionDescriptor mooncake_store_get_into$descriptor() {
        return mooncake_store_get_into.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size);
     * }
     */
    public static MethodHandle mooncake_store_get_into$handle() {
        return mooncake_store_get_into.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size);
     * }
     */
    public static MemorySegment mooncake_store_get_into$address() {
        return mooncake_store_get_into.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size);
     * }
     */
    public static long mooncake_store_get_into(MemorySegment store, MemorySegment key, MemorySegment buffer, long size) {
        var mh$ = mooncake_store_get_into.HANDLE;
        try {
            return (long)mh$.invokeExact(store, key, buffer, size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_batch_get_into {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_batch_get_into";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, int64_t *results_out);
     * }
     */
    public static FunctionDescriptor mooncake_store_batch_get_into$descriptor() {
        return mooncake_store_batch_get_into.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, int64_t *results_out);
     * }
     */
    public static MethodHandle mooncake_store_batch_get_into$handle() {
        return mooncake_store_batch_get_into.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, int64_t *results_out);
     * }
     */
    public static MemorySegment mooncake_store_batch_get_into$address() {
        return mooncake_store_batch_get_into.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, int64_t *results_out);
     * }
     */
    public static int mooncake_store_batch_get_into(MemorySegment store, MemorySegment keys, MemorySegment buffers, MemorySegment sizes, long count, MemorySegment results_out) {
        var mh$ = mooncake_store_batch_get_into.HANDLE;
        try {
            return (int)mh$.invokeExact(store, keys, buffers, sizes, count, results_out);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_is_exist {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_is_exist";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_is_exist(mooncake_store_t store, const char *key);
     * }
     */
    public static FunctionDescriptor mooncake_store_is_exist$descriptor() {
        return mooncake_store_is_exist.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_is_exist(mooncake_store_t store, const char *key);
     * }
     */
    public static MethodHandle mooncake_store_is_exist$handle() {
        return mooncake_store_is_exist.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_is_exist(mooncake_store_t store, const char *key);
     * }
     */
    public static MemorySegment mooncake_store_is_exist$address() {
        return mooncake_store_is_exist.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_is_exist(mooncake_store_t store, const char *key);
     * }
     */
    public static int mooncake_store_is_exist(MemorySegment store, MemorySegment key) {
        var mh$ = mooncake_store_is_exist.HANDLE;
        try {
            return (int)mh$.invokeExact(store, key);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_batch_is_exist {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_batch_is_exist";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out);
     * }
     */
    public static FunctionDescriptor mooncake_store_batch_is_exist$descriptor() {
        return mooncake_store_batch_is_exist.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out);
     * }
     */
    public static MethodHandle mooncake_store_batch_is_exist$handle() {
        return mooncake_store_batch_is_exist.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out);
     * }
     */
    public static MemorySegment mooncake_store_batch_is_exist$address() {
        return mooncake_store_batch_is_exist.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out);
     * }
     */
    public static int mooncake_store_batch_is_exist(MemorySegment store, MemorySegment keys, long count, MemorySegment results_out) {
        var mh$ = mooncake_store_batch_is_exist.HANDLE;
        try {
            return (int)mh$.invokeExact(store, keys, count, results_out);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_get_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_get_size";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_size(mooncake_store_t store, const char *key);
     * }
     */
    public static FunctionDescriptor mooncake_store_get_size$descriptor() {
        return mooncake_store_get_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_size(mooncake_store_t store, const char *key);
     * }
     */
    public static MethodHandle mooncake_store_get_size$handle() {
        return mooncake_store_get_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int64_t mooncake_store_get_size(mooncake_store_t store, const char *key);
     * }
     */
    public static MemorySegment mooncake_store_get_size$address() {
        return mooncake_store_get_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int64_t mooncake_store_get_size(mooncake_store_t store, const char *key);
     * }
     */
    public static long mooncake_store_get_size(MemorySegment store, MemorySegment key) {
        var mh$ = mooncake_store_get_size.HANDLE;
        try {
            return (long)mh$.invokeExact(store, key);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_get_hostname {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_LONG
        );

        static final String ADDR_NAME = "mooncake_store_get_hostname";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len);
     * }
     */
    public static FunctionDescriptor mooncake_store_get_hostname$descriptor() {
        return mooncake_store_get_hostname.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len);
     * }
     */
    public static MethodHandle mooncake_store_get_hostname$handle() {
        return mooncake_store_get_hostname.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len);
     * }
     */
    public static MemorySegment mooncake_store_get_hostname$address() {
        return mooncake_store_get_hostname.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len);
     * }
     */
    public static int mooncake_store_get_hostname(MemorySegment store, MemorySegment buf_out, long buf_len) {
        var mh$ = mooncake_store_get_hostname.HANDLE;
        try {
            return (int)mh$.invokeExact(store, buf_out, buf_len);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_remove {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "mooncake_store_remove";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_remove(mooncake_store_t store, const char *key, int force);
     * }
     */
    public static FunctionDescriptor mooncake_store_remove$descriptor() {
        return mooncake_store_remove.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_remove(mooncake_store_t store, const char *key, int force);
     * }
     */
    public static MethodHandle mooncake_store_remove$handle() {
        return mooncake_store_remove.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_remove(mooncake_store_t store, const char *key, int force);
     * }
     */
    public static MemorySegment mooncake_store_remove$address() {
        return mooncake_store_remove.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_remove(mooncake_store_t store, const char *key, int force);
     * }
     */
    public static int mooncake_store_remove(MemorySegment store, MemorySegment key, int force) {
        var mh$ = mooncake_store_remove.HANDLE;
        try {
            return (int)mh$.invokeExact(store, key, force);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_remove_by_regex {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG,
            C_POINTER,
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "mooncake_store_remove_by_regex";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force);
     * }
     */
    public static FunctionDescriptor mooncake_store_remove_by_regex$descriptor() {
        return mooncake_store_remove_by_regex.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force);
     * }
     */
    public static MethodHandle mooncake_store_remove_by_regex$handle() {
        return mooncake_store_remove_by_regex.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force);
     * }
     */
    public static MemorySegment mooncake_store_remove_by_regex$address() {
        return mooncake_store_remove_by_regex.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force);
     * }
     */
    public static long mooncake_store_remove_by_regex(MemorySegment store, MemorySegment pattern, int force) {
        var mh$ = mooncake_store_remove_by_regex.HANDLE;
        try {
            return (long)mh$.invokeExact(store, pattern, force);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_remove_all {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG,
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "mooncake_store_remove_all";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_all(mooncake_store_t store, int force);
     * }
     */
    public static FunctionDescriptor mooncake_store_remove_all$descriptor() {
        return mooncake_store_remove_all.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_all(mooncake_store_t store, int force);
     * }
     */
    public static MethodHandle mooncake_store_remove_all$handle() {
        return mooncake_store_remove_all.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_all(mooncake_store_t store, int force);
     * }
     */
    public static MemorySegment mooncake_store_remove_all$address() {
        return mooncake_store_remove_all.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int64_t mooncake_store_remove_all(mooncake_store_t store, int force);
     * }
     */
    public static long mooncake_store_remove_all(MemorySegment store, int force) {
        var mh$ = mooncake_store_remove_all.HANDLE;
        try {
            return (long)mh$.invokeExact(store, force);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_register_buffer {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_LONG
        );

        static final String ADDR_NAME = "mooncake_store_register_buffer";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size);
     * }
     */
    public static FunctionDescriptor mooncake_store_register_buffer$descriptor() {
        return mooncake_store_register_buffer.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size);
     * }
     */
    public static MethodHandle mooncake_store_register_buffer$handle() {
        return mooncake_store_register_buffer.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size);
     * }
     */
    public static MemorySegment mooncake_store_register_buffer$address() {
        return mooncake_store_register_buffer.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size);
     * }
     */
    public static int mooncake_store_register_buffer(MemorySegment store, MemorySegment buffer, long size) {
        var mh$ = mooncake_store_register_buffer.HANDLE;
        try {
            return (int)mh$.invokeExact(store, buffer, size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mooncake_store_unregister_buffer {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "mooncake_store_unregister_buffer";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer);
     * }
     */
    public static FunctionDescriptor mooncake_store_unregister_buffer$descriptor() {
        return mooncake_store_unregister_buffer.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer);
     * }
     */
    public static MethodHandle mooncake_store_unregister_buffer$handle() {
        return mooncake_store_unregister_buffer.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer);
     * }
     */
    public static MemorySegment mooncake_store_unregister_buffer$address() {
        return mooncake_store_unregister_buffer.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer);
     * }
     */
    public static int mooncake_store_unregister_buffer(MemorySegment store, MemorySegment buffer) {
        var mh$ = mooncake_store_unregister_buffer.HANDLE;
        try {
            return (int)mh$.invokeExact(store, buffer);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }
}
