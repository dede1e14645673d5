package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct iovec}: {@code struct iovec} of {@code <sys/uio.h>}: the element of the array {@code IORING_REGISTER_BUFFERS} takes. In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class iovec
{
    private iovec()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_POINTER.withName("iov_base"),
        io_uring_h.C_LONG.withName("iov_len")
    ).withName("iovec");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final AddressLayout iov_base$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("iov_base"));

    /** @return the layout of {@code iov_base} */
    public static AddressLayout iov_base$layout()
    {
        return iov_base$LAYOUT;
    }

    private static final long iov_base$OFFSET = 0;

    /** @return the offset of {@code iov_base} */
    public static long iov_base$offset()
    {
        return iov_base$OFFSET;
    }

    /**
     * @param struct a {@code iovec}
     * @return its {@code iov_base}
     */
    public static MemorySegment iov_base(final MemorySegment struct)
    {
        return struct.get(iov_base$LAYOUT, iov_base$OFFSET);
    }

    /**
     * @param struct     a {@code iovec}
     * @param fieldValue the new {@code iov_base}
     */
    public static void iov_base(final MemorySegment struct, final MemorySegment fieldValue)
    {
        struct.set(iov_base$LAYOUT, iov_base$OFFSET, fieldValue);
    }

    private static final OfLong iov_len$LAYOUT = (OfLong)$LAYOUT.select(groupElement("iov_len"));

    /** @return the layout of {@code iov_len} */
    public static OfLong iov_len$layout()
    {
        return iov_len$LAYOUT;
    }

    private static final long iov_len$OFFSET = 8;

    /** @return the offset of {@code iov_len} */
    public static long iov_len$offset()
    {
        return iov_len$OFFSET;
    }

    /**
     * @param struct a {@code iovec}
     * @return its {@code iov_len}
     */
    public static long iov_len(final MemorySegment struct)
    {
        return struct.get(iov_len$LAYOUT, iov_len$OFFSET);
    }

    /**
     * @param struct     a {@code iovec}
     * @param fieldValue the new {@code iov_len}
     */
    public static void iov_len(final MemorySegment struct, final long fieldValue)
    {
        struct.set(iov_len$LAYOUT, iov_len$OFFSET, fieldValue);
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code iovec}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code iovec}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code iovec}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
