package io.kvtier.nativeaccess.uring.bindings;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.ValueLayout.OfByte;
import java.lang.foreign.ValueLayout.OfInt;
import java.lang.foreign.ValueLayout.OfLong;
import java.lang.foreign.ValueLayout.OfShort;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * {@code struct io_uring_sqe}: a submission queue entry, 64 bytes, with the members kvtier uses (one
 * anonymous union: the operation's flags word). In the shape jextract generates (layout, {@code x$layout()},
 * {@code x$offset()}, {@code x(struct)} and {@code x(struct, value)} per field); see {@link io_uring_h}.
 */
public final class io_uring_sqe
{
    private io_uring_sqe()
    {
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        io_uring_h.C_CHAR.withName("opcode"),
        io_uring_h.C_CHAR.withName("flags"),
        io_uring_h.C_SHORT.withName("ioprio"),
        io_uring_h.C_INT.withName("fd"),
        io_uring_h.C_LONG_LONG.withName("off"),
        io_uring_h.C_LONG_LONG.withName("addr"),
        io_uring_h.C_INT.withName("len"),
        MemoryLayout.unionLayout(
            io_uring_h.C_INT.withName("rw_flags"),
            io_uring_h.C_INT.withName("fsync_flags")).withName("$anon$0"),
        io_uring_h.C_LONG_LONG.withName("user_data"),
        io_uring_h.C_SHORT.withName("buf_index"),
        io_uring_h.C_SHORT.withName("personality"),
        io_uring_h.C_INT.withName("file_index"),
        io_uring_h.C_LONG_LONG.withName("addr3"),
        MemoryLayout.sequenceLayout(1, io_uring_h.C_LONG_LONG).withName("__pad2")
    ).withName("io_uring_sqe");

    /** @return the struct's layout */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    private static final OfByte opcode$LAYOUT = (OfByte)$LAYOUT.select(groupElement("opcode"));

    /** @return the layout of {@code opcode} */
    public static OfByte opcode$layout()
    {
        return opcode$LAYOUT;
    }

    private static final long opcode$OFFSET = 0;

