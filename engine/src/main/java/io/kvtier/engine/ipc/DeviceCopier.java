package io.kvtier.engine.ipc;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.device.CopyCompletion;
import io.kvtier.device.CopyDirection;
import io.kvtier.device.CopyExecutor;
import io.kvtier.device.CopyOps;
import io.kvtier.device.CopyPlanBuilder;
import io.kvtier.device.CudaCopyExecutor;
import io.kvtier.device.EmulatedCopyExecutor;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.pool.PageMetadata;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.nativeaccess.cuda.Cuda;
import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code kvtier-device} thread: runs the device operations of IPC clients (docs/ipc-protocol.md
 * section 10). It opens the KV buffers a client registers (CUDA IPC handles, or host shared-memory
 * files), and copies between those buffers and the pool pages the client's slots hold, with the
 * layouts and copy plans of the device module, on the device's CUDA stream or as host copies.
 *
 * <p>The engine thread takes the request from the client's ring and hands it here, so no copy and no
 * CUDA call ever runs on the thread every client waits on; the client's slots do not change under a copy.
 *
 * <p>What keeps the bytes right: a load copies only pages the slot pins, and checks after the copy
 * that the page is still the one pinned (state and generation), since a lease the engine took back
 * could free it meanwhile; a slot that lost its page is answered EXPIRED, never COPIED. A save copies
 * only into pages the client still holds reserved, and its commit then goes through the commit sealer
 * and the engine exactly as a COMMIT does: CRC32C and trailer, then visibility only if the reservation
 * is still the client's.
 */
final class DeviceCopier extends ClientRequestThread
{
    private static final System.Logger LOG = System.getLogger(DeviceCopier.class.getName());

    private final PagePool pool;
    private final PageMetadata metadata;
    private final MemorySegment poolData;
    private final CommitSealer sealer;
    private final Optional<Cuda> cuda;
    private final String noDeviceReason;
    private final CopyExecutor hostExecutor = EmulatedCopyExecutor.forHostBuffers();
    private final Map<Integer, CopyExecutor> deviceExecutors = new HashMap<>();
    private final RequestDecoder decoder = new RequestDecoder();
    private final FileDescriptors descriptors = FileDescriptors.instance().orElseThrow();
    private final LibC libc = LibC.instance().orElseThrow();
    private final byte[] handle = new byte[DeviceRequestDescriptor.HANDLE_LENGTH];
    // Reused from one request to the next, so that a steady stream of copies allocates nothing.
    private final CopyPlanBuilder planner = new CopyPlanBuilder();
    private final CopyOps ops = new CopyOps(256);
    private final Batch batch = new Batch();
    private final BitSet targets = new BitSet();
    private final BitSet wholeSources = new BitSet();
    private final BitSet wholePages = new BitSet();
    private int[] wholeBlocks = new int[64];
    private long[] wholeOffsets = new long[64];
    private final EngineCounters counters;

    DeviceCopier(final PagePool pool, final CommitSealer sealer, final int maxClients, final io.kvtier.engine.status.ThreadWatch watch)
    {
        super("kvtier-device", maxClients, watch);
        this.pool = pool;
        this.metadata = pool.metadata();
        this.poolData = pool.frames().data();
        this.sealer = sealer;
        // This thread is the only writer of the device counters, as the engine thread is of its own.
        this.counters = new EngineCounters(pool.counters());
        this.cuda = Cuda.instance();
        this.noDeviceReason = Cuda.discovery().reason();
        if (cuda.isPresent())
        {
            LOG.log(System.Logger.Level.INFO, "device copies: {0}; IPC clients may register CUDA IPC handles (and host files)",
                cuda.get().info().reason());
        }
        else
        {
            LOG.log(System.Logger.Level.INFO, "device copies: no CUDA device ({0}); IPC clients may register KV buffers in host"
                + " shared-memory files, copied with host memory copies; CUDA IPC registrations are refused with NO_DEVICE", noDeviceReason);
        }
        start();
    }

