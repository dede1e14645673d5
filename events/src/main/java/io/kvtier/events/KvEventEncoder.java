package io.kvtier.events;

import io.kvtier.engine.events.EventRingDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Collects the events of one batch and encodes it as vLLM's {@code KVEventBatch} in msgpack
 * (docs/kv-events.md, The payload): an array of the time stamp and the events, each event an array whose
 * first element names its type. One page per event: its block hash is the page key's 16 bytes, and it
 * has no parent, no token ids (the engine never sees tokens), block size 0 and no LoRA id.
 */
public final class KvEventEncoder
{
    /** The type name of a stored event. */
    public static final String BLOCK_STORED = "BlockStored";
    /** The type name of a removed event. */
    public static final String BLOCK_REMOVED = "BlockRemoved";
    /** The type name of a cleared event. */
    public static final String ALL_BLOCKS_CLEARED = "AllBlocksCleared";
    /** Bytes of a block hash: the page key, high half first, big-endian. */
    public static final int HASH_LENGTH = 16;

    private final List<String> mediums;
    private final int[] types;
    private final int[] medium;
    private final long[] highs;
    private final long[] lows;
    private final byte[] hash = new byte[HASH_LENGTH];
    private int count;

    /**
     * @param mediums  medium names by medium number (the pool's first, then each tier's)
     * @param capacity most events in a batch
     */
    public KvEventEncoder(final List<String> mediums, final int capacity)
    {
        this.mediums = List.copyOf(mediums);
        this.types = new int[capacity];
        this.medium = new int[capacity];
        this.highs = new long[capacity];
        this.lows = new long[capacity];
    }

    /** @return events collected since the last {@link #encode} */
    public int count()
    {
        return count;
    }

    /** @return whether the batch has room for no more events */
    public boolean isFull()
    {
        return count == types.length;
    }

    /**
     * @param type   a record's type
     * @param medium its medium number
     * @return whether {@link #add} takes them: a known type, and a medium this encoder has a name for
     */
    public boolean accepts(final int type, final int medium)
    {
        return (type == EventRingDescriptor.TYPE_STORED || type == EventRingDescriptor.TYPE_REMOVED || type == EventRingDescriptor.TYPE_CLEARED)
            && medium >= 0 && medium < mediums.size();
    }

    /**
     * Adds one event.
     *
     * @param type    an {@link EventRingDescriptor} record type
     * @param medium  its medium number
     * @param keyHigh the page key's high half
     * @param keyLow  its low half
     */
    public void add(final int type, final int medium, final long keyHigh, final long keyLow)
    {
        if (type != EventRingDescriptor.TYPE_STORED && type != EventRingDescriptor.TYPE_REMOVED && type != EventRingDescriptor.TYPE_CLEARED)
        {
            throw new IllegalArgumentException("event type=" + type + " is none of stored (1), removed (2), cleared (3)");
        }
        if (medium < 0 || medium >= mediums.size())
        {
            throw new IllegalArgumentException("medium=" + medium + " outside [0, " + mediums.size() + "): " + mediums);
        }
        types[count] = type;
        this.medium[count] = medium;
        highs[count] = keyHigh;
        lows[count] = keyLow;
        count++;
    }

    /**
     * Encodes the events collected into one {@code KVEventBatch} and starts an empty batch.
     *
     * @param timestampSeconds the batch's time stamp, seconds since the epoch
     * @return the msgpack bytes
     */
    public byte[] encode(final double timestampSeconds)
    {
        try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker())
        {
            // array_like, omit_defaults: [ts, events]; data_parallel_rank is left out, as for an engine without one.
            packer.packArrayHeader(2);
            packer.packDouble(timestampSeconds);
            packer.packArrayHeader(count);
            for (int i = 0; i < count; i++)
            {
                switch (types[i])
                {
                    case EventRingDescriptor.TYPE_STORED ->
                    {
                        // [tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]
                        packer.packArrayHeader(7);
                        packer.packString(BLOCK_STORED);
                        packHashes(packer, highs[i], lows[i]);
                        packer.packNil();
                        packer.packArrayHeader(0);
                        packer.packInt(0);
                        packer.packNil();
                        packer.packString(mediums.get(medium[i]));
                    }
                    case EventRingDescriptor.TYPE_REMOVED ->
                    {
                        // [tag, block_hashes, medium]
                        packer.packArrayHeader(3);
                        packer.packString(BLOCK_REMOVED);
                        packHashes(packer, highs[i], lows[i]);
                        packer.packString(mediums.get(medium[i]));
                    }
                    default ->
                    {
                        // [tag]
                        packer.packArrayHeader(1);
                        packer.packString(ALL_BLOCKS_CLEARED);
                    }
                }
            }
            count = 0;
            return packer.toByteArray();
        }
        catch (final IOException ex)
        {
            // A buffer packer writes to memory: it has no I/O to fail.
            throw new UncheckedIOException("msgpack encoding of a KV event batch failed", ex);
        }
    }

    private void packHashes(final MessageBufferPacker packer, final long high, final long low) throws IOException
    {
        for (int b = 0; b < 8; b++)
        {
            hash[b] = (byte)(high >>> (56 - 8 * b));
            hash[8 + b] = (byte)(low >>> (56 - 8 * b));
        }
        packer.packArrayHeader(1);
        packer.packBinaryHeader(HASH_LENGTH);
        packer.writePayload(hash);
    }
}
