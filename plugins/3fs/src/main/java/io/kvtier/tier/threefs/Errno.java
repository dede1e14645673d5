package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;

/** errno values the tier tells apart, and their text for logs. */
final class Errno
{
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EAGAIN = 11;
    static final int ENOSPC = 28;
    static final int ETIMEDOUT = 110;
    static final int EDQUOT = 122;

    private Errno()
    {
    }

    /**
     * @param errno a positive errno
     * @return its name and text, such as {@code errno 5 (Input/output error)}
     */
    static String describe(final int errno)
    {
        return "errno " + errno + LibC.instance().map(libc -> " (" + libc.strerror(errno) + ")").orElse("");
    }
}