    @Override
    void serve(final RemoteClient client)
    {
        final int type = client.requestType();
        try
        {
            switch (type)
            {
                case MessageType.REGISTER_KV -> register(client);
                case MessageType.DEVICE_LOAD -> load(client);
                case MessageType.DEVICE_SAVE -> save(client);
                default -> throw new IllegalStateException("not a device operation: " + MessageType.name(type));
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // An InternalError is a fault HotSpot caught in a copy: a client's buffer file shrank under its mapping (SIGBUS).
            LOG.log(System.Logger.Level.ERROR, MessageType.name(type) + " of IPC client " + client.clientId() + " failed"
                + (ex instanceof InternalError ? ": its KV buffer faulted during the copy (a host file truncated under the mapping?)" : ""), ex);
            if (type == MessageType.DEVICE_SAVE)
            {
                // The pages were not all written: every reservation of the request is given back through the commit path
                // (no length, so none is made visible), and the request is answered INTERNAL_ERROR, as section 10 says.
                Arrays.fill(client.lengths(), client.requestFirst(), client.requestFirst() + client.requestCount(), 0);
                client.answerInternalError();
                commit(client);
            }
            else
            {
                client.complete(ErrorCode.INTERNAL_ERROR, 0, 0, 0, 0, 0);
            }
        }
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

    private void register(final RemoteClient client)
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
        if (cuda.isEmpty())
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_NO_DEVICE, "the engine has no CUDA device: " + noDeviceReason);
        }
        final Cuda front = cuda.get();
        final int device = request.device();
        if (device < 0 || device >= front.info().deviceCount())
        {
            throw new Refusal(DeviceRequestDescriptor.DETAIL_NO_DEVICE, "Device " + device + " is not one of the engine's "
                + front.info().deviceCount() + " CUDA devices");
        }
        final List<byte[]> handles = new ArrayList<>();
        final List<Long> opened = new ArrayList<>();
        final long[] bases = new long[offsets.length];
        try (Arena scratch = Arena.ofConfined())
        {
            front.setDevice(device);
            final MemorySegment native64 = scratch.allocate(DeviceRequestDescriptor.HANDLE_LENGTH);
            for (int i = 0; i < offsets.length; i++)
            {
                request.allocationHandle(i, handle);
                int known = -1;
                for (int h = 0; h < handles.size() && known < 0; h++)
                {
                    known = Arrays.equals(handles.get(h), handle) ? h : -1;
                }
                if (known < 0)
                {
                    // A process may open a handle only once: tensors carved from one allocation share its mapping.
                    MemorySegment.copy(handle, 0, native64, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, handle.length);
                    opened.add(front.ipcOpenMemHandle(native64));
                    handles.add(handle.clone());
                    known = handles.size() - 1;
                }
                bases[i] = opened.get(known) + offsets[i];
            }
        }
        catch (final RuntimeException ex)
        {
            for (final long pointer : opened)
            {
                front.ipcCloseMemHandle(pointer);
            }
            throw new Refusal(DeviceRequestDescriptor.DETAIL_OPEN_FAILED, "cudaIpcOpenMemHandle failed: " + ex.getMessage());
        }
        final CopyExecutor executor = deviceExecutors.computeIfAbsent(device, d ->
        {
            final CopyExecutor created = new CudaCopyExecutor(front, d);
            created.registerHost(poolData);
            return created;
        });
        return new ClientKvBuffers.Registered(layout(shape, arrangement, blocks, bases), executor, device, front,
            opened.stream().mapToLong(Long::longValue).toArray(), null, 0);
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
            return new ClientKvBuffers.Registered(layout(shape, arrangement, blocks, bases), hostExecutor, -1, null, new long[0], mappings,
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

    /** @return the layout the request names, or null after answering INVALID for an id the client was not given */
    private static ClientKvBuffers.Registered registeredLayout(final RemoteClient client, final String operation)
    {
        final ClientKvBuffers.Registered registered = client.hasKvBuffers() ? client.kvBuffers().get(client.copyLayoutId()) : null;
        if (registered == null)
        {
            LOG.log(System.Logger.Level.WARNING, "{0} of IPC client {1} names Layout Id {2}, which it was not given", operation,
                client.clientId(), client.copyLayoutId());
            client.complete(ErrorCode.INVALID, 0, 0, 0, 0, 0);
        }
        return registered;
    }

    /** DEVICE_LOAD: pinned pages into blocks; answered once every byte is in place. */
    private void load(final RemoteClient client)
    {
        final ClientKvBuffers.Registered registered = registeredLayout(client, "DEVICE_LOAD");
        if (registered == null)
        {
            return;
        }
        final int first = client.requestFirst();
        final int end = first + client.requestCount();
        final byte[] statuses = client.statuses();
        final int[] pageIds = client.pageIds();
        final int[] generations = client.generations();
        final byte[] outcomes = client.copyOutcomes();
        final LayerFirstLayout layout = registered.layout();
        final long pageLength = KvPageDescriptor.pageLength(layout.shape());
        targets.clear();
        batch.reset(end - first);
        for (int slot = first; slot < end; slot++)
        {
            // A slot that holds no pin is answered by what it holds (section 4): a reservation stays RESERVED.
            outcomes[slot] = (byte)(statuses[slot] == PageEntryStatus.RESERVED ? PageEntryStatus.RESERVED : PageEntryStatus.NONE);
            if (!PageEntryStatus.isPinned(statuses[slot]))
            {
                continue;
            }
            final int block = client.copyBlocks()[slot];
            final int tokens = client.copyTokens()[slot];
            if (!validBlock(layout, block, tokens) || targets.get(block))
            {
                // Two slots into one block would leave it holding either page: the second is refused.
                outcomes[slot] = (byte)PageEntryStatus.INVALID;
                continue;
            }
            final int page = pageIds[slot];
            if (!stillPinned(page, generations[slot]))
            {
                outcomes[slot] = (byte)PageEntryStatus.EXPIRED;
                continue;
            }
            if (metadata.payloadLengthPlain(page) != pageLength)
            {
                // Not a block of this shape: whatever was written there, it is not this layout's KV.
                outcomes[slot] = (byte)PageEntryStatus.INVALID;
                continue;
            }
            targets.set(block);
            batch.add(slot, block, tokens, page);
        }
        run(registered, batch, CopyDirection.TO_DEVICE, layout.shape().blockTokens());
        int copied = 0;
        for (int i = 0; i < batch.size; i++)
        {
            final int slot = batch.slots[i];
            // The copy read the page; it was the pinned page's bytes only if nobody took the page meanwhile.
            if (stillPinned(pageIds[slot], generations[slot]))
            {
                outcomes[slot] = (byte)PageEntryStatus.COPIED;
                copied++;
            }
            else
            {
                outcomes[slot] = (byte)PageEntryStatus.EXPIRED;
                counters.increment(EngineCounter.DEVICE_LOADS_EXPIRED);
            }
        }
        counters.add(EngineCounter.DEVICE_BLOCKS_LOADED, copied);
        client.completeCopy(copied);
    }

    /** DEVICE_SAVE: blocks into reserved pages, then their commit as a COMMIT's. */
    private void save(final RemoteClient client)
    {
        final ClientKvBuffers.Registered registered = registeredLayout(client, "DEVICE_SAVE");
        if (registered == null)
        {
            return;
        }
        final int first = client.requestFirst();
        final int end = first + client.requestCount();
        final byte[] statuses = client.statuses();
        final int[] pageIds = client.pageIds();
        final int[] generations = client.generations();
        final int[] lengths = client.lengths();
        final LayerFirstLayout layout = registered.layout();
        final int pageLength = (int)KvPageDescriptor.pageLength(layout.shape());
        batch.reset(end - first);
        for (int slot = first; slot < end; slot++)
        {
            // Length 0 on a reserved slot: the commit answers it INVALID and gives the page back unwritten.
            lengths[slot] = 0;
            if (statuses[slot] != PageEntryStatus.RESERVED)
            {
                continue;
            }
            final int block = client.copyBlocks()[slot];
            final int tokens = client.copyTokens()[slot];
            if (!validBlock(layout, block, tokens))
            {
                continue;
            }
            lengths[slot] = pageLength;
            final int page = pageIds[slot];
            final long word = metadata.stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.WRITING || PageStateWord.generation(word) != generations[slot]
                || metadata.ownerPlain(page) != client.clientId())
            {
                continue; // the reservation lapsed: the commit answers EXPIRED; the page is not ours to write
            }
            if (tokens < layout.shape().blockTokens())
            {
                // Each slot of the page gets the first tokens only: the rest must not be an earlier page's bytes.
                pool.frames().payload(page).asSlice(0, pageLength).fill((byte)0);
            }
            batch.add(slot, block, tokens, page);
        }
        run(registered, batch, CopyDirection.TO_HOST, layout.shape().blockTokens());
        counters.add(EngineCounter.DEVICE_BLOCKS_SAVED, batch.size);
        commit(client);
    }

