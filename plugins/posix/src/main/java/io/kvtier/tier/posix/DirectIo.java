package io.kvtier.tier.posix;

/**
 * Whether O_DIRECT is in use, shared by a tier's workers: it starts on when configured and the
 * start-up probe passed, and goes off for good, with the reason logged once, if the filesystem
 * later refuses it (EINVAL).
 */
final class DirectIo
{
    /** Alignment O_DIRECT needs of buffer addresses, lengths and file offsets. */
    static final long ALIGNMENT = 4096;

    private final System.Logger logger;
    private volatile boolean active;

    /**
     * @param active whether to start with O_DIRECT
     * @param logger where the reason for turning it off goes
     */
    DirectIo(final boolean active, final System.Logger logger)
    {
        this.active = active;
        this.logger = logger;
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
        return active && (address & (ALIGNMENT - 1)) == 0 && (length & (ALIGNMENT - 1)) == 0;
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