    /** @return the offset of {@code opcode} */
    public static long opcode$offset()
    {
        return opcode$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code opcode}
     */
    public static byte opcode(final MemorySegment struct)
    {
        return struct.get(opcode$LAYOUT, opcode$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code opcode}
     */
    public static void opcode(final MemorySegment struct, final byte fieldValue)
    {
        struct.set(opcode$LAYOUT, opcode$OFFSET, fieldValue);
    }

    private static final OfByte flags$LAYOUT = (OfByte)$LAYOUT.select(groupElement("flags"));

    /** @return the layout of {@code flags} */
    public static OfByte flags$layout()
    {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 1;

    /** @return the offset of {@code flags} */
    public static long flags$offset()
    {
        return flags$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code flags}
     */
    public static byte flags(final MemorySegment struct)
    {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code flags}
     */
    public static void flags(final MemorySegment struct, final byte fieldValue)
    {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    private static final OfShort ioprio$LAYOUT = (OfShort)$LAYOUT.select(groupElement("ioprio"));

    /** @return the layout of {@code ioprio} */
    public static OfShort ioprio$layout()
    {
        return ioprio$LAYOUT;
    }

    private static final long ioprio$OFFSET = 2;

    /** @return the offset of {@code ioprio} */
    public static long ioprio$offset()
    {
        return ioprio$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code ioprio}
     */
    public static short ioprio(final MemorySegment struct)
    {
        return struct.get(ioprio$LAYOUT, ioprio$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code ioprio}
     */
    public static void ioprio(final MemorySegment struct, final short fieldValue)
    {
        struct.set(ioprio$LAYOUT, ioprio$OFFSET, fieldValue);
    }

    private static final OfInt fd$LAYOUT = (OfInt)$LAYOUT.select(groupElement("fd"));

    /** @return the layout of {@code fd} */
    public static OfInt fd$layout()
    {
        return fd$LAYOUT;
    }

    private static final long fd$OFFSET = 4;

    /** @return the offset of {@code fd} */
    public static long fd$offset()
    {
        return fd$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code fd}
     */
    public static int fd(final MemorySegment struct)
    {
        return struct.get(fd$LAYOUT, fd$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code fd}
     */
    public static void fd(final MemorySegment struct, final int fieldValue)
    {
        struct.set(fd$LAYOUT, fd$OFFSET, fieldValue);
    }

    private static final OfLong off$LAYOUT = (OfLong)$LAYOUT.select(groupElement("off"));

    /** @return the layout of {@code off} */
    public static OfLong off$layout()
    {
        return off$LAYOUT;
    }

    private static final long off$OFFSET = 8;

    /** @return the offset of {@code off} */
    public static long off$offset()
    {
        return off$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code off}
     */
    public static long off(final MemorySegment struct)
    {
        return struct.get(off$LAYOUT, off$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code off}
     */
    public static void off(final MemorySegment struct, final long fieldValue)
    {
        struct.set(off$LAYOUT, off$OFFSET, fieldValue);
    }

    private static final OfLong addr$LAYOUT = (OfLong)$LAYOUT.select(groupElement("addr"));

    /** @return the layout of {@code addr} */
    public static OfLong addr$layout()
    {
        return addr$LAYOUT;
    }

    private static final long addr$OFFSET = 16;

    /** @return the offset of {@code addr} */
    public static long addr$offset()
    {
        return addr$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code addr}
     */
    public static long addr(final MemorySegment struct)
    {
        return struct.get(addr$LAYOUT, addr$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code addr}
     */
    public static void addr(final MemorySegment struct, final long fieldValue)
    {
        struct.set(addr$LAYOUT, addr$OFFSET, fieldValue);
    }

    private static final OfInt len$LAYOUT = (OfInt)$LAYOUT.select(groupElement("len"));

    /** @return the layout of {@code len} */
    public static OfInt len$layout()
    {
        return len$LAYOUT;
    }

    private static final long len$OFFSET = 24;

    /** @return the offset of {@code len} */
    public static long len$offset()
    {
        return len$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code len}
     */
    public static int len(final MemorySegment struct)
    {
        return struct.get(len$LAYOUT, len$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code len}
     */
    public static void len(final MemorySegment struct, final int fieldValue)
    {
        struct.set(len$LAYOUT, len$OFFSET, fieldValue);
    }

    private static final OfInt rw_flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("$anon$0"), groupElement("rw_flags"));

    /** @return the layout of {@code rw_flags} */
    public static OfInt rw_flags$layout()
    {
        return rw_flags$LAYOUT;
    }

    private static final long rw_flags$OFFSET = 28;

    /** @return the offset of {@code rw_flags} */
    public static long rw_flags$offset()
    {
        return rw_flags$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code rw_flags}
     */
    public static int rw_flags(final MemorySegment struct)
    {
        return struct.get(rw_flags$LAYOUT, rw_flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code rw_flags}
     */
    public static void rw_flags(final MemorySegment struct, final int fieldValue)
    {
        struct.set(rw_flags$LAYOUT, rw_flags$OFFSET, fieldValue);
    }

    private static final OfInt fsync_flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("$anon$0"), groupElement("fsync_flags"));

    /** @return the layout of {@code fsync_flags} */
    public static OfInt fsync_flags$layout()
    {
        return fsync_flags$LAYOUT;
    }

    private static final long fsync_flags$OFFSET = 28;

    /** @return the offset of {@code fsync_flags} */
    public static long fsync_flags$offset()
    {
        return fsync_flags$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code fsync_flags}
     */
    public static int fsync_flags(final MemorySegment struct)
    {
        return struct.get(fsync_flags$LAYOUT, fsync_flags$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code fsync_flags}
     */
    public static void fsync_flags(final MemorySegment struct, final int fieldValue)
    {
        struct.set(fsync_flags$LAYOUT, fsync_flags$OFFSET, fieldValue);
    }

    private static final OfLong user_data$LAYOUT = (OfLong)$LAYOUT.select(groupElement("user_data"));

    /** @return the layout of {@code user_data} */
    public static OfLong user_data$layout()
    {
        return user_data$LAYOUT;
    }

    private static final long user_data$OFFSET = 32;

    /** @return the offset of {@code user_data} */
    public static long user_data$offset()
    {
        return user_data$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code user_data}
     */
    public static long user_data(final MemorySegment struct)
    {
        return struct.get(user_data$LAYOUT, user_data$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code user_data}
     */
    public static void user_data(final MemorySegment struct, final long fieldValue)
    {
        struct.set(user_data$LAYOUT, user_data$OFFSET, fieldValue);
    }

    private static final OfShort buf_index$LAYOUT = (OfShort)$LAYOUT.select(groupElement("buf_index"));

    /** @return the layout of {@code buf_index} */
    public static OfShort buf_index$layout()
    {
        return buf_index$LAYOUT;
    }

    private static final long buf_index$OFFSET = 40;

    /** @return the offset of {@code buf_index} */
    public static long buf_index$offset()
    {
        return buf_index$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code buf_index}
     */
    public static short buf_index(final MemorySegment struct)
    {
        return struct.get(buf_index$LAYOUT, buf_index$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code buf_index}
     */
    public static void buf_index(final MemorySegment struct, final short fieldValue)
    {
        struct.set(buf_index$LAYOUT, buf_index$OFFSET, fieldValue);
    }

    private static final OfShort personality$LAYOUT = (OfShort)$LAYOUT.select(groupElement("personality"));

    /** @return the layout of {@code personality} */
    public static OfShort personality$layout()
    {
        return personality$LAYOUT;
    }

    private static final long personality$OFFSET = 42;

    /** @return the offset of {@code personality} */
    public static long personality$offset()
    {
        return personality$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code personality}
     */
    public static short personality(final MemorySegment struct)
    {
        return struct.get(personality$LAYOUT, personality$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code personality}
     */
    public static void personality(final MemorySegment struct, final short fieldValue)
    {
        struct.set(personality$LAYOUT, personality$OFFSET, fieldValue);
    }

    private static final OfInt file_index$LAYOUT = (OfInt)$LAYOUT.select(groupElement("file_index"));

    /** @return the layout of {@code file_index} */
    public static OfInt file_index$layout()
    {
        return file_index$LAYOUT;
    }

    private static final long file_index$OFFSET = 44;

    /** @return the offset of {@code file_index} */
    public static long file_index$offset()
    {
        return file_index$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code file_index}
     */
    public static int file_index(final MemorySegment struct)
    {
        return struct.get(file_index$LAYOUT, file_index$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code file_index}
     */
    public static void file_index(final MemorySegment struct, final int fieldValue)
    {
        struct.set(file_index$LAYOUT, file_index$OFFSET, fieldValue);
    }

    private static final OfLong addr3$LAYOUT = (OfLong)$LAYOUT.select(groupElement("addr3"));

    /** @return the layout of {@code addr3} */
    public static OfLong addr3$layout()
    {
        return addr3$LAYOUT;
    }

    private static final long addr3$OFFSET = 48;

    /** @return the offset of {@code addr3} */
    public static long addr3$offset()
    {
        return addr3$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return its {@code addr3}
     */
    public static long addr3(final MemorySegment struct)
    {
        return struct.get(addr3$LAYOUT, addr3$OFFSET);
    }

    /**
     * @param struct     a {@code io_uring_sqe}
     * @param fieldValue the new {@code addr3}
     */
    public static void addr3(final MemorySegment struct, final long fieldValue)
    {
        struct.set(addr3$LAYOUT, addr3$OFFSET, fieldValue);
    }

    private static final SequenceLayout __pad2$LAYOUT = (SequenceLayout)$LAYOUT.select(groupElement("__pad2"));

    /** @return the layout of {@code __pad2} */
    public static SequenceLayout __pad2$layout()
    {
        return __pad2$LAYOUT;
    }

    private static final long __pad2$OFFSET = 56;

    /** @return the offset of {@code __pad2} */
    public static long __pad2$offset()
    {
        return __pad2$OFFSET;
    }

    /**
     * @param struct a {@code io_uring_sqe}
     * @return a slice over its {@code __pad2}
     */
    public static MemorySegment __pad2(final MemorySegment struct)
    {
        return struct.asSlice(__pad2$OFFSET, __pad2$LAYOUT.byteSize());
    }

    /** @return the struct's size in bytes */
    public static long sizeof()
    {
        return layout().byteSize();
    }

    /**
     * @param allocator where from
     * @return a new, zeroed {@code io_uring_sqe}
     */
    public static MemorySegment allocate(final SegmentAllocator allocator)
    {
        return allocator.allocate(layout());
    }

    /**
     * @param elementCount how many
     * @param allocator    where from
     * @return a new, zeroed array of {@code io_uring_sqe}
     */
    public static MemorySegment allocateArray(final long elementCount, final SegmentAllocator allocator)
    {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * @param array an array of {@code io_uring_sqe}
     * @param index an element's index
     * @return a slice over that element
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(layout().byteSize() * index, layout().byteSize());
    }
}
