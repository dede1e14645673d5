package io.kvtier.tier.posix;

/**
 * Whether O_DIRECT is in use, shared by a tier's workers: it starts on when configured and the
 * start-up probe passed, and goes off for good, with the reason logged once, if the filesystem
 * later refuses it (EINVAL). The alignments are the directory's own, from {@code statx}
 * ({@code STATX_DIOALIGN}) where the kernel reports them, else {@link #ALIGNMENT}.
 */
final class DirectIo
{
    /** Alignment assumed for buffer addresses, lengths and file offsets when the kernel does not report it. */
    static final long ALIGNMENT = 4096;

    private final System.Logger logger;
    private final long memoryAlignment;
    private final long lengthAlignment;
    private volatile boolean active;

    /**
     * @param active whether to start with O_DIRECT
     * @param logger where the reason for turning it off goes
     */
    DirectIo(final boolean active, final System.Logger logger)
    {
        this(active, ALIGNMENT, ALIGNMENT, logger);
    }

    /**
     * @param active          whether to start with O_DIRECT
     * @param memoryAlignment alignment of buffer addresses, a power of two
     * @param lengthAlignment alignment of lengths and file offsets, a power of two
     * @param logger          where the reason for turning it off goes
     */
    DirectIo(final boolean active, final long memoryAlignment, final long lengthAlignment, final System.Logger logger)
    {
        this.active = active;
        this.memoryAlignment = memoryAlignment;
        this.lengthAlignment = lengthAlignment;
        this.logger = logger;
    }

    /** @return alignment of buffer addresses */
    long memoryAlignment()
    {
        return memoryAlignment;
    }

    /** @return alignment of lengths and file offsets */
    long lengthAlignment()
    {
        return lengthAlignment;
    }

    /** @return whether O_DIRECT is in use */
    boolean active()
    {
        return active;
    }

    /**
     * @param address a buffer's address
     * @param length  its length
     * @return whether O_DIRECT applies to this buffer: active, and address and length aligned
     */
    boolean appliesTo(final long address, final long length)
    {
        return active && (address & (memoryAlignment - 1)) == 0 && (length & (lengthAlignment - 1)) == 0;
    }

    /**
     * Turns O_DIRECT off after the filesystem refused it.
     *
     * @param what the refused call and path
     */
    synchronized void refused(final String what)
    {
        if (active)
        {
            active = false;
            logger.log(System.Logger.Level.WARNING, "direct-io turned off: the filesystem refused O_DIRECT (EINVAL) for " + what
                + "; continuing with buffered I/O");
        }
    }
}
