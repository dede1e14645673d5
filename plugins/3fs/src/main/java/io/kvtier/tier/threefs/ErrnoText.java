package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.tier.support.Errno;

/** The text of an errno for logs: its number, name and the C library's words for it. */
final class ErrnoText
{
    private ErrnoText()
    {
    }

    /**
     * @param errno a positive errno
     * @return its number and text, such as {@code errno 5 (Input/output error)}, or with the name where
     *         the C library cannot be reached
     */
    static String describe(final int errno)
    {
        return "errno " + errno + LibC.instance().map(libc -> " (" + libc.strerror(errno) + ")").orElse(" (" + Errno.name(errno) + ")");
    }
}
