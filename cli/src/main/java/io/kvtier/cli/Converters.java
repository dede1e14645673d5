package io.kvtier.cli;

import io.kvtier.spi.ConfigValues;
import picocli.CommandLine;

import java.time.Duration;

/**
 * picocli converters for the value syntaxes engine settings use, so that an option such as
 * {@code --watch 1s} or {@code --pool-size 24MiB} reads the same as a setting, and a bad value is a
 * usage error naming the option and the value. {@link Main} registers them for every command.
 */
final class Converters
{
    private Converters()
    {
    }

    /** Durations with a unit: {@code 500ms}, {@code 10s}; {@code 0} needs none. */
    static final class DurationConverter implements CommandLine.ITypeConverter<Duration>
    {
        @Override
        public Duration convert(final String text)
        {
            try
            {
                return ConfigValues.parseDuration(text);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("'" + text + "' is not a duration: expected " + ConfigValues.DURATION_SYNTAX);
            }
        }
    }

    /** Sizes with binary or decimal units: {@code 16KiB}, {@code 4GB}, or bytes. */
    static final class SizeConverter implements CommandLine.ITypeConverter<ByteSize>
    {
        @Override
        public ByteSize convert(final String text)
        {
            try
            {
                return new ByteSize(ConfigValues.parseSize(text));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("'" + text + "' is not a size: expected " + ConfigValues.SIZE_SYNTAX);
            }
        }
    }

    /**
     * @param commandLine a command and its subcommands
     * @return the command line, with the converters registered on it and every subcommand
     */
    static CommandLine register(final CommandLine commandLine)
    {
        return commandLine.registerConverter(Duration.class, new DurationConverter())
            .registerConverter(ByteSize.class, new SizeConverter());
    }
}
