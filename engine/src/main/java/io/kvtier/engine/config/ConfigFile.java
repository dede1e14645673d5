package io.kvtier.engine.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the settings file: one {@code key = value} per line, {@code #} starts a comment line, blank
 * lines are ignored, a key may appear once. Keys keep their order, which is the order of the tiers.
 * The file is UTF-8 text (a leading byte order mark is skipped); one that is not, a binary file given
 * by mistake, is refused naming the first byte that is not text and where it is.
 */
public final class ConfigFile
{
    /** The most a config file may hold: far beyond any real one, and it bounds what a wrong path (a device, a dump) makes us read. */
    static final int MAX_BYTES = 1 << 20;

    /** What a config file holds, for messages about one that does not. */
    private static final String FORMAT = "a config file is UTF-8 text, one key = value per line";

    private ConfigFile()
    {
    }

    /**
     * @param file the settings file
     * @return the settings in file order
     * @throws ConfigException naming the file and line of a syntax error or repeated key, an unreadable file,
     *         or one that is not UTF-8 text (naming the offset and line of its first NUL or non-UTF-8 byte)
     */
    public static Map<String, String> read(final Path file)
    {
        final byte[] bytes;
        try (InputStream in = Files.newInputStream(file))
        {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        catch (final NoSuchFileException ex)
        {
            throw new ConfigException(null, "config file " + file + " does not exist", ex);
        }
        catch (final IOException ex)
        {
            throw new ConfigException(null, "cannot read config file " + file + ": " + ex.getMessage(), ex);
        }
        if (bytes.length > MAX_BYTES)
        {
            throw new ConfigException(null, "config file " + file + " is larger than " + (MAX_BYTES >> 20) + " MiB: it is not a settings"
                + " file (" + FORMAT + ")");
        }
        return parse(file.toString(), text(file.toString(), bytes).lines().toList());
    }

    /**
     * @param source names the bytes in messages
     * @param bytes  a config file's bytes
     * @return its text
     * @throws ConfigException naming the source and the offset and line of a NUL byte or of the first
     *         byte that is not UTF-8, rather than the decoder's bare "Input length = 1"
     */
    static String text(final String source, final byte[] bytes)
    {
        for (int i = 0; i < bytes.length; i++)
        {
            if (bytes[i] == 0)
            {
                throw new ConfigException(null, "config file " + source + " is not a text file: byte 0x00 at offset " + i
                    + " (line " + lineAt(bytes, i) + "); " + FORMAT);
            }
        }
        final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        // UTF-8 never decodes to more chars than it has bytes.
        final CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError())
        {
            result = decoder.flush(out);
        }
        if (result.isError())
        {
            final int at = in.position();
            throw new ConfigException(null, "config file " + source + " is not valid UTF-8 at byte offset " + at + " (line " + lineAt(bytes, at)
                + String.format("): byte 0x%02x; ", bytes[at] & 0xFF) + FORMAT);
        }
        final String text = out.flip().toString();
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    /** @return the 1-based line of a byte offset */
    private static int lineAt(final byte[] bytes, final int offset)
    {
        int line = 1;
        for (int i = 0; i < offset; i++)
        {
            if (bytes[i] == '\n')
            {
                line++;
            }
        }
        return line;
    }

    /**
     * @param source names the text in messages
     * @param lines  the text
     * @return the settings in order
     * @throws ConfigException naming the source and line of a syntax error or repeated key
     */
    public static Map<String, String> parse(final String source, final List<String> lines)
    {
        final Map<String, String> values = new LinkedHashMap<>();
        final Map<String, Integer> lineOf = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final int equals = line.indexOf('=');
            if (equals <= 0)
            {
                throw new ConfigException(null, source + " line " + (i + 1) + ": expected 'key = value', got: " + line);
            }
            final String key = line.substring(0, equals).strip();
            final String value = line.substring(equals + 1).strip();
            if (!key.matches("[a-z0-9][a-z0-9._-]*"))
            {
                throw new ConfigException(key, source + " line " + (i + 1) + ": '" + key + "' is not a setting name (lowercase letters, digits, '.', '-', '_')");
            }
            final Integer earlier = lineOf.putIfAbsent(key, i + 1);
            if (earlier != null)
            {
                throw new ConfigException(key, source + " line " + (i + 1) + ": " + key + " is already set on line " + earlier);
            }
            values.put(key, value);
        }
        return values;
    }
}
