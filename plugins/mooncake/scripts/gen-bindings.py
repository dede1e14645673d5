#!/usr/bin/env python3
"""Writes the store_c.h bindings (src/main/java/io/kvtier/tier/mooncake/bindings/store_c_h.java) in the shape
jextract 22 generates, with the project's two rewrites: SYMBOL_LOOKUP is the libmooncake_store that
MooncakeLibrary bound (tier setting `lib`, KVTIER_MOONCAKE_LIB, KVTIER_MOONCAKE_HOME), and handles are
made by NativeAccess.downcall. jextract itself is not installable on the build machines; its real output
has the same public names and signatures. The function table below is store_c.h's, in header order;
after editing it (a new Mooncake ABI), rerun this script and MooncakeAbiTest.

Usage: plugins/mooncake/scripts/gen-bindings.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "src", "main", "java", "io", "kvtier", "tier", "mooncake", "bindings", "store_c_h.java")

P, I, L = "C_POINTER", "C_INT", "C_LONG"
# (name, return layout or None for void, [(parameter layout, parameter name)])
FUNCTIONS = [
    ("mooncake_store_create", P, []),
    ("mooncake_store_destroy", None, [(P, "store")]),
    ("mooncake_store_setup", I, [(P, "store"), (P, "local_hostname"), (P, "metadata_server"), (L, "global_segment_size"),
                                 (L, "local_buffer_size"), (P, "protocol"), (P, "device_name"), (P, "master_server_addr")]),
    ("mooncake_store_init_all", I, [(P, "store"), (P, "protocol"), (P, "device_name"), (L, "mount_segment_size")]),
    ("mooncake_store_health_check", I, [(P, "store")]),
    ("mooncake_store_put", I, [(P, "store"), (P, "key"), (P, "value"), (L, "size"), (P, "config")]),
    ("mooncake_store_put_from", I, [(P, "store"), (P, "key"), (P, "buffer"), (L, "size"), (P, "config")]),
    ("mooncake_store_batch_put_from", I, [(P, "store"), (P, "keys"), (P, "buffers"), (P, "sizes"), (L, "count"), (P, "config"),
                                          (P, "results_out")]),
    ("mooncake_store_get_into", L, [(P, "store"), (P, "key"), (P, "buffer"), (L, "size")]),
    ("mooncake_store_batch_get_into", I, [(P, "store"), (P, "keys"), (P, "buffers"), (P, "sizes"), (L, "count"), (P, "results_out")]),
    ("mooncake_store_is_exist", I, [(P, "store"), (P, "key")]),
    ("mooncake_store_batch_is_exist", I, [(P, "store"), (P, "keys"), (L, "count"), (P, "results_out")]),
    ("mooncake_store_get_size", L, [(P, "store"), (P, "key")]),
    ("mooncake_store_get_hostname", I, [(P, "store"), (P, "buf_out"), (L, "buf_len")]),
    ("mooncake_store_remove", I, [(P, "store"), (P, "key"), (I, "force")]),
    ("mooncake_store_remove_by_regex", L, [(P, "store"), (P, "pattern"), (I, "force")]),
    ("mooncake_store_remove_all", L, [(P, "store"), (I, "force")]),
    ("mooncake_store_register_buffer", I, [(P, "store"), (P, "buffer"), (L, "size")]),
    ("mooncake_store_unregister_buffer", I, [(P, "store"), (P, "buffer")]),
]

JAVA_TYPE = {P: "MemorySegment", I: "int", L: "long"}

HEAD = '''// Generated in the shape of jextract 22 from store_c.h (Mooncake 3b5a594) by plugins/mooncake/scripts/gen-bindings.py;
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
%s
        );
    }

    static MemorySegment findOrThrow(String symbol) {
        return Library.SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol + " (" + MooncakeLibrary.location() + ")"));
    }
'''

FUNC = '''
    private static class {name} {{
        public static final FunctionDescriptor DESC = {desc};

        static final String ADDR_NAME = "{name}";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(Library.SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }}

    /**
     * Function descriptor for:
     * {{@snippet lang=c :
     * {proto}
     * }}
     */
    public static FunctionDescriptor {name}$descriptor() {{
        return {name}.DESC;
    }}

    /**
     * Downcall method handle for:
     * {{@snippet lang=c :
     * {proto}
     * }}
     */
    public static MethodHandle {name}$handle() {{
        return {name}.HANDLE;
    }}

    /**
     * Address for:
     * {{@snippet lang=c :
     * {proto}
     * }}
     */
    public static MemorySegment {name}$address() {{
        return {name}.ADDR;
    }}

    /**
     * {{@snippet lang=c :
     * {proto}
     * }}
     */
    public static {ret} {name}({params}) {{
        var mh$ = {name}.HANDLE;
        try {{
            {call}
        }} catch (Error | RuntimeException ex) {{
           throw ex;
        }} catch (Throwable ex$) {{
           throw new AssertionError("should not reach here", ex$);
        }}
    }}
'''

C_TYPES = {
    "mooncake_store_create": "mooncake_store_t mooncake_store_create()",
    "mooncake_store_destroy": "void mooncake_store_destroy(mooncake_store_t store)",
    "mooncake_store_setup": "int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server, uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol, const char *device_name, const char *master_server_addr)",
    "mooncake_store_init_all": "int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size)",
    "mooncake_store_health_check": "int mooncake_store_health_check(mooncake_store_t store)",
    "mooncake_store_put": "int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config)",
    "mooncake_store_put_from": "int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config)",
    "mooncake_store_batch_put_from": "int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, const mooncake_replicate_config_t *config, int *results_out)",
    "mooncake_store_get_into": "int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size)",
    "mooncake_store_batch_get_into": "int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count, int64_t *results_out)",
    "mooncake_store_is_exist": "int mooncake_store_is_exist(mooncake_store_t store, const char *key)",
    "mooncake_store_batch_is_exist": "int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out)",
    "mooncake_store_get_size": "int64_t mooncake_store_get_size(mooncake_store_t store, const char *key)",
    "mooncake_store_get_hostname": "int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len)",
    "mooncake_store_remove": "int mooncake_store_remove(mooncake_store_t store, const char *key, int force)",
    "mooncake_store_remove_by_regex": "int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force)",
    "mooncake_store_remove_all": "int64_t mooncake_store_remove_all(mooncake_store_t store, int force)",
    "mooncake_store_register_buffer": "int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size)",
    "mooncake_store_unregister_buffer": "int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer)",
}


def desc(ret, params):
    args = [ret] if ret else []
    args += [p for p, _ in params]
    inner = ",\n            ".join(args)
    if ret:
        return "FunctionDescriptor.of(\n            " + inner + "\n        )" if args else "FunctionDescriptor.of()"
    return ("FunctionDescriptor.ofVoid(\n            " + inner + "\n        )") if args else "FunctionDescriptor.ofVoid()"


def main():
    parts = [HEAD % ",\n".join('            "%s"' % f[0] for f in FUNCTIONS)]
    for name, ret, params in FUNCTIONS:
        java_ret = JAVA_TYPE[ret] if ret else "void"
        plist = ", ".join("%s %s" % (JAVA_TYPE[p], n) for p, n in params)
        argnames = ", ".join(n for _, n in params)
        if ret:
            call = "return (%s)mh$.invokeExact(%s);" % (java_ret, argnames)
        else:
            call = "mh$.invokeExact(%s);" % argnames
        parts.append(FUNC.format(name=name, desc=desc(ret, params), ret=java_ret, params=plist, call=call,
                                 proto=C_TYPES[name] + ";"))
    parts.append("}\n")
    with open(OUT, "w") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
