package io.kvtier.tier.posix;

/**
 * How the tier's workers move page bytes, the {@code io} setting. Each path falls back to the next
 * when it cannot run here, with the reason logged: io_uring to libc (kernel without io_uring, the
 * {@code kernel.io_uring_disabled} sysctl, a seccomp filter), libc to FileChannel (native access
 * off, an architecture without a table of open flags).
 */
enum IoPath
{
    /** One io_uring per worker, page reads and writes submitted as SQEs; see {@link UringFileStore}. */
    URING("uring"),
    /** Positional system calls through FFM, straight between the pool slice and the file; see {@link LibcFileStore}. */
    LIBC("libc"),
    /** {@link java.nio.channels.FileChannel}; see {@link ChannelFileStore}. */
    CHANNEL("channel");

    final String settingValue;

    IoPath(final String settingValue)
    {
        this.settingValue = settingValue;
    }
}
