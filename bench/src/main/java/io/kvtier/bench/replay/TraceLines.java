package io.kvtier.bench.replay;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * A trace's bytes, buffered and cut into lines for {@link TraceReader}: the current line is
 * {@code buffer()[lineStart(), lineEnd())}, without its line feed. A UTF-8 byte order mark at the start
 * is skipped. Lines are handed out in place, never copied: the buffer is reused, moved and grown (for a
 * line longer than it) only when the next line does not fit, so a line's bytes stay valid until
 * {@link #next()} is called again. Not thread-safe.
 */
final class TraceLines implements AutoCloseable
{
    private final InputStream in;
    private byte[] buffer = new byte[1 << 16];
    private long bufferOffset;
    private int position;
    private int limit;
    private boolean endOfInput;
    private boolean started;
    private long lineNumber;
    private int lineStart;
    private int lineEnd;

    /**
     * @param in the trace's bytes; closed by {@link #close()}
     */
    TraceLines(final InputStream in)
    {
        this.in = in;
    }

    /**
     * Makes the next line current.
     *
     * @return false at the end of input
     * @throws IOException if the input cannot be read
     */
    boolean next() throws IOException
    {
        if (!started)
        {
            started = true;
            fill(3);
            if (limit - position >= 3 && (buffer[position] & 0xFF) == 0xEF && (buffer[position + 1] & 0xFF) == 0xBB &&
                (buffer[position + 2] & 0xFF) == 0xBF)
            {
                position += 3;
            }
        }
        int scanned = position;
        while (true)
        {
            for (int i = scanned; i < limit; i++)
            {
                if (buffer[i] == '\n')
                {
                    startLine(i);
                    position = i + 1;
                    return true;
                }
            }
            if (endOfInput)
            {
                if (position == limit)
                {
                    return false;
                }
                startLine(limit);
                position = limit;
                return true;
            }
            final int kept = limit - position;
            fill(kept + 1);
            // Only the bytes just read can hold the line feed: those before were scanned already.
            scanned = position + kept;
        }
    }

    /** Makes {@code buffer[position, end)} the current line. */
    private void startLine(final int end)
    {
        lineNumber++;
        lineStart = position;
        lineEnd = end;
    }

    /**
     * Reads until at least {@code wanted} unconsumed bytes are buffered or the input ends, moving the
     * unconsumed bytes to the front and growing the buffer for a long line.
     */
    private void fill(final int wanted) throws IOException
    {
        if (position > 0)
        {
            System.arraycopy(buffer, position, buffer, 0, limit - position);
            bufferOffset += position;
            limit -= position;
            position = 0;
        }
        if (wanted > buffer.length)
        {
            buffer = Arrays.copyOf(buffer, Math.max(wanted, 2 * buffer.length));
        }
        while (!endOfInput && limit < wanted)
        {
            final int read = in.read(buffer, limit, buffer.length - limit);
            if (read < 0)
            {
                endOfInput = true;
            }
            else
            {
                limit += read;
            }
        }
    }

    /** @return the bytes that hold the current line; another array after a later {@link #next()} may grow it */
    byte[] buffer()
    {
        return buffer;
    }

    /** @return where the current line starts in {@link #buffer()} */
    int lineStart()
    {
        return lineStart;
    }

    /** @return where the current line ends in {@link #buffer()}, its line feed excluded */
    int lineEnd()
    {
        return lineEnd;
    }

    /** @return the number of the current line, 1-based; 0 before the first */
    long lineNumber()
    {
        return lineNumber;
    }

    /** @return the position in the file of {@link #buffer()}'s first byte, so errors can name a byte's file offset */
    long bufferOffset()
    {
        return bufferOffset;
    }

    /**
     * Closes the input.
     *
     * @throws IOException if closing fails
     */
    @Override
    public void close() throws IOException
    {
        in.close();
    }
}
