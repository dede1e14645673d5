// Generated in the shape of jextract 22 from store_c.h (Mooncake 3b5a594), written by hand like the functions of
// store_c_h (see plugins/mooncake/scripts/gen-bindings.py). Offsets are gcc's on x86-64 and aarch64 (LP64).

package io.kvtier.tier.mooncake.bindings;

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
 * struct mooncake_replicate_config {
 *     size_t replica_num;
 *     int with_soft_pin;
 *     int with_hard_pin;
 *     const char **preferred_segments;
 *     size_t preferred_segments_count;
 * }
 * }
 * Also {@code mooncake_replicate_config_t}, its typedef.
 */
public class mooncake_replicate_config {

    mooncake_replicate_config() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        store_c_h.C_LONG.withName("replica_num"),
        store_c_h.C_INT.withName("with_soft_pin"),
        store_c_h.C_INT.withName("with_hard_pin"),
        store_c_h.C_POINTER.withName("preferred_segments"),
        store_c_h.C_LONG.withName("preferred_segments_count")
    ).withName("mooncake_replicate_config");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final OfLong replica_num$LAYOUT = (OfLong)$LAYOUT.select(groupElement("replica_num"));

    public static final OfLong replica_num$layout() {
        return replica_num$LAYOUT;
    }

    private static final long replica_num$OFFSET = 0;

    public static final long replica_num$offset() {
        return replica_num$OFFSET;
    }

    public static long replica_num(MemorySegment struct) {
        return struct.get(replica_num$LAYOUT, replica_num$OFFSET);
    }

    public static void replica_num(MemorySegment struct, long fieldValue) {
        struct.set(replica_num$LAYOUT, replica_num$OFFSET, fieldValue);
    }

    private static final OfInt with_soft_pin$LAYOUT = (OfInt)$LAYOUT.select(groupElement("with_soft_pin"));

    public static final OfInt with_soft_pin$layout() {
        return with_soft_pin$LAYOUT;
    }

    private static final long with_soft_pin$OFFSET = 8;

    public static final long with_soft_pin$offset() {
        return with_soft_pin$OFFSET;
    }

    public static int with_soft_pin(MemorySegment struct) {
        return struct.get(with_soft_pin$LAYOUT, with_soft_pin$OFFSET);
    }

    public static void with_soft_pin(MemorySegment struct, int fieldValue) {
        struct.set(with_soft_pin$LAYOUT, with_soft_pin$OFFSET, fieldValue);
    }

    private static final OfInt with_hard_pin$LAYOUT = (OfInt)$LAYOUT.select(groupElement("with_hard_pin"));

    public static final OfInt with_hard_pin$layout() {
        return with_hard_pin$LAYOUT;
    }

    private static final long with_hard_pin$OFFSET = 12;

    public static final long with_hard_pin$offset() {
        return with_hard_pin$OFFSET;
    }

    public static int with_hard_pin(MemorySegment struct) {
        return struct.get(with_hard_pin$LAYOUT, with_hard_pin$OFFSET);
    }

    public static void with_hard_pin(MemorySegment struct, int fieldValue) {
        struct.set(with_hard_pin$LAYOUT, with_hard_pin$OFFSET, fieldValue);
    }

    private static final AddressLayout preferred_segments$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("preferred_segments"));

    public static final AddressLayout preferred_segments$layout() {
        return preferred_segments$LAYOUT;
    }

    private static final long preferred_segments$OFFSET = 16;

    public static final long preferred_segments$offset() {
        return preferred_segments$OFFSET;
    }

    public static MemorySegment preferred_segments(MemorySegment struct) {
        return struct.get(preferred_segments$LAYOUT, preferred_segments$OFFSET);
    }

    public static void preferred_segments(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(preferred_segments$LAYOUT, preferred_segments$OFFSET, fieldValue);
    }

    private static final OfLong preferred_segments_count$LAYOUT = (OfLong)$LAYOUT.select(groupElement("preferred_segments_count"));

    public static final OfLong preferred_segments_count$layout() {
        return preferred_segments_count$LAYOUT;
    }

    private static final long preferred_segments_count$OFFSET = 24;

    public static final long preferred_segments_count$offset() {
        return preferred_segments_count$OFFSET;
    }

    public static long preferred_segments_count(MemorySegment struct) {
        return struct.get(preferred_segments_count$LAYOUT, preferred_segments_count$OFFSET);
    }

    public static void preferred_segments_count(MemorySegment struct, long fieldValue) {
        struct.set(preferred_segments_count$LAYOUT, preferred_segments_count$OFFSET, fieldValue);
    }

    /**
     * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
     * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
     */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index);
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
