package io.kvtier.spi;

/**
 * A version of this SPI, {@code major.minor}. The major changes when the SPI changes incompatibly;
 * the minor when it gains something (a default method, a capability) that a plugin may use.
 *
 * <p>An engine runs a plugin built for the same major and a minor no newer than its own: an older
 * minor lacks only what was added since, which arrives as default methods; a newer one may call what
 * the engine does not have.
 *
 * <h2>Declaring the version a plugin was built for</h2>
 * The version must be one compiled into the plugin, not read from the SPI at run time (that would be
 * the engine's own). {@link #MAJOR} and {@link #MINOR} are compile-time constants, which javac copies
 * into the class that reads them, so a provider declares its version with:
 *
 * <pre>{@code
 * @Override
 * public SpiVersion spiVersion()
 * {
 *     return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
 * }
 * }</pre>
 *
 * A plugin may instead (or also) record it in its jar's manifest as {@value #MANIFEST_ATTRIBUTE}
 * {@code : 1.0}; the engine reads that when the provider declares nothing in code.
 *
 * @param major incompatible generations; at least 1 for a declared version
 * @param minor additions within the major
 */
public record SpiVersion(int major, int minor) implements Comparable<SpiVersion>
{
    /** The major version of this SPI. A compile-time constant: a plugin that reads it keeps the value it was compiled with. */
    public static final int MAJOR = 1;

    /** The minor version of this SPI. A compile-time constant, as {@link #MAJOR}. */
    public static final int MINOR = 3;

    /** The jar manifest attribute in which a plugin may record the SPI version it was built for, e.g. {@code 1.0}. */
    public static final String MANIFEST_ATTRIBUTE = "Kvtier-Spi-Version";

    /** What {@link StorageTierProvider#spiVersion()} returns when the provider declares nothing. */
    public static final SpiVersion UNDECLARED = new SpiVersion(0, 0);

    /**
     * @param major incompatible generations, 0 only for {@link #UNDECLARED}
     * @param minor additions within the major
     */
    public SpiVersion
    {
        if (major < 0 || minor < 0)
        {
            throw new IllegalArgumentException("SPI version " + major + "." + minor + " must not be negative");
        }
    }

    /**
     * The version of the SPI classes loaded at run time, which for an engine is its own. A plugin must
     * not use it to declare what it was built for; see the class comment.
     *
     * @return the SPI version this class was compiled as
     */
    public static SpiVersion current()
    {
        return new SpiVersion(MAJOR, MINOR);
    }

    /**
     * @param text {@code major.minor}, e.g. {@code 1.0}
     * @return the version
     * @throws IllegalArgumentException naming the text when it is not two non-negative whole numbers
     */
    public static SpiVersion parse(final String text)
    {
        final String trimmed = text == null ? "" : text.trim();
        final int dot = trimmed.indexOf('.');
        try
        {
            if (dot > 0)
            {
                return new SpiVersion(Integer.parseInt(trimmed.substring(0, dot)), Integer.parseInt(trimmed.substring(dot + 1)));
            }
        }
        catch (final IllegalArgumentException ex)
        {
            // Not numbers, or negative ones: the message below says what a version looks like.
        }
        throw new IllegalArgumentException("SPI version \"" + text + "\" is not major.minor, e.g. " + current());
    }

    /** @return whether this is a version a plugin declared, not {@link #UNDECLARED} */
    public boolean isDeclared()
    {
        return major > 0;
    }

    /**
     * @param builtFor the version a plugin was built for
     * @return whether an engine of this version runs it: the same major and a minor no newer than this one
     */
    public boolean runs(final SpiVersion builtFor)
    {
        return builtFor.isDeclared() && builtFor.major == major && builtFor.minor <= minor;
    }

    @Override
    public int compareTo(final SpiVersion other)
    {
        return major != other.major ? Integer.compare(major, other.major) : Integer.compare(minor, other.minor);
    }

    @Override
    public String toString()
    {
        return major + "." + minor;
    }
}
