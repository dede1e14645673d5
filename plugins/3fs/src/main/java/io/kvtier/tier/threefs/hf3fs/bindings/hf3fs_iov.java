// Written by hand in the shape of jextract 22's output for plugins/3fs/include/hf3fs_usrbio.h (jextract is not
// installable on the build machines); Hf3fsAbiTest compares these layouts with gcc's.

package io.kvtier.tier.threefs.hf3fs.bindings;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@snippet lang=c :
 * struct hf3fs_iov {
 *     uint8_t *base;
 *     void *iovh;
 *     char id[16];
 *     char mount_point[256];
 *     size_t size;
 *     size_t block_size;
 *     int numa;
 * }
 * }
 */
public class hf3fs_iov {

    hf3fs_iov() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        hf3fs_usrbio_h.C_POINTER.withName("base"),
        hf3fs_usrbio_h.C_POINTER.withName("iovh"),
        MemoryLayout.sequenceLayout(16, hf3fs_usrbio_h.C_CHAR).withName("id"),
        MemoryLayout.sequenceLayout(256, hf3fs_usrbio_h.C_CHAR).withName("mount_point"),
        hf3fs_usrbio_h.C_LONG.withName("size"),
        hf3fs_usrbio_h.C_LONG.withName("block_size"),
        hf3fs_usrbio_h.C_INT.withName("numa"),
        MemoryLayout.paddingLayout(4)
    ).withName("hf3fs_iov");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final AddressLayout base$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("base"));

    public static final AddressLayout base$layout() {
        return base$LAYOUT;
    }

    private static final long base$OFFSET = 0;

    public static final long base$offset() {
        return base$OFFSET;
    }

    public static MemorySegment base(MemorySegment struct) {
        return struct.get(base$LAYOUT, base$OFFSET);
    }

    public static void base(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(base$LAYOUT, base$OFFSET, fieldValue);
    }

    private static final AddressLayout iovh$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("iovh"));

    public static final AddressLayout iovh$layout() {
        return iovh$LAYOUT;
    }

    private static final long iovh$OFFSET = 8;

    public static final long iovh$offset() {
        return iovh$OFFSET;
    }

    public static MemorySegment iovh(MemorySegment struct) {
        return struct.get(iovh$LAYOUT, iovh$OFFSET);
    }

    public static void iovh(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(iovh$LAYOUT, iovh$OFFSET, fieldValue);
    }

    private static final SequenceLayout id$LAYOUT = (SequenceLayout)$LAYOUT.select(groupElement("id"));

    public static final SequenceLayout id$layout() {
        return id$LAYOUT;
    }

    private static final long id$OFFSET = 16;

    public static final long id$offset() {
        return id$OFFSET;
    }

    public static MemorySegment id(MemorySegment struct) {
        return struct.asSlice(id$OFFSET, id$LAYOUT.byteSize());
    }

    public static void id(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, id$OFFSET, id$LAYOUT.byteSize());
    }

    private static final SequenceLayout mount_point$LAYOUT = (SequenceLayout)$LAYOUT.select(groupElement("mount_point"));

    public static final SequenceLayout mount_point$layout() {
        return mount_point$LAYOUT;
    }

    private static final long mount_point$OFFSET = 32;

    public static final long mount_point$offset() {
        return mount_point$OFFSET;
    }

    public static MemorySegment mount_point(MemorySegment struct) {
        return struct.asSlice(mount_point$OFFSET, mount_point$LAYOUT.byteSize());
    }

    public static void mount_point(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, mount_point$OFFSET, mount_point$LAYOUT.byteSize());
    }

    private static final OfLong size$LAYOUT = (OfLong)$LAYOUT.select(groupElement("size"));

    public static final OfLong size$layout() {
        return size$LAYOUT;
    }

    private static final long size$OFFSET = 288;

    public static final long size$offset() {
        return size$OFFSET;
    }

    public static long size(MemorySegment struct) {
        return struct.get(size$LAYOUT, size$OFFSET);
    }

    public static void size(MemorySegment struct, long fieldValue) {
        struct.set(size$LAYOUT, size$OFFSET, fieldValue);
    }

    private static final OfLong block_size$LAYOUT = (OfLong)$LAYOUT.select(groupElement("block_size"));

    public static final OfLong block_size$layout() {
        return block_size$LAYOUT;
    }

    private static final long block_size$OFFSET = 296;

    public static final long block_size$offset() {
        return block_size$OFFSET;
    }

    public static long block_size(MemorySegment struct) {
        return struct.get(block_size$LAYOUT, block_size$OFFSET);
    }

    public static void block_size(MemorySegment struct, long fieldValue) {
        struct.set(block_size$LAYOUT, block_size$OFFSET, fieldValue);
    }

    private static final OfInt numa$LAYOUT = (OfInt)$LAYOUT.select(groupElement("numa"));

    public static final OfInt numa$layout() {
        return numa$LAYOUT;
    }

    private static final long numa$OFFSET = 304;

    public static final long numa$offset() {
        return numa$OFFSET;
    }

    public static int numa(MemorySegment struct) {
        return struct.get(numa$LAYOUT, numa$OFFSET);
    }

    public static void numa(MemorySegment struct, int fieldValue) {
        struct.set(numa$LAYOUT, numa$OFFSET, fieldValue);
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
