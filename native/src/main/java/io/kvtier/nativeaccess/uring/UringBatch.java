package io.kvtier.nativeaccess.uring;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A preallocated list of file operations that {@link Uring#execute} runs to completion: reads and
 * writes are carried on until every byte is transferred (short transfers resubmit the rest,
 * {@code EAGAIN} and {@code EINTR} resubmit the same), so each operation ends with one
 * {@link #result}: the bytes transferred (for a read, fewer than asked only at end of file), 0 for
 * an fsync, or {@code -errno}. Filling and running a batch allocates nothing.
 *
 * <p>Buffers are kept by address: a buffer must stay mapped until {@link Uring#execute} returns.
 * Operations in one batch run in any order and at once; an fsync that must follow a write goes in a
 * later batch. Not thread-safe: one thread fills a batch and runs it.
 */
public final class UringBatch
{
    /** A read into a buffer. */
    public static final byte READ = 0;
    /** A write from a buffer. */
    public static final byte WRITE = 1;
    /** {@code fsync}. */
    public static final byte FSYNC = 2;
    /** {@code fdatasync}. */
    public static final byte FDATASYNC = 3;

    final byte[] operation;
    final int[] fd;
    final boolean[] fixedFile;
    final long[] address;
    final long[] length;
    final long[] fileOffset;
    final long[] done;
    final long[] result;
    final boolean[] finished;
    int size;
    int finishedCount;
    long resubmissions;

    /**
     * @param capacity the most operations the batch holds
     */
    public UringBatch(final int capacity)
    {
        operation = new byte[capacity];
        fd = new int[capacity];
        fixedFile = new boolean[capacity];
        address = new long[capacity];
        length = new long[capacity];
        fileOffset = new long[capacity];
        done = new long[capacity];
        result = new long[capacity];
        finished = new boolean[capacity];
    }

    /** @return the most operations the batch holds */
    public int capacity()
    {
        return operation.length;
    }

    /** @return how many operations it holds */
    public int size()
    {
        return size;
    }

    /** Empties the batch for reuse. */
    public void clear()
    {
        size = 0;
        finishedCount = 0;
    }

    /**
     * @param fd         an open file descriptor
     * @param buffer     where the bytes go; its size is the count
     * @param fileOffset where in the file the first byte is
     * @return the operation's index
     */
    public int addRead(final int fd, final MemorySegment buffer, final long fileOffset)
    {
        return add(READ, fd, false, buffer.address(), buffer.byteSize(), fileOffset);
    }

    /**
     * @param fd         an open file descriptor
     * @param buffer     the bytes to write
     * @param fileOffset where in the file the first byte goes
     * @return the operation's index
     */
    public int addWrite(final int fd, final MemorySegment buffer, final long fileOffset)
    {
        return add(WRITE, fd, false, buffer.address(), buffer.byteSize(), fileOffset);
    }

    /**
     * @param fd       an open file descriptor
     * @param dataOnly true for {@code fdatasync}
     * @return the operation's index
     */
    public int addFsync(final int fd, final boolean dataOnly)
    {
        return add(dataOnly ? FDATASYNC : FSYNC, fd, false, 0, 0, 0);
    }

    /**
     * Any operation, with {@code fd} as an index into the files registered with
     * {@link Uring#registerFiles} when {@code fixedFile} is set.
     *
     * @param operation  {@link #READ}, {@link #WRITE}, {@link #FSYNC} or {@link #FDATASYNC}
     * @param fd         a file descriptor, or a registered file's index
     * @param fixedFile  whether {@code fd} is a registered file's index
     * @param address    the buffer's address (0 for an fsync)
     * @param length     the buffer's length (0 for an fsync)
     * @param fileOffset where in the file
     * @return the operation's index
     */
    public int add(final byte operation, final int fd, final boolean fixedFile, final long address, final long length,
                   final long fileOffset)
    {
        if (size == this.operation.length)
        {
            throw new IllegalStateException("batch is full: capacity=" + this.operation.length);
        }
        if (length < 0 || fileOffset < 0)
        {
            throw new IllegalArgumentException("length=" + length + ", fileOffset=" + fileOffset + ": neither may be negative");
        }
        final int i = size++;
        this.operation[i] = operation;
        this.fd[i] = fd;
        this.fixedFile[i] = fixedFile;
        this.address[i] = address;
        this.length[i] = length;
        this.fileOffset[i] = fileOffset;
        done[i] = 0;
        result[i] = 0;
        finished[i] = false;
        return i;
    }

    /**
     * @param index an operation's index
     * @return after {@link Uring#execute}: bytes transferred, 0 for an fsync, or {@code -errno}
     */
    public long result(final int index)
    {
        return result[index];
    }

    /**
     * @param index an operation's index
     * @return its kind: {@link #READ}, {@link #WRITE}, {@link #FSYNC} or {@link #FDATASYNC}
     */
    public byte operation(final int index)
    {
        return operation[index];
    }

    /**
     * @param index an operation's index
     * @return its file descriptor, or registered file's index when {@link #fixedFile} says so
     */
    public int fd(final int index)
    {
        return fd[index];
    }

    /**
     * @param index an operation's index
     * @return whether its {@link #fd} is a registered file's index
     */
    public boolean fixedFile(final int index)
    {
        return fixedFile[index];
    }

    /**
     * @param index an operation's index
     * @return its buffer's address (0 for an fsync)
     */
    public long address(final int index)
    {
        return address[index];
    }

    /**
     * @param index an operation's index
     * @return its buffer's length (0 for an fsync)
     */
    public long length(final int index)
    {
        return length[index];
    }

    /**
     * @param index an operation's index
     * @return where in the file it starts
     */
    public long fileOffset(final int index)
    {
        return fileOffset[index];
    }

    /**
     * Sets an operation's result, for a batch run by something other than {@link Uring#execute} (plain calls, another
     * kernel or user-space ring), so that whoever filled it reads the outcome the same way.
     *
     * @param index  an operation's index
     * @param result bytes transferred, 0 for an fsync, or {@code -errno}
     */
    public void complete(final int index, final long result)
    {
        this.result[index] = result;
        if (!finished[index])
        {
            finished[index] = true;
            finishedCount++;
        }
    }

    /** @return how many SQEs were submitted again to carry on a short transfer or retry EAGAIN/EINTR, since the batch was made */
    public long resubmissions()
    {
        return resubmissions;
    }

    void resetResults()
    {
        Arrays.fill(done, 0, size, 0L);
        Arrays.fill(result, 0, size, 0L);
        Arrays.fill(finished, 0, size, false);
        finishedCount = 0;
    }
}
