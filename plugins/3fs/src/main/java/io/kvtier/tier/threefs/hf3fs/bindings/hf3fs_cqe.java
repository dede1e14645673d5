// Written by hand in the shape of jextract 22's output for plugins/3fs/include/hf3fs_usrbio.h (jextract is not
// installable on the build machines); Hf3fsAbiTest compares these layouts with gcc's.

package io.kvtier.tier.threefs.hf3fs.bindings;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@snippet lang=c :
 * struct hf3fs_cqe {
 *     int32_t index;
 *     int32_t reserved;
 *     int64_t result;
 *     const void *userdata;
 * }
 * }
 */
public class hf3fs_cqe {

    hf3fs_cqe() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        hf3fs_usrbio_h.C_INT.withName("index"),
        hf3fs_usrbio_h.C_INT.withName("reserved"),
        hf3fs_usrbio_h.C_LONG.withName("result"),
        hf3fs_usrbio_h.C_POINTER.withName("userdata")
    ).withName("hf3fs_cqe");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final OfInt index$LAYOUT = (OfInt)$LAYOUT.select(groupElement("index"));

    public static final OfInt index$layout() {
        return index$LAYOUT;
    }

    private static final long index$OFFSET = 0;

    public static final long index$offset() {
        return index$OFFSET;
    }

    public static int index(MemorySegment struct) {
        return struct.get(index$LAYOUT, index$OFFSET);
    }

    public static void index(MemorySegment struct, int fieldValue) {
        struct.set(index$LAYOUT, index$OFFSET, fieldValue);
    }

    private static final OfInt reserved$LAYOUT = (OfInt)$LAYOUT.select(groupElement("reserved"));

    public static final OfInt reserved$layout() {
        return reserved$LAYOUT;
    }

    private static final long reserved$OFFSET = 4;

    public static final long reserved$offset() {
        return reserved$OFFSET;
    }

    public static int reserved(MemorySegment struct) {
        return struct.get(reserved$LAYOUT, reserved$OFFSET);
    }

    public static void reserved(MemorySegment struct, int fieldValue) {
        struct.set(reserved$LAYOUT, reserved$OFFSET, fieldValue);
    }

    private static final OfLong result$LAYOUT = (OfLong)$LAYOUT.select(groupElement("result"));

    public static final OfLong result$layout() {
        return result$LAYOUT;
    }

    private static final long result$OFFSET = 8;

    public static final long result$offset() {
        return result$OFFSET;
    }

    public static long result(MemorySegment struct) {
        return struct.get(result$LAYOUT, result$OFFSET);
    }

    public static void result(MemorySegment struct, long fieldValue) {
        struct.set(result$LAYOUT, result$OFFSET, fieldValue);
    }

    private static final AddressLayout userdata$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("userdata"));

    public static final AddressLayout userdata$layout() {
        return userdata$LAYOUT;
    }

    private static final long userdata$OFFSET = 16;

    public static final long userdata$offset() {
        return userdata$OFFSET;
    }

    public static MemorySegment userdata(MemorySegment struct) {
        return struct.get(userdata$LAYOUT, userdata$OFFSET);
    }

    public static void userdata(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(userdata$LAYOUT, userdata$OFFSET, fieldValue);
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