    private void commit(final RemoteClient client)
    {
        handedOn();
        if (!sealer.offer(client))
        {
            throw new IllegalStateException("the commit sealer's queue is full, which one request per client rules out");
        }
    }

    private static boolean validBlock(final LayerFirstLayout layout, final int block, final int tokens)
    {
        return block >= 0 && block < layout.blocks() && tokens >= 1 && tokens <= layout.shape().blockTokens();
    }

    private boolean stillPinned(final int page, final int generation)
    {
        final long word = metadata.stateWordAcquire(page);
        return PageStateWord.state(word) == PageStateWord.SERVING && PageStateWord.generation(word) == generation && PageStateWord.pins(word) > 0;
    }

    /** The copies of one request: whole blocks into distinct pages go in one plan, the rest one plan each. */
    private static final class Batch
    {
        int[] slots = new int[64];
        int[] blocks = new int[64];
        int[] tokens = new int[64];
        int[] pages = new int[64];
        int size;

        void reset(final int capacity)
        {
            if (slots.length < capacity)
            {
                slots = new int[capacity];
                blocks = new int[capacity];
                tokens = new int[capacity];
                pages = new int[capacity];
            }
            size = 0;
        }

        void add(final int slot, final int block, final int validTokens, final int page)
        {
            slots[size] = slot;
            blocks[size] = block;
            tokens[size] = validTokens;
            pages[size] = page;
            size++;
        }
    }

