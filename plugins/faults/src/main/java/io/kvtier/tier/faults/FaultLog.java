package io.kvtier.tier.faults;

import io.kvtier.spi.PageKey;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The fault log: one JSON object per line for every fault injected,
 * {@code {"t_ms":<epoch ms>,"kind":"bit-flip","key":"<32 hex>","op":"write"}}. A line is written, in one
 * {@code write} to a file opened for appending, before its fault takes effect, so a page destroyed by
 * the injector is named even when the engine is killed right after; an engine restarted with the same
 * file appends to it. Without a path nothing is written.
 */
final class FaultLog implements AutoCloseable
{
    private final FileChannel channel;

    private FaultLog(final FileChannel channel)
    {
        this.channel = channel;
    }

    /**
     * @param path the file, created when missing; null for no log
     * @return the log
     * @throws IOException if the file cannot be opened for appending
     */
    static FaultLog open(final Path path) throws IOException
    {
        return new FaultLog(path == null ? null
            : FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND));
    }

    /**
     * Records one fault.
     *
     * @param kind    what is injected
     * @param keyHigh the key it names (for a replace, the key whose object is replaced), high half
     * @param keyLow  its low half
     * @param op      the operation: read, write, exists or remove
     * @return true when recorded (or there is no log); false when the line could not be written, and the
     *         fault must then not be injected, or a campaign would count the page as lost by the engine
     */
    synchronized boolean record(final FaultKind kind, final long keyHigh, final long keyLow, final String op)
    {
        if (channel == null)
        {
            return true;
        }
        final String line = "{\"t_ms\":" + System.currentTimeMillis() + ",\"kind\":\"" + kind.settingName + "\",\"key\":\""
            + new PageKey(keyHigh, keyLow).toHex() + "\",\"op\":\"" + op + "\"}\n";
        final ByteBuffer bytes = ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII));
        try
        {
            while (bytes.hasRemaining())
            {
                channel.write(bytes);
            }
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    @Override
    public synchronized void close()
    {
        if (channel != null)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignored)
            {
                // Every line was written whole before its fault; nothing is buffered here.
            }
        }
    }
}
