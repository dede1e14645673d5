package io.kvtier.engine.config;

import java.io.IOException;
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
 */
public final class ConfigFile
{
    private ConfigFile()
    {
    }

    /**
     * @param file the settings file
     * @return the settings in file order
     * @throws ConfigException naming the file and line of a syntax error or repeated key, or an unreadable file
     */
    public static Map<String, String> read(final Path file)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        }
        catch (final NoSuchFileException ex)
        {
            throw new ConfigException(null, "config file " + file + " does not exist", ex);
        }
        catch (final IOException ex)
        {
            throw new ConfigException(null, "cannot read config file " + file + ": " + ex.getMessage(), ex);
        }
        return parse(file.toString(), lines);
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
