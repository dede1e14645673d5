package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct statx}: {@code struct statx} of {@code <linux/stat.h>}, 256 bytes, with accessors only for the fields kvtier reads (the rest is padding of the same size). In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class statx
{
    private statx()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_INT.withName("stx_mask"),
        io_uring_h.C_INT.withName("stx_blksize"),
        io_uring_h.C_LONG_LONG.withName("stx_attributes"),
        MemoryLayout.paddingLayout(24),
        io_uring_h.C_LONG_LONG.withName("stx_size"),
        MemoryLayout.paddingLayout(104),
        io_uring_h.C_INT.withName("stx_dio_mem_align"),
        io_uring_h.C_INT.withName("stx_dio_offset_align"),
        MemoryLayout.paddingLayout(96)
    ).withName("statx");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final OfInt stx_mask$LAYOUT = (OfInt)$LAYOUT.select(groupElement("stx_mask"));

    /** @return the layout of {@code stx_mask} */
    public static OfInt stx_mask$layout()
    {
        return stx_mask$LAYOUT;
    }

    private static final long stx_mask$OFFSET = 0;

    /** @return the offset of {@code stx_mask} */
    public static long stx_mask$offset()
    {
        return stx_mask$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_mask}
     */
    public static int stx_mask(final MemorySegment struct)
    {
        return struct.get(stx_mask$LAYOUT, stx_mask$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_mask}
     */
    public static void stx_mask(final MemorySegment struct, final int fieldValue)
    {
        struct.set(stx_mask$LAYOUT, stx_mask$OFFSET, fieldValue);
    }

    private static final OfInt stx_blksize$LAYOUT = (OfInt)$LAYOUT.select(groupElement("stx_blksize"));

    /** @return the layout of {@code stx_blksize} */
    public static OfInt stx_blksize$layout()
    {
        return stx_blksize$LAYOUT;
    }

    private static final long stx_blksize$OFFSET = 4;

    /** @return the offset of {@code stx_blksize} */
    public static long stx_blksize$offset()
    {
        return stx_blksize$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_blksize}
     */
    public static int stx_blksize(final MemorySegment struct)
    {
        return struct.get(stx_blksize$LAYOUT, stx_blksize$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_blksize}
     */
    public static void stx_blksize(final MemorySegment struct, final int fieldValue)
    {
        struct.set(stx_blksize$LAYOUT, stx_blksize$OFFSET, fieldValue);
    }

    private static final OfLong stx_attributes$LAYOUT = (OfLong)$LAYOUT.select(groupElement("stx_attributes"));

    /** @return the layout of {@code stx_attributes} */
    public static OfLong stx_attributes$layout()
    {
        return stx_attributes$LAYOUT;
    }

    private static final long stx_attributes$OFFSET = 8;

    /** @return the offset of {@code stx_attributes} */
    public static long stx_attributes$offset()
    {
        return stx_attributes$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_attributes}
     */
    public static long stx_attributes(final MemorySegment struct)
    {
        return struct.get(stx_attributes$LAYOUT, stx_attributes$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_attributes}
     */
    public static void stx_attributes(final MemorySegment struct, final long fieldValue)
    {
        struct.set(stx_attributes$LAYOUT, stx_attributes$OFFSET, fieldValue);
    }

    private static final OfLong stx_size$LAYOUT = (OfLong)$LAYOUT.select(groupElement("stx_size"));

    /** @return the layout of {@code stx_size} */
    public static OfLong stx_size$layout()
    {
        return stx_size$LAYOUT;
    }

    private static final long stx_size$OFFSET = 40;

    /** @return the offset of {@code stx_size} */
    public static long stx_size$offset()
    {
        return stx_size$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_size}
     */
    public static long stx_size(final MemorySegment struct)
    {
        return struct.get(stx_size$LAYOUT, stx_size$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_size}
     */
    public static void stx_size(final MemorySegment struct, final long fieldValue)
    {
        struct.set(stx_size$LAYOUT, stx_size$OFFSET, fieldValue);
    }

    private static final OfInt stx_dio_mem_align$LAYOUT = (OfInt)$LAYOUT.select(groupElement("stx_dio_mem_align"));

    /** @return the layout of {@code stx_dio_mem_align} */
    public static OfInt stx_dio_mem_align$layout()
    {
        return stx_dio_mem_align$LAYOUT;
    }

    private static final long stx_dio_mem_align$OFFSET = 152;

    /** @return the offset of {@code stx_dio_mem_align} */
    public static long stx_dio_mem_align$offset()
    {
        return stx_dio_mem_align$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_dio_mem_align}
     */
    public static int stx_dio_mem_align(final MemorySegment struct)
    {
        return struct.get(stx_dio_mem_align$LAYOUT, stx_dio_mem_align$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_dio_mem_align}
     */
    public static void stx_dio_mem_align(final MemorySegment struct, final int fieldValue)
    {
        struct.set(stx_dio_mem_align$LAYOUT, stx_dio_mem_align$OFFSET, fieldValue);
    }

    private static final OfInt stx_dio_offset_align$LAYOUT = (OfInt)$LAYOUT.select(groupElement("stx_dio_offset_align"));

    /** @return the layout of {@code stx_dio_offset_align} */
    public static OfInt stx_dio_offset_align$layout()
    {
        return stx_dio_offset_align$LAYOUT;
    }

    private static final long stx_dio_offset_align$OFFSET = 156;

    /** @return the offset of {@code stx_dio_offset_align} */
    public static long stx_dio_offset_align$offset()
    {
        return stx_dio_offset_align$OFFSET;
    }

    /**
     * @param struct a {@code statx}
     * @return its {@code stx_dio_offset_align}
     */
    public static int stx_dio_offset_align(final MemorySegment struct)
    {
        return struct.get(stx_dio_offset_align$LAYOUT, stx_dio_offset_align$OFFSET);
    }

    /**
     * @param struct     a {@code statx}
     * @param fieldValue the new {@code stx_dio_offset_align}
     */
    public static void stx_dio_offset_align(final MemorySegment struct, final int fieldValue)
    {
        struct.set(stx_dio_offset_align$LAYOUT, stx_dio_offset_align$OFFSET, fieldValue);
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code statx}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code statx}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code statx}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
