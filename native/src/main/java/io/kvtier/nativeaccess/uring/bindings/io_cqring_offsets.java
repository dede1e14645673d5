package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct io_cqring_offsets}: the offsets {@code io_uring_setup} reports for the CQ ring's fields in its mapping. In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class io_cqring_offsets
{
    private io_cqring_offsets()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_INT.withName("head"),
        io_uring_h.C_INT.withName("tail"),
        io_uring_h.C_INT.withName("ring_mask"),
        io_uring_h.C_INT.withName("ring_entries"),
        io_uring_h.C_INT.withName("overflow"),
        io_uring_h.C_INT.withName("cqes"),
        io_uring_h.C_INT.withName("flags"),
        io_uring_h.C_INT.withName("resv1"),
        io_uring_h.C_LONG_LONG.withName("resv2")
    ).withName("io_cqring_offsets");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final OfInt head$LAYOUT = (OfInt)$LAYOUT.select(groupElement("head"));

    /** @return the layout of {@code head} */
    public static OfInt head$layout()
    {
        return head$LAYOUT;
    }

    private static final long head$OFFSET = 0;

    /** @return the offset of {@code head} */
    public static long head$offset()
    {
        return head$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code head}
     */
    public static int head(final MemorySegment struct)
    {
        return struct.get(head$LAYOUT, head$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code head}
     */
    public static void head(final MemorySegment struct, final int fieldValue)
    {
        struct.set(head$LAYOUT, head$OFFSET, fieldValue);
    }

    private static final OfInt tail$LAYOUT = (OfInt)$LAYOUT.select(groupElement("tail"));

    /** @return the layout of {@code tail} */
    public static OfInt tail$layout()
    {
        return tail$LAYOUT;
    }

    private static final long tail$OFFSET = 4;

    /** @return the offset of {@code tail} */
    public static long tail$offset()
    {
        return tail$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code tail}
     */
    public static int tail(final MemorySegment struct)
    {
        return struct.get(tail$LAYOUT, tail$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code tail}
     */
    public static void tail(final MemorySegment struct, final int fieldValue)
    {
        struct.set(tail$LAYOUT, tail$OFFSET, fieldValue);
    }

    private static final OfInt ring_mask$LAYOUT = (OfInt)$LAYOUT.select(groupElement("ring_mask"));

    /** @return the layout of {@code ring_mask} */
    public static OfInt ring_mask$layout()
    {
        return ring_mask$LAYOUT;
    }

    private static final long ring_mask$OFFSET = 8;

    /** @return the offset of {@code ring_mask} */
    public static long ring_mask$offset()
    {
        return ring_mask$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code ring_mask}
     */
    public static int ring_mask(final MemorySegment struct)
    {
        return struct.get(ring_mask$LAYOUT, ring_mask$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code ring_mask}
     */
    public static void ring_mask(final MemorySegment struct, final int fieldValue)
    {
        struct.set(ring_mask$LAYOUT, ring_mask$OFFSET, fieldValue);
    }

    private static final OfInt ring_entries$LAYOUT = (OfInt)$LAYOUT.select(groupElement("ring_entries"));

    /** @return the layout of {@code ring_entries} */
    public static OfInt ring_entries$layout()
    {
        return ring_entries$LAYOUT;
    }

    private static final long ring_entries$OFFSET = 12;

    /** @return the offset of {@code ring_entries} */
    public static long ring_entries$offset()
    {
        return ring_entries$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code ring_entries}
     */
    public static int ring_entries(final MemorySegment struct)
    {
        return struct.get(ring_entries$LAYOUT, ring_entries$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code ring_entries}
     */
    public static void ring_entries(final MemorySegment struct, final int fieldValue)
    {
        struct.set(ring_entries$LAYOUT, ring_entries$OFFSET, fieldValue);
    }

    private static final OfInt overflow$LAYOUT = (OfInt)$LAYOUT.select(groupElement("overflow"));

    /** @return the layout of {@code overflow} */
    public static OfInt overflow$layout()
    {
        return overflow$LAYOUT;
    }

    private static final long overflow$OFFSET = 16;

    /** @return the offset of {@code overflow} */
    public static long overflow$offset()
    {
        return overflow$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code overflow}
     */
    public static int overflow(final MemorySegment struct)
    {
        return struct.get(overflow$LAYOUT, overflow$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code overflow}
     */
    public static void overflow(final MemorySegment struct, final int fieldValue)
    {
        struct.set(overflow$LAYOUT, overflow$OFFSET, fieldValue);
    }

    private static final OfInt cqes$LAYOUT = (OfInt)$LAYOUT.select(groupElement("cqes"));

    /** @return the layout of {@code cqes} */
    public static OfInt cqes$layout()
    {
        return cqes$LAYOUT;
    }

    private static final long cqes$OFFSET = 20;

    /** @return the offset of {@code cqes} */
    public static long cqes$offset()
    {
        return cqes$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code cqes}
     */
    public static int cqes(final MemorySegment struct)
    {
        return struct.get(cqes$LAYOUT, cqes$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code cqes}
     */
    public static void cqes(final MemorySegment struct, final int fieldValue)
    {
        struct.set(cqes$LAYOUT, cqes$OFFSET, fieldValue);
    }

    private static final OfInt flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("flags"));

    /** @return the layout of {@code flags} */
    public static OfInt flags$layout()
    {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 24;

    /** @return the offset of {@code flags} */
    public static long flags$offset()
    {
        return flags$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code flags}
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code flags}
     */
    public static void flags(final MemorySegment struct, final int fieldValue)
    {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    private static final OfInt resv1$LAYOUT = (OfInt)$LAYOUT.select(groupElement("resv1"));

    /** @return the layout of {@code resv1} */
    public static OfInt resv1$layout()
    {
        return resv1$LAYOUT;
    }

    private static final long resv1$OFFSET = 28;

    /** @return the offset of {@code resv1} */
    public static long resv1$offset()
    {
        return resv1$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code resv1}
     */
    public static int resv1(final MemorySegment struct)
    {
        return struct.get(resv1$LAYOUT, resv1$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code resv1}
     */
    public static void resv1(final MemorySegment struct, final int fieldValue)
    {
        struct.set(resv1$LAYOUT, resv1$OFFSET, fieldValue);
    }

    private static final OfLong resv2$LAYOUT = (OfLong)$LAYOUT.select(groupElement("resv2"));

    /** @return the layout of {@code resv2} */
    public static OfLong resv2$layout()
    {
        return resv2$LAYOUT;
    }

    private static final long resv2$OFFSET = 32;

    /** @return the offset of {@code resv2} */
    public static long resv2$offset()
    {
        return resv2$OFFSET;
    }

    /**
     * @param struct a {@code io_cqring_offsets}
     * @return its {@code resv2}
     */
    public static long resv2(final MemorySegment struct)
    {
        return struct.get(resv2$LAYOUT, resv2$OFFSET);
    }

    /**
     * @param struct     a {@code io_cqring_offsets}
     * @param fieldValue the new {@code resv2}
     */
    public static void resv2(final MemorySegment struct, final long fieldValue)
    {
        struct.set(resv2$LAYOUT, resv2$OFFSET, fieldValue);
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code io_cqring_offsets}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code io_cqring_offsets}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code io_cqring_offsets}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
