// Written by hand in the shape of jextract 22's output for plugins/3fs/include/hf3fs_usrbio.h (jextract is not
// installable on the build machines); Hf3fsAbiTest compares these layouts with gcc's. Functions are looked
// up lazily, each on first use, through SYMBOL_LOOKUP.

package io.kvtier.tier.threefs.hf3fs.bindings;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

public class hf3fs_usrbio_h {

    hf3fs_usrbio_h() {
        // Should not be called directly
    }

    public static final ValueLayout.OfBoolean C_BOOL = ValueLayout.JAVA_BOOLEAN;
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /**
     * The USRBIO library this process bound. jextract writes a libraryLookup of its --library argument
     * here; instead the lookup asks {@link Hf3fsLibrary} on each first use of a function, because the
     * library is chosen at run time (a tier's {@code lib} setting or KVTIER_3FS_LIB) and bound only after
     * its symbols were checked. Handles are made by {@link NativeAccess#downcall}, the project's one place
     * for restricted linker calls.
     */
    static final SymbolLookup SYMBOL_LOOKUP = name -> Hf3fsLibrary.bound().flatMap(lookup -> lookup.find(name));

    /** Every function this class binds, by C name: what a library must export to be used. */
    public static final List<String> FUNCTIONS = List.of(
        "hf3fs_is_hf3fs",
        "hf3fs_extract_mount_point",
        "hf3fs_iovcreate",
        "hf3fs_iovwrap",
        "hf3fs_iovunlink",
        "hf3fs_iovdestroy",
        "hf3fs_ior_size",
        "hf3fs_iorcreate4",
        "hf3fs_iordestroy",
        "hf3fs_reg_fd",
        "hf3fs_dereg_fd",
        "hf3fs_io_entries",
        "hf3fs_prep_io",
        "hf3fs_submit_ios",
        "hf3fs_wait_for_ios"
    );

