package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.NativeAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The Unix-domain socket front: stream sockets with the two things the JDK's channels cannot do, the
 * peer's numeric credentials ({@code SO_PEERCRED}) and descriptors passed with a message
 * ({@code SCM_RIGHTS}), plus {@code poll(2)} over any set of descriptors.
 *
 * <p>Descriptor passing is what lets the engine hand a client the files it may map without giving
 * them a name in a shared directory, so no other process can open them; and lets a client hand the
 * engine a file without the engine ever resolving a path the client chose.
 *
 * <p>Every call returns its C result when it succeeds and {@code -errno} when it fails. Sockets are
 * made non-blocking and close-on-exec, and received descriptors close-on-exec. The calls allocate
 * nothing once a thread has made its first: each thread keeps its own scratch for the message and
 * control headers.
 *
 * <p>Use {@link #instance()}: it is empty, with the reason logged once, when native access is off,
 * a symbol is missing, or the architecture has no {@link LinuxAbi} row.
 */
public final class UnixSockets
{
    /** Longest socket path, without its NUL ({@code sizeof(sun_path) - 1}). */
    public static final int MAX_PATH_BYTES = 107;
    /** Most descriptors one message may carry here (the kernel's {@code SCM_MAX_FD} is 253). */
    public static final int MAX_DESCRIPTORS = 64;

    /** {@code POLLIN}. */
    public static final short POLLIN = 0x1;
    /** {@code POLLERR}. */
    public static final short POLLERR = 0x8;
    /** {@code POLLHUP}. */
    public static final short POLLHUP = 0x10;
    /** {@code POLLNVAL}. */
    public static final short POLLNVAL = 0x20;
    /** {@code POLLRDHUP}: the peer closed its end (or shut down writing). */
    public static final short POLLRDHUP = 0x2000;

    /** {@code struct pollfd}: fd, events, revents; 8 bytes. */
    public static final StructLayout POLLFD_LAYOUT = MemoryLayout.structLayout(
        JAVA_INT.withName("fd"), ValueLayout.JAVA_SHORT.withName("events"), ValueLayout.JAVA_SHORT.withName("revents"));
    /** Offset of {@code fd} in a {@code struct pollfd}. */
    public static final long POLLFD_FD_OFFSET = 0;
    /** Offset of {@code events}. */
    public static final long POLLFD_EVENTS_OFFSET = 4;
    /** Offset of {@code revents}. */
    public static final long POLLFD_REVENTS_OFFSET = 6;

    static final int AF_UNIX = 1;
    static final int SOCK_STREAM = 1;
    static final int SOCK_NONBLOCK = 0x800;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SCM_RIGHTS = 1;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int MSG_CTRUNC = 0x8;
    static final int MSG_CMSG_CLOEXEC = 0x40000000;

    /** {@code struct sockaddr_un}: a 2-byte family, then 108 bytes of path. */
    static final StructLayout SOCKADDR_UN_LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_SHORT.withName("sun_family"), MemoryLayout.sequenceLayout(108, ValueLayout.JAVA_BYTE).withName("sun_path"));
    /** {@code struct ucred}: pid, uid, gid. */
    static final StructLayout UCRED_LAYOUT = MemoryLayout.structLayout(
        JAVA_INT.withName("pid"), JAVA_INT.withName("uid"), JAVA_INT.withName("gid"));
    /** {@code struct iovec} on 64-bit Linux. */
    static final StructLayout IOVEC_LAYOUT = MemoryLayout.structLayout(ADDRESS.withName("iov_base"), JAVA_LONG.withName("iov_len"));
    /** {@code struct msghdr} on 64-bit Linux: name, its length and 4 bytes of padding, iov, its length, control, its length, flags. */
    static final StructLayout MSGHDR_LAYOUT = MemoryLayout.structLayout(
        ADDRESS.withName("msg_name"), JAVA_INT.withName("msg_namelen"), MemoryLayout.paddingLayout(4),
        ADDRESS.withName("msg_iov"), JAVA_LONG.withName("msg_iovlen"),
        ADDRESS.withName("msg_control"), JAVA_LONG.withName("msg_controllen"),
        JAVA_INT.withName("msg_flags"), MemoryLayout.paddingLayout(4));
    /** {@code struct cmsghdr} on 64-bit Linux: a size_t length, level, type, then the data at 16. */
    static final long CMSG_LEN_OFFSET = 0;
    static final long CMSG_LEVEL_OFFSET = 8;
    static final long CMSG_TYPE_OFFSET = 12;
    static final long CMSG_DATA_OFFSET = 16;
    /** {@code CMSG_SPACE(MAX_DESCRIPTORS * sizeof(int))}. */
    static final long CONTROL_SPACE = CMSG_DATA_OFFSET + MAX_DESCRIPTORS * 4L;

    private static final long MSG_IOV_OFFSET = MSGHDR_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_iov"));
    private static final long MSG_IOVLEN_OFFSET = MSGHDR_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_iovlen"));
    private static final long MSG_CONTROL_OFFSET = MSGHDR_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_control"));
    private static final long MSG_CONTROLLEN_OFFSET = MSGHDR_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_controllen"));
    private static final long MSG_FLAGS_OFFSET = MSGHDR_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_flags"));

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final Optional<UnixSockets> INSTANCE = load();

    private final int soPeercred;
    private final MethodHandle socket$mh;
    private final MethodHandle bind$mh;
    private final MethodHandle listen$mh;
    private final MethodHandle accept4$mh;
    private final MethodHandle connect$mh;
    private final MethodHandle getsockopt$mh;
    private final MethodHandle sendmsg$mh;
    private final MethodHandle recvmsg$mh;
    private final MethodHandle poll$mh;
    private final MethodHandle close$mh;

    /** Per thread: the captured errno, a message header, one iovec, the control buffer, a sockaddr or a ucred. */
    private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch
    {
        final MemorySegment state;
        final MemorySegment message;
        final MemorySegment iovec;
        final MemorySegment control;
        final MemorySegment address;
        final MemorySegment credentials;
        final MemorySegment length;

        Scratch()
        {
            final Arena arena = Arena.ofAuto();
            state = arena.allocate(CAPTURE_LAYOUT);
            message = arena.allocate(MSGHDR_LAYOUT);
            iovec = arena.allocate(IOVEC_LAYOUT);
            control = arena.allocate(CONTROL_SPACE, 8);
            address = arena.allocate(SOCKADDR_UN_LAYOUT);
            credentials = arena.allocate(UCRED_LAYOUT);
            length = arena.allocate(JAVA_INT);
        }
    }

    private UnixSockets(final SymbolLookup libc, final int soPeercred)
    {
        this.soPeercred = soPeercred;
        socket$mh = NativeAccess.downcall(libc, "socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        bind$mh = NativeAccess.downcall(libc, "bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        listen$mh = NativeAccess.downcall(libc, "listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        accept4$mh = NativeAccess.downcall(libc, "accept4", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        connect$mh = NativeAccess.downcall(libc, "connect", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        getsockopt$mh = NativeAccess.downcall(libc, "getsockopt", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS),
            CAPTURE_ERRNO);
        sendmsg$mh = NativeAccess.downcall(libc, "sendmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        recvmsg$mh = NativeAccess.downcall(libc, "recvmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        poll$mh = NativeAccess.downcall(libc, "poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
        close$mh = NativeAccess.downcall(libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    }

    private static Optional<UnixSockets> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("UnixSockets", denied.get());
            return Optional.empty();
        }
        final Optional<LinuxAbi> abi = LinuxAbi.current();
        if (abi.isEmpty())
        {
            NativeAccess.logFallback("UnixSockets", LinuxAbi.unsupportedReason(System.getProperty("os.arch")));
            return Optional.empty();
        }
        try
        {
            final UnixSockets sockets = new UnixSockets(Linker.nativeLinker().defaultLookup(), abi.get().soPeercred());
            NativeAccess.logChoice("UnixSockets", "FFM downcalls into the process's libc");
            sockets.warmUpPoll();
            return Optional.of(sockets);
        }
        catch (final UnsupportedOperationException | IllegalCallerException | IllegalArgumentException ex)
        {
            NativeAccess.logFallback("UnixSockets", String.valueOf(ex.getMessage()));
            return Optional.empty();
        }
    }

    /**
     * Polls that return at once, one entry whose descriptor is negative, which poll(2) skips ({@link NativeAccess#warmUp}):
     * an engine polls its listening socket only once a millisecond, too seldom for the JIT to compile the call soon,
     * and until then each call allocated a slice of its errno capture (IpcAllocationTest).
     */
    private void warmUpPoll()
    {
        final MemorySegment pollfd = Arena.ofAuto().allocate(POLLFD_LAYOUT);
        pollfd.set(JAVA_INT, POLLFD_FD_OFFSET, -1);
        NativeAccess.warmUp("kvtier-poll-warmup", () -> poll(pollfd, 1, 0));
    }

    /** @return the front, or empty (reason logged) when it cannot be reached */
    public static Optional<UnixSockets> instance()
    {
        return INSTANCE;
    }

    /** @return why the front is missing, for messages, or empty when it is there */
    public static Optional<String> unavailableReason()
    {
        if (INSTANCE.isPresent())
        {
            return Optional.empty();
        }
        return Optional.of(NativeAccess.unavailableReason().orElseGet(() -> LinuxAbi.current().isEmpty()
            ? LinuxAbi.unsupportedReason(System.getProperty("os.arch")) : "libc lacks a socket call this front binds"));
    }

    private static int errno(final MemorySegment state)
    {
        return (int)ERRNO$vh.get(state, 0L);
    }

    /**
     * Fills the thread's sockaddr with {@code path}.
     *
     * @return the address length to pass, or {@code -ENAMETOOLONG}
     */
    private static int socketAddress(final MemorySegment address, final String path)
    {
        final byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_PATH_BYTES)
        {
            return -36; // ENAMETOOLONG
        }
        address.fill((byte)0);
        address.set(ValueLayout.JAVA_SHORT, 0, (short)AF_UNIX);
        MemorySegment.copy(bytes, 0, address, ValueLayout.JAVA_BYTE, 2, bytes.length);
        return 2 + bytes.length + 1;
    }

    /**
     * Creates a listening stream socket at {@code path}, non-blocking and close-on-exec. The file it
     * creates gets the mode the umask gives; restrict it before others may connect.
     *
     * @param path    where it listens (a new name)
     * @param backlog connections the kernel queues
     * @return the socket, or {@code -errno} ({@code -ENAMETOOLONG} for a path over {@value #MAX_PATH_BYTES} bytes)
     */
    public int listen(final String path, final int backlog)
    {
        final Scratch s = scratch.get();
        final int length = socketAddress(s.address, path);
        if (length < 0)
        {
            return length;
        }
        try
        {
            final int fd = (int)socket$mh.invokeExact(s.state, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
            {
                return -errno(s.state);
            }
            int rc = (int)bind$mh.invokeExact(s.state, fd, s.address, length);
            if (rc == 0)
            {
                rc = (int)listen$mh.invokeExact(s.state, fd, backlog);
            }
            if (rc != 0)
            {
                final int error = errno(s.state);
                final int ignored = (int)close$mh.invokeExact(s.state, fd);
                return -error;
            }
            return fd;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Accepts one waiting connection, non-blocking and close-on-exec.
     *
     * @param listening a socket from {@link #listen}
     * @return the connection, or {@code -errno}: {@code -EAGAIN} when none waits; {@code -EMFILE},
     *         {@code -ENFILE}, {@code -ENOBUFS}, {@code -ENOMEM} when the process or the system is out of
     *         something, with the connection left waiting
     */
    public int accept(final int listening)
    {
        final Scratch s = scratch.get();
        try
        {
            final int fd = (int)accept4$mh.invokeExact(s.state, listening, MemorySegment.NULL, MemorySegment.NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            return fd >= 0 ? fd : -errno(s.state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Connects a blocking, close-on-exec stream socket to {@code path}.
     *
     * @param path the listening socket's path
     * @return the connection, or {@code -errno}
     */
    public int connect(final String path)
    {
        final Scratch s = scratch.get();
        final int length = socketAddress(s.address, path);
        if (length < 0)
        {
            return length;
        }
        try
        {
            final int fd = (int)socket$mh.invokeExact(s.state, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0)
            {
                return -errno(s.state);
            }
            int rc;
            do
            {
                rc = (int)connect$mh.invokeExact(s.state, fd, s.address, length);
            }
            while (rc != 0 && errno(s.state) == LibC.EINTR);
            if (rc != 0)
            {
                final int error = errno(s.state);
                final int ignored = (int)close$mh.invokeExact(s.state, fd);
                return -error;
            }
            return fd;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * The peer's credentials as the kernel recorded them when it connected ({@code SO_PEERCRED}).
     *
     * @param fd          a connected socket
     * @param credentials receives pid, uid and gid, in that order
     * @return 0, or {@code -errno}
     */
    public int peerCredentials(final int fd, final int[] credentials)
    {
        final Scratch s = scratch.get();
        try
        {
            s.length.set(JAVA_INT, 0, (int)UCRED_LAYOUT.byteSize());
            final int rc = (int)getsockopt$mh.invokeExact(s.state, fd, SOL_SOCKET, soPeercred, s.credentials, s.length);
            if (rc != 0)
            {
                return -errno(s.state);
            }
            credentials[0] = s.credentials.get(JAVA_INT, 0);
            credentials[1] = s.credentials.get(JAVA_INT, 4);
            credentials[2] = s.credentials.get(JAVA_INT, 8);
            return 0;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Sends bytes, with descriptors attached to the first of them when {@code count > 0}. Never raises
     * SIGPIPE; never blocks.
     *
     * @param fd          a connected socket
     * @param buffer      the bytes
     * @param length      how many of them
     * @param descriptors descriptors to pass ({@code SCM_RIGHTS}); the caller still owns its copies
     * @param count       how many of them, at most {@value #MAX_DESCRIPTORS}
     * @return bytes sent (the descriptors went with the first), or {@code -errno}
     */
    public long send(final int fd, final MemorySegment buffer, final long length, final int[] descriptors, final int count)
    {
        if (count < 0 || count > MAX_DESCRIPTORS)
        {
            throw new IllegalArgumentException("count " + count + " of descriptors is not in 0.." + MAX_DESCRIPTORS);
        }
        final Scratch s = scratch.get();
        message(s, buffer, length);
        if (count > 0)
        {
            s.control.set(JAVA_LONG, CMSG_LEN_OFFSET, CMSG_DATA_OFFSET + 4L * count);
            s.control.set(JAVA_INT, CMSG_LEVEL_OFFSET, SOL_SOCKET);
            s.control.set(JAVA_INT, CMSG_TYPE_OFFSET, SCM_RIGHTS);
            for (int i = 0; i < count; i++)
            {
                s.control.set(JAVA_INT, CMSG_DATA_OFFSET + 4L * i, descriptors[i]);
            }
            s.message.set(ADDRESS, MSG_CONTROL_OFFSET, s.control);
            s.message.set(JAVA_LONG, MSG_CONTROLLEN_OFFSET, CMSG_DATA_OFFSET + align8(4L * count));
        }
        try
        {
            long n;
            do
            {
                n = (long)sendmsg$mh.invokeExact(s.state, fd, s.message, MSG_DONTWAIT | MSG_NOSIGNAL);
            }
            while (n < 0 && errno(s.state) == LibC.EINTR);
            return n >= 0 ? n : -errno(s.state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Receives what has arrived, up to {@code length} bytes, and the descriptors sent with them.
     * Received descriptors are close-on-exec and belong to the caller; any the kernel could not fit
     * are closed by it and reported as truncation.
     *
     * @param fd          a connected socket
     * @param buffer      where the bytes go
     * @param length      at most this many
     * @param descriptors receives up to {@value #MAX_DESCRIPTORS} descriptors
     * @param received    receives {@code [0]} the count of descriptors, {@code [1]} 1 when some were dropped
     *                    (the control data was truncated, or a message of another kind came), else 0
     * @param block       whether to wait for data (the socket's own mode otherwise decides)
     * @return bytes received, 0 when the peer closed its end, or {@code -errno} ({@code -EAGAIN}: nothing yet)
     */
    public long receive(final int fd, final MemorySegment buffer, final long length, final int[] descriptors, final int[] received,
                        final boolean block)
    {
        final Scratch s = scratch.get();
        message(s, buffer, length);
        s.message.set(ADDRESS, MSG_CONTROL_OFFSET, s.control);
        s.message.set(JAVA_LONG, MSG_CONTROLLEN_OFFSET, CONTROL_SPACE);
        received[0] = 0;
        received[1] = 0;
        try
        {
            long n;
            do
            {
                n = (long)recvmsg$mh.invokeExact(s.state, fd, s.message, MSG_CMSG_CLOEXEC | (block ? 0 : MSG_DONTWAIT));
            }
            while (n < 0 && errno(s.state) == LibC.EINTR);
            if (n < 0)
            {
                return -errno(s.state);
            }
            if ((s.message.get(JAVA_INT, MSG_FLAGS_OFFSET) & MSG_CTRUNC) != 0)
            {
                received[1] = 1;
            }
            takeDescriptors(s, descriptors, received);
            return n;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /** Walks the control messages: SCM_RIGHTS descriptors are kept (up to the array), anything else is dropped. */
    private void takeDescriptors(final Scratch s, final int[] descriptors, final int[] received) throws Throwable
    {
        final long controlLength = Math.min(s.message.get(JAVA_LONG, MSG_CONTROLLEN_OFFSET), CONTROL_SPACE);
        long at = 0;
        while (at + CMSG_DATA_OFFSET <= controlLength)
        {
            final long cmsgLength = s.control.get(JAVA_LONG, at + CMSG_LEN_OFFSET);
            if (cmsgLength < CMSG_DATA_OFFSET || at + cmsgLength > controlLength)
            {
                break;
            }
            final boolean rights = s.control.get(JAVA_INT, at + CMSG_LEVEL_OFFSET) == SOL_SOCKET
                && s.control.get(JAVA_INT, at + CMSG_TYPE_OFFSET) == SCM_RIGHTS;
            final long count = (cmsgLength - CMSG_DATA_OFFSET) / 4;
            for (long i = 0; i < count; i++)
            {
                final int passed = s.control.get(JAVA_INT, at + CMSG_DATA_OFFSET + 4 * i);
                if (rights && received[0] < descriptors.length)
                {
                    descriptors[received[0]++] = passed;
                }
                else if (rights)
                {
                    final int ignored = (int)close$mh.invokeExact(s.state, passed);
                    received[1] = 1;
                }
            }
            if (!rights)
            {
                received[1] = 1;
            }
            at += CMSG_DATA_OFFSET + align8(cmsgLength - CMSG_DATA_OFFSET);
        }
    }

    private static void message(final Scratch s, final MemorySegment buffer, final long length)
    {
        s.iovec.set(ADDRESS, 0, buffer);
        s.iovec.set(JAVA_LONG, 8, length);
        s.message.fill((byte)0);
        s.message.set(ADDRESS, MSG_IOV_OFFSET, s.iovec);
        s.message.set(JAVA_LONG, MSG_IOVLEN_OFFSET, 1L);
    }

    private static long align8(final long n)
    {
        return (n + 7) & -8L;
    }

    /**
     * Waits for any of {@code count} descriptors to become ready.
     *
     * @param pollfds       {@code count} {@link #POLLFD_LAYOUT} entries; their {@code revents} are set
     * @param count         entries to watch
     * @param timeoutMillis 0 returns at once, -1 waits for ever
     * @return entries with events, or {@code -errno}
     */
    public int poll(final MemorySegment pollfds, final int count, final int timeoutMillis)
    {
        final Scratch s = scratch.get();
        try
        {
            final int n = (int)poll$mh.invokeExact(s.state, pollfds, (long)count, timeoutMillis);
            return n >= 0 ? n : -errno(s.state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd a descriptor
     * @return 0, or {@code -errno}
     */
    public int close(final int fd)
    {
        final Scratch s = scratch.get();
        try
        {
            final int rc = (int)close$mh.invokeExact(s.state, fd);
            return rc == 0 ? 0 : -errno(s.state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(final Throwable t)
    {
        if (t instanceof RuntimeException re)
        {
            return re;
        }
        if (t instanceof Error e)
        {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
