package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct io_uring_cqe}: a completion queue entry, 16 bytes. In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class io_uring_cqe
{
    private io_uring_cqe()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_LONG_LONG.withName("user_data"),
        io_uring_h.C_INT.withName("res"),
        io_uring_h.C_INT.withName("flags")
    ).withName("io_uring_cqe");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final OfLong user_data$LAYOUT = (OfLong)$LAYOUT.select(groupElement("user_data"));

    /** @return the layout of {@code user_data} */
    public static OfLong user_data$layout()
    {
        return user_data$LAYOUT;
    }

    private static final long user_data$OFFSET = 0;

    /** @return the offset of {@code user_data} */
    public static long user_data$offset()
    {
        return user_data$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_cqe}
     * @return its {@code user_data}
     */
    public static long user_data(final MemorySegment struct)
    {
        return struct.get(user_data$LAYOUT, user_data$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_cqe}
     * @param fieldValue the new {@code user_data}
     */
    public static void user_data(final MemorySegment struct, final long fieldValue)
    {
        struct.set(user_data$LAYOUT, user_data$OFFSET, fieldValue);
    }

    private static final OfInt res$LAYOUT = (OfInt)$LAYOUT.select(groupElement("res"));

    /** @return the layout of {@code res} */
    public static OfInt res$layout()
    {
        return res$LAYOUT;
    }

    private static final long res$OFFSET = 8;

    /** @return the offset of {@code res} */
    public static long res$offset()
    {
        return res$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_cqe}
     * @return its {@code res}
     */
    public static int res(final MemorySegment struct)
    {
        return struct.get(res$LAYOUT, res$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_cqe}
     * @param fieldValue the new {@code res}
     */
    public static void res(final MemorySegment struct, final int fieldValue)
    {
        struct.set(res$LAYOUT, res$OFFSET, fieldValue);
    }

    private static final OfInt flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("flags"));

    /** @return the layout of {@code flags} */
    public static OfInt flags$layout()
    {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 12;

    /** @return the offset of {@code flags} */
    public static long flags$offset()
    {
        return flags$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_cqe}
     * @return its {@code flags}
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_cqe}
     * @param fieldValue the new {@code flags}
     */
    public static void flags(final MemorySegment struct, final int fieldValue)
    {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code io_uring_cqe}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code io_uring_cqe}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code io_uring_cqe}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
