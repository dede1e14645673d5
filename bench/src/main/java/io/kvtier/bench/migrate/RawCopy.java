package io.kvtier.bench.migrate;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The baseline of a migration's throughput: files of a page's size in L3 copied from one directory to
 * another with plain NIO, the way the POSIX tier writes a page (a temp file written whole, forced to disk
 * when the tier's {@code fsync} is on, then renamed into place), and the source file removed, as a
 * migration under {@code move} removes the source's copy. No verification, no frame, no index: what the
 * filesystem alone costs for the same files.
 */
final class RawCopy
{
    private RawCopy()
    {
    }

    /**
     * Writes {@code count} source files of {@code fileBytes} each into {@code from} (untimed set-up).
     *
     * @return the files, in order
     */
    static List<Path> prepare(final Path from, final int count, final int fileBytes) throws IOException
    {
        Files.createDirectories(from);
        final ByteBuffer buffer = ByteBuffer.allocateDirect(fileBytes);
        for (int i = 0; i < fileBytes; i++)
        {
            buffer.put(i, (byte)(i * 31 + 7));
        }
        final List<Path> files = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final Path file = from.resolve(String.format("%08x.kvp", i));
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
            {
                buffer.clear();
                writeFully(channel, buffer);
            }
            files.add(file);
        }
        return files;
    }

    /**
     * Copies every file into {@code to} on {@code threads} threads, each taking the next file, and
     * removes the sources.
     *
     * @return nanoseconds taken
     */
    static long copy(final List<Path> files, final Path to, final int fileBytes, final boolean fsync, final int threads)
        throws IOException, InterruptedException
    {
        Files.createDirectories(to);
        final AtomicInteger next = new AtomicInteger();
        final ExecutorService workers = Executors.newFixedThreadPool(threads);
        try
        {
            final List<Future<Void>> done = new ArrayList<>(threads);
            final long start = System.nanoTime();
            for (int t = 0; t < threads; t++)
            {
                done.add(workers.submit(() ->
                {
                    final ByteBuffer buffer = ByteBuffer.allocateDirect(fileBytes);
                    for (int i = next.getAndIncrement(); i < files.size(); i = next.getAndIncrement())
                    {
                        copyOne(files.get(i), to, buffer, fsync);
                    }
                    return null;
                }));
            }
            for (final Future<Void> future : done)
            {
                future.get();
            }
            return System.nanoTime() - start;
        }
        catch (final ExecutionException ex)
        {
            throw ex.getCause() instanceof IOException io ? io : new IOException("a raw copy failed: " + ex.getCause(), ex.getCause());
        }
        finally
        {
            workers.shutdownNow();
        }
    }

    private static void copyOne(final Path source, final Path to, final ByteBuffer buffer, final boolean fsync) throws IOException
    {
        buffer.clear();
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ))
        {
            while (buffer.hasRemaining())
            {
                if (in.read(buffer) < 0)
                {
                    throw new IOException(source + " is shorter than " + buffer.capacity() + " bytes");
                }
            }
        }
        buffer.flip();
        final Path name = source.getFileName();
        final Path temp = to.resolve(name + ".tmp");
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
        {
            writeFully(out, buffer);
            if (fsync)
            {
                out.force(false);
            }
        }
        // ATOMIC_MOVE is rename(2), as the tier's.
        Files.move(temp, to.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        Files.delete(source);
    }

    private static void writeFully(final FileChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }
}
