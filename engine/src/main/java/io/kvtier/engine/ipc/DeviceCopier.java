package io.kvtier.engine.ipc;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.device.CopyCompletion;
import io.kvtier.device.CopyDirection;
import io.kvtier.device.CopyOps;
import io.kvtier.device.CopyPlanBuilder;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.pool.PageMetadata;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.Reservation;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.BitSet;

/**
 * The {@code kvtier-device} thread: runs the device operations of IPC clients (docs/ipc-protocol.md
 * section 10). Its {@link KvRegistrations} opens the KV buffers a client registers (CUDA IPC handles,
 * or host shared-memory files); it copies between those buffers and the pool pages the client's slots
 * hold, with the layouts and copy plans of the device module, on the device's CUDA stream or as host copies.
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
    private final KvRegistrations registrations;
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
        this.registrations = new KvRegistrations(pool);
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
                case MessageType.REGISTER_KV -> registrations.register(client);
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
            if (!Reservation.isHeldBy(metadata, page, word, generations[slot], client.clientId()))
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
            registered.cuda().makeCurrent();
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
        registrations.close();
    }
}
