// Written by hand in the shape of jextract 22's output for plugins/3fs/include/hf3fs_usrbio.h (jextract is not
// installable on the build machines); Hf3fsAbiTest compares these layouts with gcc's.

package io.kvtier.tier.threefs.hf3fs.bindings;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.ValueLayout.OfBoolean;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@snippet lang=c :
 * struct hf3fs_ior {
 *     struct hf3fs_iov iov;
 *     void *iorh;
 *     char mount_point[256];
 *     bool for_read;
 *     int io_depth;
 *     int priority;
 *     int timeout;
 *     uint64_t flags;
 * }
 * }
 */
public class hf3fs_ior {

    hf3fs_ior() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        hf3fs_iov.layout().withName("iov"),
        hf3fs_usrbio_h.C_POINTER.withName("iorh"),
        MemoryLayout.sequenceLayout(256, hf3fs_usrbio_h.C_CHAR).withName("mount_point"),
        hf3fs_usrbio_h.C_BOOL.withName("for_read"),
        MemoryLayout.paddingLayout(3),
        hf3fs_usrbio_h.C_INT.withName("io_depth"),
        hf3fs_usrbio_h.C_INT.withName("priority"),
        hf3fs_usrbio_h.C_INT.withName("timeout"),
        hf3fs_usrbio_h.C_LONG.withName("flags")
    ).withName("hf3fs_ior");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final GroupLayout iov$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("iov"));

    public static final GroupLayout iov$layout() {
        return iov$LAYOUT;
    }

    private static final long iov$OFFSET = 0;

    public static final long iov$offset() {
        return iov$OFFSET;
    }

    public static MemorySegment iov(MemorySegment struct) {
        return struct.asSlice(iov$OFFSET, iov$LAYOUT.byteSize());
    }

    public static void iov(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, iov$OFFSET, iov$LAYOUT.byteSize());
    }

    private static final AddressLayout iorh$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("iorh"));

    public static final AddressLayout iorh$layout() {
        return iorh$LAYOUT;
    }

    private static final long iorh$OFFSET = 312;

    public static final long iorh$offset() {
        return iorh$OFFSET;
    }

    public static MemorySegment iorh(MemorySegment struct) {
        return struct.get(iorh$LAYOUT, iorh$OFFSET);
    }

    public static void iorh(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(iorh$LAYOUT, iorh$OFFSET, fieldValue);
    }

    private static final SequenceLayout mount_point$LAYOUT = (SequenceLayout)$LAYOUT.select(groupElement("mount_point"));

    public static final SequenceLayout mount_point$layout() {
        return mount_point$LAYOUT;
    }

    private static final long mount_point$OFFSET = 320;

    public static final long mount_point$offset() {
        return mount_point$OFFSET;
    }

    public static MemorySegment mount_point(MemorySegment struct) {
        return struct.asSlice(mount_point$OFFSET, mount_point$LAYOUT.byteSize());
    }

    public static void mount_point(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, mount_point$OFFSET, mount_point$LAYOUT.byteSize());
    }

    private static final OfBoolean for_read$LAYOUT = (OfBoolean)$LAYOUT.select(groupElement("for_read"));

    public static final OfBoolean for_read$layout() {
        return for_read$LAYOUT;
    }

    private static final long for_read$OFFSET = 576;

    public static final long for_read$offset() {
        return for_read$OFFSET;
    }

    public static boolean for_read(MemorySegment struct) {
        return struct.get(for_read$LAYOUT, for_read$OFFSET);
    }

    public static void for_read(MemorySegment struct, boolean fieldValue) {
        struct.set(for_read$LAYOUT, for_read$OFFSET, fieldValue);
    }

    private static final OfInt io_depth$LAYOUT = (OfInt)$LAYOUT.select(groupElement("io_depth"));

    public static final OfInt io_depth$layout() {
        return io_depth$LAYOUT;
    }

    private static final long io_depth$OFFSET = 580;

    public static final long io_depth$offset() {
        return io_depth$OFFSET;
    }

    public static int io_depth(MemorySegment struct) {
        return struct.get(io_depth$LAYOUT, io_depth$OFFSET);
    }

    public static void io_depth(MemorySegment struct, int fieldValue) {
        struct.set(io_depth$LAYOUT, io_depth$OFFSET, fieldValue);
    }

    private static final OfInt priority$LAYOUT = (OfInt)$LAYOUT.select(groupElement("priority"));

    public static final OfInt priority$layout() {
        return priority$LAYOUT;
    }

    private static final long priority$OFFSET = 584;

    public static final long priority$offset() {
        return priority$OFFSET;
    }

    public static int priority(MemorySegment struct) {
        return struct.get(priority$LAYOUT, priority$OFFSET);
    }

    public static void priority(MemorySegment struct, int fieldValue) {
        struct.set(priority$LAYOUT, priority$OFFSET, fieldValue);
    }

    private static final OfInt timeout$LAYOUT = (OfInt)$LAYOUT.select(groupElement("timeout"));

    public static final OfInt timeout$layout() {
        return timeout$LAYOUT;
    }

    private static final long timeout$OFFSET = 588;

    public static final long timeout$offset() {
        return timeout$OFFSET;
    }

    public static int timeout(MemorySegment struct) {
        return struct.get(timeout$LAYOUT, timeout$OFFSET);
    }

    public static void timeout(MemorySegment struct, int fieldValue) {
        struct.set(timeout$LAYOUT, timeout$OFFSET, fieldValue);
    }

    private static final OfLong flags$LAYOUT = (OfLong)$LAYOUT.select(groupElement("flags"));

    public static final OfLong flags$layout() {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 592;

    public static final long flags$offset() {
        return flags$OFFSET;
    }

    public static long flags(MemorySegment struct) {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    public static void flags(MemorySegment struct, long fieldValue) {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    /**
     * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
     * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
     */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }

    /**
     * The size (in bytes) of this struct
     */
    public static long sizeof() { return layout().byteSize(); }

    /**
     * Allocate a segment of size {@code layout().byteSize()} using {@code allocator}
     */
    public static MemorySegment allocate(SegmentAllocator allocator) {
        return allocator.allocate(layout());
    }

    /**
     * Allocate an array of size {@code elementCount} using {@code allocator}.
     * The returned segment has size {@code elementCount * layout().byteSize()}.
     */
    public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }
}
