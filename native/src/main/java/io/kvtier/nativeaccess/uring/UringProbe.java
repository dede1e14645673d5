package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.NativeAccess;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.ENOMEM;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.ENOSYS;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.EPERM;

/**
 * Whether io_uring can be used in this process, decided once by setting up and closing a small ring,
 * and, when it cannot, which of the known refusals it was and what would enable it. Kept apart from
 * {@link Uring} because it runs once per process and only decides between io_uring and the plain
 * system calls callers fall back to; nothing here is on a ring's path.
 */
final class UringProbe
{
    private static final String ARCH = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);

    private UringProbe()
    {
    }

    /** @return the answer of the one probe this process makes, made on first use */
    static UringAvailability availability()
    {
        return Holder.RESULT;
    }

    /** Holds the answer so the probe runs on first use, once, with the class initialisation's own locking. */
    private static final class Holder
    {
        static final UringAvailability RESULT = probe();
    }

    /** Probes and logs the choice once, so an operator sees why the fallback is in use without digging. */
    private static UringAvailability probe()
    {
        final UringAvailability result = classify();
        if (result.available())
        {
            NativeAccess.logChoice("Uring", "io_uring through FFM system calls");
        }
        else
        {
            NativeAccess.logFallback("Uring", result.describe());
        }
        return result;
    }

    /** @return the answer, checking first what makes a ring impossible before trying to set one up */
    private static UringAvailability classify()
    {
        final var denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            return UringAvailability.unavailable(denied.get(), "enable native access as the reason says");
        }
        if (!ARCH.equals("amd64") && !ARCH.equals("x86_64"))
        {
            return UringAvailability.unavailable("the io_uring bindings are generated for x86_64 (system call numbers differ by"
                + " architecture), this is " + ARCH, "regenerate the bindings for this architecture with native/jextract.sh");
        }
        try (Uring ring = Uring.open(2))
        {
            return UringAvailability.AVAILABLE;
        }
        catch (final UringException ex)
        {
            return classify(ex.errno(), ex.getMessage());
        }
        catch (final LinkageError | UnsupportedOperationException | IllegalCallerException ex)
        {
            return UringAvailability.unavailable("io_uring's system calls could not be bound: " + ex, "run on Linux with glibc");
        }
    }

    /**
     * @param errno   why a probe ring failed
     * @param message the failure
     * @return what to tell the operator
     */
    static UringAvailability classify(final int errno, final String message)
    {
        if (errno == ENOSYS())
        {
            return UringAvailability.unavailable("the kernel has no io_uring: " + message,
                "run Linux 5.6 or newer built with CONFIG_IO_URING=y");
        }
        if (errno == EPERM())
        {
            return UringAvailability.unavailable("io_uring_setup was refused (EPERM), kernel.io_uring_disabled=" + sysctl("io_uring_disabled")
                + ": " + message, "sysctl -w kernel.io_uring_disabled=0 (or 1 with this user in kernel.io_uring_group),"
                + " or allow io_uring_setup in the container's seccomp profile");
        }
        if (errno == ENOMEM())
        {
            return UringAvailability.unavailable("io_uring could not lock the memory of its rings (ENOMEM): " + message,
                "raise the locked-memory limit (ulimit -l, LimitMEMLOCK= in systemd)");
        }
        return UringAvailability.unavailable(message, "see the error; io_uring needs Linux 5.6 or newer");
    }

    /**
     * @param name a {@code kernel.*} sysctl
     * @return its value, or "(unreadable)": the message must still be given when /proc is not there to say
     */
    private static String sysctl(final String name)
    {
        try
        {
            return Files.readString(Path.of("/proc/sys/kernel", name)).strip();
        }
        catch (final IOException | RuntimeException ex)
        {
            return "(unreadable)";
        }
    }
}
