package io.kvtier.cli;

import io.kvtier.spi.ConfigValues;

/**
 * A size option's value: bytes, written with the units of engine settings ({@code 24MiB}, {@code 4GB}).
 * Options of this type are parsed by the converter {@link Main} registers.
 *
 * @param bytes the size in bytes
 */
record ByteSize(long bytes)
{
    /** @return the size in the largest binary unit that keeps it exact, e.g. {@code 16KiB}, as engine settings take it */
    @Override
    public String toString()
    {
        return ConfigValues.formatSize(bytes);
    }
}
