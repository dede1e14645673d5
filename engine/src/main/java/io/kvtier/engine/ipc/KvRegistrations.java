package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.device.CopyExecutor;
import io.kvtier.device.CudaIpcDevices;
import io.kvtier.device.CudaIpcMappings;
import io.kvtier.device.EmulatedCopyExecutor;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * An IPC client's REGISTER_KV (docs/ipc-protocol.md section 10), on the {@code kvtier-device} thread:
 * checks the shape, the arrangement and the allocations it names, opens its KV buffers (CUDA IPC
 * handles on a device, through the device module; host shared-memory files by path or by a descriptor
 * the client passed) and adds the layout to the client's {@link ClientKvBuffers}. A registration the
 * engine refuses is answered INVALID with the detail that says why, and logged.
 */
final class KvRegistrations implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(KvRegistrations.class.getName());

    private final PagePool pool;
    private final MemorySegment poolData;
    private final CudaIpcDevices devices;
    private final CopyExecutor hostExecutor = EmulatedCopyExecutor.forHostBuffers();
    private final RequestDecoder decoder = new RequestDecoder();
    private final FileDescriptors descriptors = FileDescriptors.instance().orElseThrow();
    private final LibC libc = LibC.instance().orElseThrow();
    private final byte[] handle = new byte[DeviceRequestDescriptor.HANDLE_LENGTH];

    /**
     * @param pool the engine's pool, whose pages the registered buffers are copied to and from
     */
    KvRegistrations(final PagePool pool)
    {
        this.pool = pool;
        this.poolData = pool.frames().data();
        this.devices = CudaIpcDevices.discover();
        if (devices.isPresent())
        {
            LOG.log(System.Logger.Level.INFO, "device copies: {0}; IPC clients may register CUDA IPC handles (and host files)", devices.reason());
        }
        else
        {
            LOG.log(System.Logger.Level.INFO, "device copies: no CUDA device ({0}); IPC clients may register KV buffers in host"
                + " shared-memory files, copied with host memory copies; CUDA IPC registrations are refused with NO_DEVICE", devices.reason());
        }
    }

    /** Releases the devices' CUDA streams. */
    @Override
    public void close()
    {
        devices.close();
    }

    /** A REGISTER_KV the engine refuses, with the detail the client is told and the reason it logs. */
    private static final class Refusal extends Exception
    {
        private final int detail;

        Refusal(final int detail, final String message)
        {
            super(message, null, false, false);
            this.detail = detail;
        }
    }

    /**
     * Answers a REGISTER_KV: the layout's id, or INVALID with the detail that refused it.
     *
     * @param client the registering client, its request in flight
     */
    void register(final RemoteClient client)
    {
        final byte[] record = client.registerRecord();
        final RequestDecoder request = decoder.wrap(MemorySegment.ofArray(record), 0, record.length);
        try
        {
            final int layoutId = register(client, request);
            client.complete(ErrorCode.OK, layoutId, 0, 0, 0, 0);
        }
        catch (final Refusal refusal)
        {
            LOG.log(System.Logger.Level.WARNING, "REGISTER_KV of IPC client {0} refused, {1}: {2}", client.clientId(),
                DeviceRequestDescriptor.detailName(refusal.detail), refusal.getMessage());
            client.complete(ErrorCode.INVALID, refusal.detail, 0, 0, 0, 0);
        }
        finally
        {
            closeDescriptors(client.registerDescriptors());
        }
    }

    /** The descriptors a HOST_FD registration named are the engine's to close, whatever became of it: a mapping needs none. */
    private void closeDescriptors(final int[] fds)
    {
        if (fds == null)
        {
            return;
        }
        for (int i = 0; i < fds.length; i++)
        {
            boolean seen = fds[i] < 0;
            for (int j = 0; j < i && !seen; j++)
            {
                seen = fds[j] == fds[i];
            }
            if (!seen)
            {
                descriptors.close(fds[i]);
            }
        }
    }

    private int register(final RemoteClient client, final RequestDecoder request) throws Refusal
    {
        final ClientKvBuffers buffers = client.kvBuffers();
        if (buffers.size() >= DeviceRequestDescriptor.MAX_LAYOUTS)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_TOO_MANY_LAYOUTS, "the client already registered "
                + DeviceRequestDescriptor.MAX_LAYOUTS + " layouts, the most one client may");
        }
        final int kind = request.handleKind();
        final boolean hostFd = kind == DeviceRequestDescriptor.HANDLE_HOST_FD && client.passesDescriptors();
        if (kind != DeviceRequestDescriptor.HANDLE_CUDA_IPC && kind != DeviceRequestDescriptor.HANDLE_HOST_FILE && !hostFd)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_HANDLE_KIND, "Handle Kind " + kind + " is not 1 (CUDA_IPC), 2 (HOST_FILE)"
                + (client.passesDescriptors() ? " nor 3 (HOST_FD)" : ", nor 3 (HOST_FD) in a session of minor version " + client.minorVersion()));
        }
        final int arrangement = request.arrangement();
        if (arrangement < DeviceRequestDescriptor.ARRANGEMENT_SEPARATE || arrangement > DeviceRequestDescriptor.ARRANGEMENT_INTERLEAVED)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_ARRANGEMENT, "Arrangement " + arrangement
                + " is not 1 (SEPARATE), 2 (CONTIGUOUS) or 3 (INTERLEAVED)");
        }
        final KvShape shape;
        final int blocks = request.registerField(DeviceRequestDescriptor.BLOCKS_OFFSET);
        final long perAllocation;
        try
        {
            shape = new KvShape(request.registerField(DeviceRequestDescriptor.LAYERS_OFFSET), request.registerField(DeviceRequestDescriptor.TENSORS_OFFSET),
                request.registerField(DeviceRequestDescriptor.BLOCK_TOKENS_OFFSET), request.registerField(DeviceRequestDescriptor.HEADS_OFFSET),
                request.registerField(DeviceRequestDescriptor.HEAD_DIM_OFFSET), request.registerField(DeviceRequestDescriptor.ELEMENT_BYTES_OFFSET));
            if (blocks < 1)
            {
                throw new IllegalArgumentException("blocks=" + blocks + " must be positive");
            }
            perAllocation = switch (arrangement)
            {
                case DeviceRequestDescriptor.ARRANGEMENT_SEPARATE -> Math.multiplyExact(shape.blockBytes(), (long)blocks);
                case DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS -> Math.multiplyExact(shape.pageBytes(), (long)blocks);
                default -> Math.multiplyExact(Math.multiplyExact(shape.blockBytes(), (long)shape.tensorsPerLayer()), (long)blocks);
            };
        }
        catch (final IllegalArgumentException | ArithmeticException ex)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_SHAPE, ex.getMessage());
        }
        final int allocations = request.allocationCount();
        final int expected = switch (arrangement)
        {
            case DeviceRequestDescriptor.ARRANGEMENT_SEPARATE -> shape.slots();
            case DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS -> 1;
            default -> shape.layers();
        };
        if (allocations != expected)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_ALLOCATION_COUNT, "Allocation Count " + allocations + " does not match the "
                + "arrangement, which needs " + expected + " for " + shape.layers() + " layers of " + shape.tensorsPerLayer() + " tensors");
        }
        final long pageLength = KvPageDescriptor.pageLength(shape);
        if (pageLength > pool.pageSize())
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_PAGE_SIZE, "a block of this shape is " + pageLength
                + " bytes, more than the pool's page size of " + pool.pageSize());
        }
        final long[] offsets = new long[allocations];
        for (int i = 0; i < allocations; i++)
        {
            offsets[i] = request.allocationOffset(i);
            if (offsets[i] < 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_TOO_SMALL, "allocation " + i + " has a negative Offset " + offsets[i]);
            }
        }
        final ClientKvBuffers.Registered registered = kind == DeviceRequestDescriptor.HANDLE_CUDA_IPC
            ? openCuda(request, shape, arrangement, blocks, offsets)
            : openHostFiles(client, request, hostFd, shape, arrangement, blocks, offsets, perAllocation);
        final int layoutId = buffers.add(registered);
        LOG.log(System.Logger.Level.INFO, "IPC client {0} registered KV layout {1}: {2}, copied by {3}", client.clientId(), layoutId,
            registered.layout(), registered.executor().description());
        return layoutId;
    }

    private ClientKvBuffers.Registered openCuda(final RequestDecoder request, final KvShape shape, final int arrangement, final int blocks,
                                                final long[] offsets) throws Refusal
    {
        if (!devices.isPresent())
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_NO_DEVICE, "the engine has no CUDA device: " + devices.reason());
        }
        final int device = request.device();
        if (device < 0 || device >= devices.deviceCount())
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_NO_DEVICE, "Device " + device + " is not one of the engine's "
                + devices.deviceCount() + " CUDA devices");
        }
        final byte[][] handles = new byte[offsets.length][];
        for (int i = 0; i < offsets.length; i++)
        {
            request.allocationHandle(i, handle);
            handles[i] = handle.clone();
        }
        final CudaIpcMappings mappings;
        try
        {
            mappings = devices.open(device, handles);
        }
        catch (final RuntimeException ex)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, ex.getMessage());
        }
        final long[] bases = new long[offsets.length];
        for (int i = 0; i < offsets.length; i++)
        {
            bases[i] = mappings.base(i) + offsets[i];
        }
        final CopyExecutor executor;
        try
        {
            executor = devices.executor(device, poolData);
        }
        catch (final RuntimeException | Error ex)
        {
            mappings.close();
            throw ex;
        }
        return new ClientKvBuffers.Registered(layout(shape, arrangement, blocks, bases), executor, mappings, null, 0);
    }

    private ClientKvBuffers.Registered openHostFiles(final RemoteClient client, final RequestDecoder request, final boolean hostFd,
                                                     final KvShape shape, final int arrangement, final int blocks, final long[] offsets,
                                                     final long perAllocation)
        throws Refusal
    {
        final Arena mappings = Arena.ofShared();
        // One mapping per file: a path (HOST_FILE) or a descriptor (HOST_FD) names it.
        final Map<Object, MemorySegment> mapped = new HashMap<>();
        try
        {
            final long[] bases = new long[offsets.length];
            for (int i = 0; i < offsets.length; i++)
            {
                request.allocationHandle(i, handle);
                final Object file = hostFd ? (Object)descriptorOf(client, i, handle) : hostPath(i, handle);
                MemorySegment mapping = mapped.get(file);
                if (mapping == null)
                {
                    if (!ClientKvBuffers.reserveHostFiles(1))
                    {
                        throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + i + ": the engine already maps "
                            + ClientKvBuffers.MAX_HOST_FILES + " clients' files, the most it maps at once");
                    }
                    try
                    {
                        mapping = hostFd ? mapDescriptor(i, (Integer)file, mappings) : mapHostFile(client, i, (Path)file, mappings);
                    }
                    catch (final Refusal | RuntimeException ex)
                    {
                        ClientKvBuffers.releaseHostFiles(1);
                        throw ex;
                    }
                    mapped.put(file, mapping);
                }
                if (offsets[i] > mapping.byteSize() || mapping.byteSize() - offsets[i] < perAllocation)
                {
                    throw new Refusal(DeviceRequestDescriptor.DETAIL_TOO_SMALL, "allocation " + i + " (" + file + ", " + mapping.byteSize()
                        + " bytes) is too small for " + perAllocation + " bytes from offset " + offsets[i]);
                }
                bases[i] = mapping.address() + offsets[i];
            }
            return new ClientKvBuffers.Registered(layout(shape, arrangement, blocks, bases), hostExecutor, null, mappings,
                mapped.size());
        }
        catch (final Refusal | RuntimeException ex)
        {
            mappings.close();
            ClientKvBuffers.releaseHostFiles(mapped.size());
            throw ex;
        }
    }

    private static Path hostPath(final int allocation, final byte[] handle) throws Refusal
    {
        int end = 0;
        while (end < handle.length && handle[end] != 0)
        {
            end++;
        }
        final String name = new String(handle, 0, end, StandardCharsets.UTF_8);
        if (end == handle.length || !name.startsWith("/"))
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "the handle of allocation " + allocation
                + " is not an absolute path ending in NUL within 64 bytes");
        }
        try
        {
            return Path.of(name);
        }
        catch (final RuntimeException ex)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "the handle of allocation " + allocation + " is not a path: " + name);
        }
    }

    /** The descriptor a HOST_FD allocation names: its number in the handle's first 4 bytes, the rest 0. */
    private static Integer descriptorOf(final RemoteClient client, final int allocation, final byte[] handle) throws Refusal
    {
        for (int b = 4; b < handle.length; b++)
        {
            if (handle[b] != 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "the HOST_FD handle of allocation " + allocation
                    + " has a byte other than 0 after its descriptor number, at " + b);
            }
        }
        final int fd = client.registerDescriptors()[allocation];
        if (fd < 0)
        {
            final long number = Integer.toUnsignedLong(java.nio.ByteBuffer.wrap(handle).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0));
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + " names descriptor " + number
                + ", which the client did not send (or a registration already named) before this request");
        }
        return fd;
    }

    /**
     * Maps a descriptor the client passed: only a regular file (or memory file) it opened read-write,
     * so the engine writes nothing the client could not write itself; the client's own permissions
     * travelled with the descriptor.
     */
    private MemorySegment mapDescriptor(final int allocation, final int fd, final Arena mappings) throws Refusal
    {
        try
        {
            final FileDescriptors.Status status = descriptors.status(fd);
            if (!status.isRegularFile())
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": the descriptor passed is not a regular file");
            }
            if (descriptors.accessMode(fd) != LibC.O_RDWR)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation
                    + ": the descriptor passed is not open read-write");
            }
            if (status.size() == 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_TOO_SMALL, "allocation " + allocation + ": the file passed is empty");
            }
            return descriptors.map(fd, status.size(), mappings);
        }
        catch (final IOException ex)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": cannot map the descriptor passed: "
                + ex.getMessage());
        }
    }

    /**
     * Maps a client's file read-write. The path is opened once, with no symbolic link anywhere on it,
     * as a handle that names the file without opening it for I/O; owner, type and mode are checked on
     * that handle, and only that same file is then opened and mapped (through the handle, never the
     * path again). Only a regular file the peer's user owns and may read and write, without set-id
     * bits: a client must not make the engine write into a file it could not write itself, nor swap
     * the file between the check and the use.
     */
    private MemorySegment mapHostFile(final RemoteClient client, final int allocation, final Path path, final Arena mappings) throws Refusal
    {
        final int handleFd = descriptors.openWithoutSymlinks(path.toString(), FileDescriptors.O_PATH);
        if (handleFd < 0)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": cannot open " + path + " ("
                + (handleFd == -40 || handleFd == -20 ? "a symbolic link on the path, or a component that is not a directory" : "errno " + -handleFd)
                + "; the path must reach the file without any symbolic link)");
        }
        int fd = -1;
        try
        {
            final FileDescriptors.Status status = descriptors.status(handleFd);
            if (!status.isRegularFile())
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": " + path + " is not a regular file");
            }
            if (status.uid() != client.peerUid())
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": " + path + " belongs to uid "
                    + status.uid() + ", not to the client's uid " + client.peerUid());
            }
            if ((status.mode() & 0600) != 0600 || (status.mode() & (FileDescriptors.S_ISUID | FileDescriptors.S_ISGID)) != 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": " + path + " has mode "
                    + Integer.toOctalString(status.mode() & 07777) + "; its owner must be able to read and write it, and it must have no set-id bit");
            }
            // Reopening the handle, not the path: /proc/self/fd/N is this very file, whatever the path names now.
            try (Arena scratch = Arena.ofConfined())
            {
                fd = libc.open(scratch.allocateFrom("/proc/self/fd/" + handleFd), LibC.O_RDWR | LibC.O_CLOEXEC, 0);
            }
            if (fd < 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": cannot open " + path + " read-write: errno "
                    + -fd);
            }
            final FileDescriptors.Status opened = descriptors.status(fd);
            if (!opened.sameFile(status))
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": " + path + " changed while it was opened");
            }
            if (opened.size() == 0)
            {
                throw new Refusal(DeviceRequestDescriptor.DETAIL_TOO_SMALL, "allocation " + allocation + ": " + path + " is empty");
            }
            return descriptors.map(fd, opened.size(), mappings);
        }
        catch (final IOException ex)
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "allocation " + allocation + ": cannot map " + path + ": " + ex.getMessage());
        }
        finally
        {
            descriptors.close(handleFd);
            if (fd >= 0)
            {
                descriptors.close(fd);
            }
        }
    }

    private static LayerFirstLayout layout(final KvShape shape, final int arrangement, final int blocks, final long[] bases)
    {
        return switch (arrangement)
        {
            case DeviceRequestDescriptor.ARRANGEMENT_SEPARATE -> LayerFirstLayout.separate(shape, blocks, bases);
            case DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS -> LayerFirstLayout.contiguous(shape, blocks, bases[0]);
            default -> LayerFirstLayout.interleaved(shape, blocks, bases);
        };
    }
}
