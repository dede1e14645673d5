package io.kvtier.bench.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The baseline's shared file: two 64-bit sequence words, each on a cache line of its own (at the
 * same offsets as the request ring's Tail and Head in docs/ipc-protocol.md), mapped the way the
 * protocol maps its ring file: {@code FileChannel.map} of a file in /dev/shm.
 *
 * <pre>
 *   0  magic "KVTPING1" (u64)
 *  64  ping: the sequence the pinger last sent   (pinger writes, release)
 * 128  pong: the sequence the echo last answered (echo writes, release)
 * 192  futex ping (u32): the same, for the wake-up baseline (pinger writes, release, then FUTEX_WAKE)
 * 256  futex pong (u32): the same                             (echo writes, release, then FUTEX_WAKE)
 * </pre>
 */
final class PingPongFile implements AutoCloseable
{
    static final long MAGIC = 0x31474E4950545648L;
    static final long SIZE = 4096;
    static final long PING = 64;
    static final long PONG = 128;
    static final long FUTEX_PING = 192;
    static final long FUTEX_PONG = 256;
    /** Written into ping to tell the echo to exit. */
    static final long STOP = -1;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Arena arena;
    private final MemorySegment segment;

    private PingPongFile(final Arena arena, final MemorySegment segment)
    {
        this.arena = arena;
        this.segment = segment;
    }

    /**
     * @param path   the file
     * @param create whether to create it (the pinger) or open the existing one (the echo)
     * @return the file, mapped
     * @throws IOException if it cannot be created, opened or mapped
     */
    static PingPongFile map(final Path path, final boolean create) throws IOException
    {
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = create
            ? FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE)
            : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            if (create)
            {
                channel.truncate(SIZE);
                channel.write(java.nio.ByteBuffer.allocate(1), SIZE - 1);
            }
            final MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, SIZE, arena);
            if (create)
            {
                segment.set(ValueLayout.JAVA_LONG, 0, MAGIC);
            }
            else if (segment.get(ValueLayout.JAVA_LONG, 0) != MAGIC)
            {
                arena.close();
                throw new IOException(path + " is not a ping-pong file");
            }
            return new PingPongFile(arena, segment);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (arena.scope().isAlive())
            {
                arena.close();
            }
            throw ex;
        }
    }

    long readAcquire(final long offset)
    {
        return (long)LONG.getAcquire(segment, offset);
    }

    void writeRelease(final long offset, final long value)
    {
        LONG.setRelease(segment, offset, value);
    }

    int readIntAcquire(final long offset)
    {
        return (int)INT.getAcquire(segment, offset);
    }

    void writeIntRelease(final long offset, final int value)
    {
        INT.setRelease(segment, offset, value);
    }

    /** @return the 4-byte word at {@code offset}, for a futex */
    MemorySegment word(final long offset)
    {
        return segment.asSlice(offset, 4);
    }

    @Override
    public void close()
    {
        arena.close();
    }
}
