package io.kvtier.client;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.UnixSockets;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * How an {@link IpcConnection} comes to be (docs/ipc-protocol.md, the handshake): the HELLO over the
 * engine's socket, the WELCOME back, and the mapping of the pool, control file and ring it names,
 * either passed as descriptors (protocol 1.2, over the UnixSockets front) or opened by name. Once the
 * three are mapped and the ring is checked to be this client's, the connection takes them over.
 */
final class IpcHandshake
{
    private IpcHandshake()
    {
    }

    /**
     * Connects announcing the given versions; see {@link IpcConnection#connect(Path, int, byte[], int, int, IdleStrategy.Kind)}.
     *
     * @param socketPath     the engine's {@code ipc.socket-path}
     * @param maxKeys        slots wanted
     * @param namespaceRoots N namespace roots, 16 bytes each (keys.md)
     * @param majorVersion   the major version to announce
     * @param minorVersion   the minor version to announce
     * @param idleKind       how the connection waits
     * @return the connection
     * @throws IpcException if the engine refused the HELLO
     * @throws IOException  if the socket or a file cannot be reached
     */
    static IpcConnection connect(final Path socketPath, final int maxKeys, final byte[] namespaceRoots, final int majorVersion,
                                 final int minorVersion, final IdleStrategy.Kind idleKind) throws IOException
    {
        final boolean canPass = UnixSockets.instance().isPresent() && FileDescriptors.instance().isPresent();
        if (minorVersion >= HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION && canPass)
        {
            return connectPassingDescriptors(socketPath, new HandshakeDescriptor.Hello(HandshakeDescriptor.HELLO_MAGIC, majorVersion, minorVersion,
                maxKeys, (int)ProcessHandle.current().pid(), 0, namespaceRoots), idleKind);
        }
        // Without the native fronts this client cannot receive descriptors: it asks for a session that
        // opens its files by name, which an engine grants to a client of its own user only.
        final int announced = canPass ? minorVersion : Math.min(minorVersion, HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION - 1);
        final HandshakeDescriptor.Hello hello = new HandshakeDescriptor.Hello(HandshakeDescriptor.HELLO_MAGIC, majorVersion,
            announced, maxKeys, (int)ProcessHandle.current().pid(), 0, namespaceRoots);
        final SocketChannel socket = SocketChannel.open(StandardProtocolFamily.UNIX);
        try
        {
            socket.connect(UnixDomainSocketAddress.of(socketPath));
            final HandshakeDescriptor.Welcome welcome = handshake(socket, hello.encode());
            if (welcome.status() != ErrorCode.OK.code())
            {
                throw new IpcException(welcome.status(), "engine at " + socketPath + " refused the connection: " + welcome.poolPath());
            }
            final Arena arena = Arena.ofShared();
            try
            {
                final MemorySegment pool = map(Path.of(welcome.poolPath()), arena);
                final MemorySegment control = map(Path.of(welcome.controlPath()), arena);
                final MemorySegment ring = map(Path.of(welcome.ringPath()), arena);
                if (ring.get(LittleEndian.LONG, RingFileDescriptor.MAGIC_OFFSET) != RingFileDescriptor.MAGIC
                    || ring.get(LittleEndian.INT, RingFileDescriptor.CLIENT_ID_OFFSET) != welcome.clientId())
                {
                    throw new IOException("ring file " + welcome.ringPath() + " is not this client's ring");
                }
                return new IpcConnection(socket, -1, arena, welcome, pool, control, ring, idleKind);
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                throw ex;
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            socket.close();
            throw ex;
        }
    }

    /**
     * A session of minor version 2 or later: the WELCOME brings the pool, control file and ring as
     * descriptors, which are mapped; no path is opened.
     */
    private static IpcConnection connectPassingDescriptors(final Path socketPath, final HandshakeDescriptor.Hello hello,
                                                           final IdleStrategy.Kind idleKind) throws IOException
    {
        final UnixSockets sockets = UnixSockets.instance().orElseThrow();
        final FileDescriptors files = FileDescriptors.instance().orElseThrow();
        final int fd = sockets.connect(socketPath.toString());
        if (fd < 0)
        {
            throw new IOException("cannot connect to the engine at " + socketPath + ": " + errnoText(-fd));
        }
        final int[] descriptors = new int[UnixSockets.MAX_DESCRIPTORS];
        int descriptorCount = 0;
        try (Arena scratch = Arena.ofConfined())
        {
            final ByteBuffer helloBytes = hello.encode();
            final MemorySegment out = scratch.allocate(helloBytes.remaining());
            MemorySegment.copy(MemorySegment.ofBuffer(helloBytes), 0, out, 0, out.byteSize());
            writeFully(sockets, fd, out);
            final HandshakeReader reader = new HandshakeReader(sockets, fd, scratch, descriptors);
            final ByteBuffer header = reader.read(HandshakeDescriptor.WELCOME_HEADER_LENGTH);
            final int status = header.getInt(HandshakeDescriptor.WELCOME_STATUS_OFFSET);
            final String[] paths = new String[status == 0 ? 3 : 1];
            for (int i = 0; i < paths.length; i++)
            {
                final int length = reader.read(4).getInt(0);
                if (length < 0 || length > HandshakeDescriptor.MAX_PATH_BYTES)
                {
                    throw new IOException("WELCOME path field of " + length + " bytes");
                }
                paths[i] = StandardCharsets.UTF_8.decode(reader.read(length)).toString();
            }
            descriptorCount = reader.descriptors;
            final HandshakeDescriptor.Welcome welcome = HandshakeDescriptor.Welcome.decode(header, paths);
            if (welcome.status() != ErrorCode.OK.code())
            {
                throw new IpcException(welcome.status(), "engine at " + socketPath + " refused the connection: " + welcome.poolPath());
            }
            final Arena arena = Arena.ofShared();
            try
            {
                final MemorySegment pool;
                final MemorySegment control;
                final MemorySegment ring;
                if (welcome.descriptors() == HandshakeDescriptor.WELCOME_DESCRIPTOR_COUNT)
                {
                    if (descriptorCount != HandshakeDescriptor.WELCOME_DESCRIPTOR_COUNT)
                    {
                        throw new IOException("the WELCOME says " + welcome.descriptors() + " descriptors came with it, but " + descriptorCount + " did");
                    }
                    pool = mapDescriptor(files, descriptors[0], arena);
                    control = mapDescriptor(files, descriptors[1], arena);
                    ring = mapDescriptor(files, descriptors[2], arena);
                }
                else
                {
                    // An engine older than 1.2 passes none: its files are opened by name.
                    pool = map(Path.of(welcome.poolPath()), arena);
                    control = map(Path.of(welcome.controlPath()), arena);
                    ring = map(Path.of(welcome.ringPath()), arena);
                }
                if (ring.get(LittleEndian.LONG, RingFileDescriptor.MAGIC_OFFSET) != RingFileDescriptor.MAGIC
                    || ring.get(LittleEndian.INT, RingFileDescriptor.CLIENT_ID_OFFSET) != welcome.clientId())
                {
                    throw new IOException("the ring the engine gave is not this client's ring");
                }
                return new IpcConnection(null, fd, arena, welcome, pool, control, ring, idleKind);
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                throw ex;
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            sockets.close(fd);
            throw ex;
        }
        finally
        {
            // Mapped or not, the descriptors are not needed any more: a mapping lives on without its descriptor.
            for (int i = 0; i < descriptorCount; i++)
            {
                files.close(descriptors[i]);
            }
        }
    }

    /** Reads a WELCOME from a socket of the UnixSockets front, gathering the descriptors that come with its bytes. */
    private static final class HandshakeReader
    {
        private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(30);

        private final UnixSockets sockets;
        private final int fd;
        private final MemorySegment buffer;
        private final MemorySegment pollfd;
        private final int[] into;
        private final int[] received = new int[2];
        private final int[] scratch = new int[UnixSockets.MAX_DESCRIPTORS];
        int descriptors;

        HandshakeReader(final UnixSockets sockets, final int fd, final Arena arena, final int[] into)
        {
            this.sockets = sockets;
            this.fd = fd;
            this.buffer = arena.allocate(HandshakeDescriptor.MAX_PATH_BYTES + HandshakeDescriptor.WELCOME_HEADER_LENGTH);
            this.pollfd = arena.allocate(UnixSockets.POLLFD_LAYOUT);
            this.into = into;
        }

        ByteBuffer read(final int length) throws IOException
        {
            long done = 0;
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
            while (done < length)
            {
                pollfd.set(java.lang.foreign.ValueLayout.JAVA_INT, UnixSockets.POLLFD_FD_OFFSET, fd);
                pollfd.set(java.lang.foreign.ValueLayout.JAVA_SHORT, UnixSockets.POLLFD_EVENTS_OFFSET, UnixSockets.POLLIN);
                final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0 || sockets.poll(pollfd, 1, (int)left) == 0)
                {
                    throw new IOException("the engine did not answer the HELLO within " + WAIT_MILLIS + " ms");
                }
                final long n = sockets.receive(fd, buffer.asSlice(done), length - done, scratch, received, false);
                for (int i = 0; i < received[0]; i++)
                {
                    if (descriptors < into.length)
                    {
                        into[descriptors++] = scratch[i];
                    }
                    else
                    {
                        sockets.close(scratch[i]);
                    }
                }
                if (n == 0)
                {
                    throw new EOFException("engine closed the socket after " + done + " of " + length + " bytes");
                }
                if (n < 0 && n != -11)
                {
                    throw new IOException("reading the WELCOME failed: " + errnoText((int)-n));
                }
                done += Math.max(0, n);
            }
            final ByteBuffer bytes = ByteBuffer.allocate(length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            bytes.put(buffer.asSlice(0, length).asByteBuffer());
            return bytes.flip();
        }
    }

    private static void writeFully(final UnixSockets sockets, final int fd, final MemorySegment bytes) throws IOException
    {
        long done = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (done < bytes.byteSize())
        {
            final long n = sockets.send(fd, bytes.asSlice(done), bytes.byteSize() - done, new int[0], 0);
            if (n > 0)
            {
                done += n;
            }
            else if (n == -11 && System.nanoTime() - deadline < 0)
            {
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
            else
            {
                throw new IOException("sending the HELLO failed: " + errnoText((int)-n));
            }
        }
    }

    private static MemorySegment mapDescriptor(final FileDescriptors files, final int fd, final Arena arena) throws IOException
    {
        return files.map(fd, files.status(fd).size(), arena);
    }

    static String errnoText(final int errno)
    {
        return io.kvtier.nativeaccess.libc.LibC.instance().map(libc -> libc.strerror(errno)).orElse("errno " + errno);
    }

    /**
     * Sends one HELLO and reads the WELCOME.
     *
     * @param socket a connected socket
     * @param hello  the HELLO's bytes (any bytes: tests send broken ones)
     * @return the engine's answer
     * @throws IOException if the socket fails or closes first
     */
    static HandshakeDescriptor.Welcome handshake(final SocketChannel socket, final ByteBuffer hello) throws IOException
    {
        while (hello.hasRemaining())
        {
            socket.write(hello);
        }
        final ByteBuffer header = readFully(socket, HandshakeDescriptor.WELCOME_HEADER_LENGTH);
        final int status = header.order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(HandshakeDescriptor.WELCOME_STATUS_OFFSET);
        final String[] paths = new String[status == 0 ? 3 : 1];
        for (int i = 0; i < paths.length; i++)
        {
            final int length = readFully(socket, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0);
            if (length < 0 || length > HandshakeDescriptor.MAX_PATH_BYTES)
            {
                throw new IOException("WELCOME path field of " + length + " bytes");
            }
            paths[i] = StandardCharsets.UTF_8.decode(readFully(socket, length)).toString();
        }
        return HandshakeDescriptor.Welcome.decode(header, paths);
    }

    private static ByteBuffer readFully(final SocketChannel socket, final int length) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining())
        {
            if (socket.read(buffer) < 0)
            {
                throw new EOFException("engine closed the socket after " + buffer.position() + " of " + length + " bytes");
            }
        }
        return buffer.flip();
    }

    private static MemorySegment map(final Path path, final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
        }
    }
}
