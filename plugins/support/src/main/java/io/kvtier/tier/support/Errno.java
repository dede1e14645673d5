package io.kvtier.tier.support;

/**
 * The Linux errno values the tiers tell apart, by name. Their numbers are the kernel's ABI (the same on
 * every Linux architecture the tiers run on); their text for logs comes from the C library where a
 * tier has one, otherwise {@link #name}.
 */
public final class Errno
{
    /** No such file or directory. */
    public static final int ENOENT = 2;
    /** Input/output error. */
    public static final int EIO = 5;
    /** Try again: resource temporarily unavailable. */
    public static final int EAGAIN = 11;
    /** File exists. */
    public static final int EEXIST = 17;
    /** Invalid argument (O_DIRECT refused, among others). */
    public static final int EINVAL = 22;
    /** No space left on device. */
    public static final int ENOSPC = 28;
    /** Connection timed out. */
    public static final int ETIMEDOUT = 110;
    /** Disk quota exceeded. */
    public static final int EDQUOT = 122;

    private Errno()
    {
    }

    /**
     * @param errno a positive errno
     * @return its symbolic name, such as {@code EIO}, or {@code errno <n>} for one not named here
     */
    public static String name(final int errno)
    {
        return switch (errno)
        {
            case ENOENT -> "ENOENT";
            case EIO -> "EIO";
            case EAGAIN -> "EAGAIN";
            case EEXIST -> "EEXIST";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case ETIMEDOUT -> "ETIMEDOUT";
            case EDQUOT -> "EDQUOT";
            default -> "errno " + errno;
        };
    }
}
