package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.ValueLayout.OfInt;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct io_uring_params}: what {@code io_uring_setup} takes and fills in. In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class io_uring_params
{
    private io_uring_params()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_INT.withName("sq_entries"),
        io_uring_h.C_INT.withName("cq_entries"),
        io_uring_h.C_INT.withName("flags"),
        io_uring_h.C_INT.withName("sq_thread_cpu"),
        io_uring_h.C_INT.withName("sq_thread_idle"),
        io_uring_h.C_INT.withName("features"),
        io_uring_h.C_INT.withName("wq_fd"),
        MemoryLayout.sequenceLayout(3, io_uring_h.C_INT).withName("resv"),
        io_sqring_offsets.layout().withName("sq_off"),
        io_cqring_offsets.layout().withName("cq_off")
    ).withName("io_uring_params");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final OfInt sq_entries$LAYOUT = (OfInt)$LAYOUT.select(groupElement("sq_entries"));

    /** @return the layout of {@code sq_entries} */
    public static OfInt sq_entries$layout()
    {
        return sq_entries$LAYOUT;
    }

    private static final long sq_entries$OFFSET = 0;

    /** @return the offset of {@code sq_entries} */
    public static long sq_entries$offset()
    {
        return sq_entries$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code sq_entries}
     */
    public static int sq_entries(final MemorySegment struct)
    {
        return struct.get(sq_entries$LAYOUT, sq_entries$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code sq_entries}
     */
    public static void sq_entries(final MemorySegment struct, final int fieldValue)
    {
        struct.set(sq_entries$LAYOUT, sq_entries$OFFSET, fieldValue);
    }

    private static final OfInt cq_entries$LAYOUT = (OfInt)$LAYOUT.select(groupElement("cq_entries"));

    /** @return the layout of {@code cq_entries} */
    public static OfInt cq_entries$layout()
    {
        return cq_entries$LAYOUT;
    }

    private static final long cq_entries$OFFSET = 4;

    /** @return the offset of {@code cq_entries} */
    public static long cq_entries$offset()
    {
        return cq_entries$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code cq_entries}
     */
    public static int cq_entries(final MemorySegment struct)
    {
        return struct.get(cq_entries$LAYOUT, cq_entries$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code cq_entries}
     */
    public static void cq_entries(final MemorySegment struct, final int fieldValue)
    {
        struct.set(cq_entries$LAYOUT, cq_entries$OFFSET, fieldValue);
    }

    private static final OfInt flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("flags"));

    /** @return the layout of {@code flags} */
    public static OfInt flags$layout()
    {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 8;

    /** @return the offset of {@code flags} */
    public static long flags$offset()
    {
        return flags$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code flags}
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code flags}
     */
    public static void flags(final MemorySegment struct, final int fieldValue)
    {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    private static final OfInt sq_thread_cpu$LAYOUT = (OfInt)$LAYOUT.select(groupElement("sq_thread_cpu"));

    /** @return the layout of {@code sq_thread_cpu} */
    public static OfInt sq_thread_cpu$layout()
    {
        return sq_thread_cpu$LAYOUT;
    }

    private static final long sq_thread_cpu$OFFSET = 12;

    /** @return the offset of {@code sq_thread_cpu} */
    public static long sq_thread_cpu$offset()
    {
        return sq_thread_cpu$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code sq_thread_cpu}
     */
    public static int sq_thread_cpu(final MemorySegment struct)
    {
        return struct.get(sq_thread_cpu$LAYOUT, sq_thread_cpu$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code sq_thread_cpu}
     */
    public static void sq_thread_cpu(final MemorySegment struct, final int fieldValue)
    {
        struct.set(sq_thread_cpu$LAYOUT, sq_thread_cpu$OFFSET, fieldValue);
    }

    private static final OfInt sq_thread_idle$LAYOUT = (OfInt)$LAYOUT.select(groupElement("sq_thread_idle"));

    /** @return the layout of {@code sq_thread_idle} */
    public static OfInt sq_thread_idle$layout()
    {
        return sq_thread_idle$LAYOUT;
    }

    private static final long sq_thread_idle$OFFSET = 16;

    /** @return the offset of {@code sq_thread_idle} */
    public static long sq_thread_idle$offset()
    {
        return sq_thread_idle$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code sq_thread_idle}
     */
    public static int sq_thread_idle(final MemorySegment struct)
    {
        return struct.get(sq_thread_idle$LAYOUT, sq_thread_idle$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code sq_thread_idle}
     */
    public static void sq_thread_idle(final MemorySegment struct, final int fieldValue)
    {
        struct.set(sq_thread_idle$LAYOUT, sq_thread_idle$OFFSET, fieldValue);
    }

    private static final OfInt features$LAYOUT = (OfInt)$LAYOUT.select(groupElement("features"));

    /** @return the layout of {@code features} */
    public static OfInt features$layout()
    {
        return features$LAYOUT;
    }

    private static final long features$OFFSET = 20;

    /** @return the offset of {@code features} */
    public static long features$offset()
    {
        return features$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code features}
     */
    public static int features(final MemorySegment struct)
    {
        return struct.get(features$LAYOUT, features$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code features}
     */
    public static void features(final MemorySegment struct, final int fieldValue)
    {
        struct.set(features$LAYOUT, features$OFFSET, fieldValue);
    }

    private static final OfInt wq_fd$LAYOUT = (OfInt)$LAYOUT.select(groupElement("wq_fd"));

    /** @return the layout of {@code wq_fd} */
    public static OfInt wq_fd$layout()
    {
        return wq_fd$LAYOUT;
    }

    private static final long wq_fd$OFFSET = 24;

    /** @return the offset of {@code wq_fd} */
    public static long wq_fd$offset()
    {
        return wq_fd$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return its {@code wq_fd}
     */
    public static int wq_fd(final MemorySegment struct)
    {
        return struct.get(wq_fd$LAYOUT, wq_fd$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_params}
     * @param fieldValue the new {@code wq_fd}
     */
    public static void wq_fd(final MemorySegment struct, final int fieldValue)
    {
        struct.set(wq_fd$LAYOUT, wq_fd$OFFSET, fieldValue);
    }

    private static final SequenceLayout resv$LAYOUT = (SequenceLayout)$LAYOUT.select(groupElement("resv"));

    /** @return the layout of {@code resv} */
    public static SequenceLayout resv$layout()
    {
        return resv$LAYOUT;
    }

    private static final long resv$OFFSET = 28;

    /** @return the offset of {@code resv} */
    public static long resv$offset()
    {
        return resv$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return a slice over its {@code resv}
     */
    public static MemorySegment resv(final MemorySegment struct)
    {
        return struct.asSlice(resv$OFFSET, resv$LAYOUT.byteSize());
    }

    private static final GroupLayout sq_off$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("sq_off"));

    /** @return the layout of {@code sq_off} */
    public static GroupLayout sq_off$layout()
    {
        return sq_off$LAYOUT;
    }

    private static final long sq_off$OFFSET = 40;

    /** @return the offset of {@code sq_off} */
    public static long sq_off$offset()
    {
        return sq_off$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return a slice over its {@code sq_off}, a {@link io_sqring_offsets}
     */
    public static MemorySegment sq_off(final MemorySegment struct)
    {
        return struct.asSlice(sq_off$OFFSET, sq_off$LAYOUT.byteSize());
    }

    private static final GroupLayout cq_off$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("cq_off"));

    /** @return the layout of {@code cq_off} */
    public static GroupLayout cq_off$layout()
    {
        return cq_off$LAYOUT;
    }

    private static final long cq_off$OFFSET = 80;

    /** @return the offset of {@code cq_off} */
    public static long cq_off$offset()
    {
        return cq_off$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_params}
     * @return a slice over its {@code cq_off}, a {@link io_cqring_offsets}
     */
    public static MemorySegment cq_off(final MemorySegment struct)
    {
        return struct.asSlice(cq_off$OFFSET, cq_off$LAYOUT.byteSize());
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code io_uring_params}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code io_uring_params}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code io_uring_params}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