    private void run(final ClientKvBuffers.Registered registered, final Batch batch, final CopyDirection direction, final int blockTokens)
    {
        if (batch.size == 0)
        {
            return;
        }
        final LayerFirstLayout layout = registered.layout();
        if (wholeBlocks.length < batch.size)
        {
            wholeBlocks = new int[batch.size];
            wholeOffsets = new long[batch.size];
        }
        wholeSources.clear();
        wholePages.clear();
        ops.clear(direction);
        int whole = 0;
        for (int i = 0; i < batch.size; i++)
        {
            final long pageOffset = pool.frames().payload(batch.pages[i]).address() - poolData.address();
            // The multi-block planner wants distinct blocks and distinct pages; a repeat goes alone.
            if (batch.tokens[i] == blockTokens && !wholeSources.get(batch.blocks[i]) && !wholePages.get(batch.pages[i]))
            {
                wholeSources.set(batch.blocks[i]);
                wholePages.set(batch.pages[i]);
                wholeBlocks[whole] = batch.blocks[i];
                wholeOffsets[whole] = pageOffset;
                whole++;
            }
            else
            {
                planner.append(layout, batch.blocks[i], batch.tokens[i], pageOffset, ops);
            }
        }
        if (whole > 0)
        {
            planner.append(layout, wholeBlocks, wholeOffsets, whole, blockTokens, ops);
        }
        if (registered.cuda() != null)
        {
            registered.cuda().setDevice(registered.device());
        }
        // Destinations never overlap (the checks above and the planner's), so one submission runs them all.
        try (CopyCompletion completion = registered.executor().submit(ops, 0, poolData))
        {
            counters.add(EngineCounter.DEVICE_BYTES, ops.totalBytes());
            completion.await();
        }
    }

    /** Stops the thread (device requests still queued are answered CLOSED) and releases the CUDA streams. */
    @Override
    void stop()
    {
        super.stop();
        for (final CopyExecutor executor : deviceExecutors.values())
        {
            executor.close();
        }
        deviceExecutors.clear();
    }
}