    static MemorySegment findOrThrow(String symbol) {
        return SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol + " (" + Hf3fsLibrary.description() + ")"));
    }

    private static final int HF3FS_SUPER_MAGIC = (int)0x8f3f5fffL;

    /**
     * {@snippet lang=c : #define HF3FS_SUPER_MAGIC 0x8f3f5fff}
     */
    public static int HF3FS_SUPER_MAGIC() {
        return HF3FS_SUPER_MAGIC;
    }

    private static final int HF3FS_IOR_ALLOW_READ_UNCOMMITTED = (int)1L;

    /**
     * {@snippet lang=c : #define HF3FS_IOR_ALLOW_READ_UNCOMMITTED 1}
     */
    public static int HF3FS_IOR_ALLOW_READ_UNCOMMITTED() {
        return HF3FS_IOR_ALLOW_READ_UNCOMMITTED;
    }

    private static final int HF3FS_IOR_FORBID_READ_HOLES = (int)2L;

    /**
     * {@snippet lang=c : #define HF3FS_IOR_FORBID_READ_HOLES 2}
     */
    public static int HF3FS_IOR_FORBID_READ_HOLES() {
        return HF3FS_IOR_FORBID_READ_HOLES;
    }

    private static class hf3fs_is_hf3fs {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_BOOL,
            C_INT
        );

        static final String ADDR_NAME = "hf3fs_is_hf3fs";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_is_hf3fs
     */
    public static FunctionDescriptor hf3fs_is_hf3fs$descriptor() {
        return hf3fs_is_hf3fs.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_is_hf3fs
     */
    public static MethodHandle hf3fs_is_hf3fs$handle() {
        return hf3fs_is_hf3fs.HANDLE;
    }

    /**
     * Address for: hf3fs_is_hf3fs
     */
    public static MemorySegment hf3fs_is_hf3fs$address() {
        return hf3fs_is_hf3fs.ADDR;
    }

    public static boolean hf3fs_is_hf3fs(int fd) {
        var mh$ = hf3fs_is_hf3fs.HANDLE;
        try {
            return (boolean)mh$.invokeExact(fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_extract_mount_point {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_extract_mount_point";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_extract_mount_point
     */
    public static FunctionDescriptor hf3fs_extract_mount_point$descriptor() {
        return hf3fs_extract_mount_point.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_extract_mount_point
     */
    public static MethodHandle hf3fs_extract_mount_point$handle() {
        return hf3fs_extract_mount_point.HANDLE;
    }

    /**
     * Address for: hf3fs_extract_mount_point
     */
    public static MemorySegment hf3fs_extract_mount_point$address() {
        return hf3fs_extract_mount_point.ADDR;
    }

    public static int hf3fs_extract_mount_point(MemorySegment hf3fs_mount_point, int size, MemorySegment path) {
        var mh$ = hf3fs_extract_mount_point.HANDLE;
        try {
            return (int)mh$.invokeExact(hf3fs_mount_point, size, path);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iovcreate {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_LONG,
            C_INT
        );

        static final String ADDR_NAME = "hf3fs_iovcreate";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iovcreate
     */
    public static FunctionDescriptor hf3fs_iovcreate$descriptor() {
        return hf3fs_iovcreate.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iovcreate
     */
    public static MethodHandle hf3fs_iovcreate$handle() {
        return hf3fs_iovcreate.HANDLE;
    }

    /**
     * Address for: hf3fs_iovcreate
     */
    public static MemorySegment hf3fs_iovcreate$address() {
        return hf3fs_iovcreate.ADDR;
    }

    public static int hf3fs_iovcreate(MemorySegment iov, MemorySegment hf3fs_mount_point, long size, long block_size, int numa) {
        var mh$ = hf3fs_iovcreate.HANDLE;
        try {
            return (int)mh$.invokeExact(iov, hf3fs_mount_point, size, block_size, numa);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iovwrap {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_LONG,
            C_INT
        );

        static final String ADDR_NAME = "hf3fs_iovwrap";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iovwrap
     */
    public static FunctionDescriptor hf3fs_iovwrap$descriptor() {
        return hf3fs_iovwrap.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iovwrap
     */
    public static MethodHandle hf3fs_iovwrap$handle() {
        return hf3fs_iovwrap.HANDLE;
    }

    /**
     * Address for: hf3fs_iovwrap
     */
    public static MemorySegment hf3fs_iovwrap$address() {
        return hf3fs_iovwrap.ADDR;
    }

    public static int hf3fs_iovwrap(MemorySegment iov, MemorySegment base, MemorySegment id, MemorySegment hf3fs_mount_point, long size, long block_size, int numa) {
        var mh$ = hf3fs_iovwrap.HANDLE;
        try {
            return (int)mh$.invokeExact(iov, base, id, hf3fs_mount_point, size, block_size, numa);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iovunlink {
        public static final FunctionDescriptor DESC = FunctionDescriptor.ofVoid(
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_iovunlink";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iovunlink
     */
    public static FunctionDescriptor hf3fs_iovunlink$descriptor() {
        return hf3fs_iovunlink.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iovunlink
     */
    public static MethodHandle hf3fs_iovunlink$handle() {
        return hf3fs_iovunlink.HANDLE;
    }

    /**
     * Address for: hf3fs_iovunlink
     */
    public static MemorySegment hf3fs_iovunlink$address() {
        return hf3fs_iovunlink.ADDR;
    }

    public static void hf3fs_iovunlink(MemorySegment iov) {
        var mh$ = hf3fs_iovunlink.HANDLE;
        try {
            mh$.invokeExact(iov);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iovdestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.ofVoid(
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_iovdestroy";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iovdestroy
     */
    public static FunctionDescriptor hf3fs_iovdestroy$descriptor() {
        return hf3fs_iovdestroy.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iovdestroy
     */
    public static MethodHandle hf3fs_iovdestroy$handle() {
        return hf3fs_iovdestroy.HANDLE;
    }

    /**
     * Address for: hf3fs_iovdestroy
     */
    public static MemorySegment hf3fs_iovdestroy$address() {
        return hf3fs_iovdestroy.ADDR;
    }

    public static void hf3fs_iovdestroy(MemorySegment iov) {
        var mh$ = hf3fs_iovdestroy.HANDLE;
        try {
            mh$.invokeExact(iov);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_ior_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG,
            C_INT
        );

        static final String ADDR_NAME = "hf3fs_ior_size";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_ior_size
     */
    public static FunctionDescriptor hf3fs_ior_size$descriptor() {
        return hf3fs_ior_size.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_ior_size
     */
    public static MethodHandle hf3fs_ior_size$handle() {
        return hf3fs_ior_size.HANDLE;
    }

    /**
     * Address for: hf3fs_ior_size
     */
    public static MemorySegment hf3fs_ior_size$address() {
        return hf3fs_ior_size.ADDR;
    }

    public static long hf3fs_ior_size(int entries) {
        var mh$ = hf3fs_ior_size.HANDLE;
        try {
            return (long)mh$.invokeExact(entries);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iorcreate4 {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_INT,
            C_BOOL,
            C_INT,
            C_INT,
            C_INT,
            C_LONG
        );

        static final String ADDR_NAME = "hf3fs_iorcreate4";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iorcreate4
     */
    public static FunctionDescriptor hf3fs_iorcreate4$descriptor() {
        return hf3fs_iorcreate4.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iorcreate4
     */
    public static MethodHandle hf3fs_iorcreate4$handle() {
        return hf3fs_iorcreate4.HANDLE;
    }

    /**
     * Address for: hf3fs_iorcreate4
     */
    public static MemorySegment hf3fs_iorcreate4$address() {
        return hf3fs_iorcreate4.ADDR;
    }

    public static int hf3fs_iorcreate4(MemorySegment ior, MemorySegment hf3fs_mount_point, int entries, boolean for_read, int io_depth, int timeout, int numa, long flags) {
        var mh$ = hf3fs_iorcreate4.HANDLE;
        try {
            return (int)mh$.invokeExact(ior, hf3fs_mount_point, entries, for_read, io_depth, timeout, numa, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_iordestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.ofVoid(
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_iordestroy";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_iordestroy
     */
    public static FunctionDescriptor hf3fs_iordestroy$descriptor() {
        return hf3fs_iordestroy.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_iordestroy
     */
    public static MethodHandle hf3fs_iordestroy$handle() {
        return hf3fs_iordestroy.HANDLE;
    }

    /**
     * Address for: hf3fs_iordestroy
     */
    public static MemorySegment hf3fs_iordestroy$address() {
        return hf3fs_iordestroy.ADDR;
    }

    public static void hf3fs_iordestroy(MemorySegment ior) {
        var mh$ = hf3fs_iordestroy.HANDLE;
        try {
            mh$.invokeExact(ior);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_reg_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_INT,
            C_LONG
        );

        static final String ADDR_NAME = "hf3fs_reg_fd";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_reg_fd
     */
    public static FunctionDescriptor hf3fs_reg_fd$descriptor() {
        return hf3fs_reg_fd.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_reg_fd
     */
    public static MethodHandle hf3fs_reg_fd$handle() {
        return hf3fs_reg_fd.HANDLE;
    }

    /**
     * Address for: hf3fs_reg_fd
     */
    public static MemorySegment hf3fs_reg_fd$address() {
        return hf3fs_reg_fd.ADDR;
    }

    public static int hf3fs_reg_fd(int fd, long flags) {
        var mh$ = hf3fs_reg_fd.HANDLE;
        try {
            return (int)mh$.invokeExact(fd, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_dereg_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.ofVoid(
            C_INT
        );

        static final String ADDR_NAME = "hf3fs_dereg_fd";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_dereg_fd
     */
    public static FunctionDescriptor hf3fs_dereg_fd$descriptor() {
        return hf3fs_dereg_fd.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_dereg_fd
     */
    public static MethodHandle hf3fs_dereg_fd$handle() {
        return hf3fs_dereg_fd.HANDLE;
    }

    /**
     * Address for: hf3fs_dereg_fd
     */
    public static MemorySegment hf3fs_dereg_fd$address() {
        return hf3fs_dereg_fd.ADDR;
    }

    public static void hf3fs_dereg_fd(int fd) {
        var mh$ = hf3fs_dereg_fd.HANDLE;
        try {
            mh$.invokeExact(fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_io_entries {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_io_entries";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_io_entries
     */
    public static FunctionDescriptor hf3fs_io_entries$descriptor() {
        return hf3fs_io_entries.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_io_entries
     */
    public static MethodHandle hf3fs_io_entries$handle() {
        return hf3fs_io_entries.HANDLE;
    }

    /**
     * Address for: hf3fs_io_entries
     */
    public static MemorySegment hf3fs_io_entries$address() {
        return hf3fs_io_entries.ADDR;
    }

    public static int hf3fs_io_entries(MemorySegment ior) {
        var mh$ = hf3fs_io_entries.HANDLE;
        try {
            return (int)mh$.invokeExact(ior);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_prep_io {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_BOOL,
            C_POINTER,
            C_INT,
            C_LONG,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_prep_io";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_prep_io
     */
    public static FunctionDescriptor hf3fs_prep_io$descriptor() {
        return hf3fs_prep_io.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_prep_io
     */
    public static MethodHandle hf3fs_prep_io$handle() {
        return hf3fs_prep_io.HANDLE;
    }

    /**
     * Address for: hf3fs_prep_io
     */
    public static MemorySegment hf3fs_prep_io$address() {
        return hf3fs_prep_io.ADDR;
    }

    public static int hf3fs_prep_io(MemorySegment ior, MemorySegment iov, boolean read, MemorySegment ptr, int fd, long off, long len, MemorySegment userdata) {
        var mh$ = hf3fs_prep_io.HANDLE;
        try {
            return (int)mh$.invokeExact(ior, iov, read, ptr, fd, off, len, userdata);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_submit_ios {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_submit_ios";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_submit_ios
     */
    public static FunctionDescriptor hf3fs_submit_ios$descriptor() {
        return hf3fs_submit_ios.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_submit_ios
     */
    public static MethodHandle hf3fs_submit_ios$handle() {
        return hf3fs_submit_ios.HANDLE;
    }

    /**
     * Address for: hf3fs_submit_ios
     */
    public static MemorySegment hf3fs_submit_ios$address() {
        return hf3fs_submit_ios.ADDR;
    }

    public static int hf3fs_submit_ios(MemorySegment ior) {
        var mh$ = hf3fs_submit_ios.HANDLE;
        try {
            return (int)mh$.invokeExact(ior);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class hf3fs_wait_for_ios {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_INT,
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "hf3fs_wait_for_ios";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: hf3fs_wait_for_ios
     */
    public static FunctionDescriptor hf3fs_wait_for_ios$descriptor() {
        return hf3fs_wait_for_ios.DESC;
    }

    /**
     * Downcall method handle for: hf3fs_wait_for_ios
     */
    public static MethodHandle hf3fs_wait_for_ios$handle() {
        return hf3fs_wait_for_ios.HANDLE;
    }

    /**
     * Address for: hf3fs_wait_for_ios
     */
    public static MemorySegment hf3fs_wait_for_ios$address() {
        return hf3fs_wait_for_ios.ADDR;
    }

    public static int hf3fs_wait_for_ios(MemorySegment ior, MemorySegment cqes, int cqec, int min_results, MemorySegment abs_timeout) {
        var mh$ = hf3fs_wait_for_ios.HANDLE;
        try {
            return (int)mh$.invokeExact(ior, cqes, cqec, min_results, abs_timeout);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }
}
