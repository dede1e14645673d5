package io.kvtier.device;

import java.util.Arrays;

/**
 * The layer-first layout: how an inference engine keeps KV on the GPU. Each layer has its K and V
 * tensors of {@code [blocks][block_tokens][heads][head_dim]} (or one latent tensor for MLA), so the
 * bytes of one block are scattered: one slice per layer and tensor, each {@code blockBytes} long.
 *
 * <pre>
 * separate: one allocation per layer and tensor, anywhere (vLLM's per-layer tensors, SGLang's k_buffer/v_buffer)
 *   base[l][t] + b * S -> +-------+-------+-------+-----
 *                         | blk 0 | blk 1 | blk 2 | ...     S = blockBytes
 *                         +-------+-------+-------+-----
 *
 * contiguous: one allocation for everything, tensor after tensor (base[l][t] = base + (l*T + t) * blocks * S)
 *   +----------------------+----------------------+-----+------------------------+
 *   | L0.K blk 0..blocks-1 | L0.V blk 0..blocks-1 | ... | L(L-1).V blk 0..       |
 *   +----------------------+----------------------+-----+------------------------+
 *
 * interleaved: per layer [blocks][T][tokens][heads][d] (FlashInfer's [num_blocks, 2, ...]), K and V of a block adjacent
 *   layerBase[l] -> +------+------+------+------+-----
 *                   | b0.K | b0.V | b1.K | b1.V | ...        block stride = T * S
 *                   +------+------+------+------+-----
 * </pre>
 *
 * <p>Addresses are device addresses relative to a base the executor is given: raw device pointers
 * with a base of 0, or offsets within one allocation (an IPC-opened client buffer, or the host
 * segment that stands in for device memory in the emulation).
 */
public final class LayerFirstLayout
{
    private final KvShape shape;
    private final int blocks;
    private final long[] tensorBase;
    private final long blockStride;

    private LayerFirstLayout(final KvShape shape, final int blocks, final long[] tensorBase, final long blockStride)
    {
        if (blocks <= 0)
        {
            throw new IllegalArgumentException("blocks=" + blocks + " must be positive");
        }
        if (tensorBase.length != shape.slots())
        {
            throw new IllegalArgumentException("tensorBase.length=" + tensorBase.length + " must be layers * tensorsPerLayer=" + shape.slots());
        }
        if (blockStride < shape.blockBytes())
        {
            throw new IllegalArgumentException("blockStride=" + blockStride + " is less than blockBytes=" + shape.blockBytes());
        }
        for (final long base : tensorBase)
        {
            if (base < 0)
            {
                throw new IllegalArgumentException("tensor base " + base + " is negative");
            }
        }
        this.shape = shape;
        this.blocks = blocks;
        this.tensorBase = tensorBase.clone();
        this.blockStride = blockStride;
    }

    /**
     * One allocation per layer and tensor.
     *
     * @param shape      the KV shape
     * @param blocks     blocks per tensor
     * @param tensorBase address of each tensor, index {@code layer * tensorsPerLayer + tensor}
     * @return the layout
     */
    public static LayerFirstLayout separate(final KvShape shape, final int blocks, final long... tensorBase)
    {
        return new LayerFirstLayout(shape, blocks, tensorBase, shape.blockBytes());
    }

    /**
     * One allocation holding every tensor, one after another.
     *
     * @param shape  the KV shape
     * @param blocks blocks per tensor
     * @param base   address of the allocation
     * @return the layout
     */
    public static LayerFirstLayout contiguous(final KvShape shape, final int blocks, final long base)
    {
        final long[] bases = new long[shape.slots()];
        for (int i = 0; i < bases.length; i++)
        {
            bases[i] = base + (long)i * blocks * shape.blockBytes();
        }
        return new LayerFirstLayout(shape, blocks, bases, shape.blockBytes());
    }

    /**
     * Per layer, the tensors of one block side by side: {@code [blocks][T][tokens][heads][head_dim]}.
     *
     * @param shape     the KV shape
     * @param blocks    blocks per layer
     * @param layerBase address of each layer's allocation
     * @return the layout
     */
    public static LayerFirstLayout interleaved(final KvShape shape, final int blocks, final long... layerBase)
    {
        if (layerBase.length != shape.layers())
        {
            throw new IllegalArgumentException("layerBase.length=" + layerBase.length + " must be layers=" + shape.layers());
        }
        final long[] bases = new long[shape.slots()];
        for (int l = 0; l < shape.layers(); l++)
        {
            for (int t = 0; t < shape.tensorsPerLayer(); t++)
            {
                bases[l * shape.tensorsPerLayer() + t] = layerBase[l] + t * shape.blockBytes();
            }
        }
        return new LayerFirstLayout(shape, blocks, bases, shape.tensorsPerLayer() * shape.blockBytes());
    }

    /** @return the KV shape */
    public KvShape shape()
    {
        return shape;
    }

    /** @return blocks per tensor */
    public int blocks()
    {
        return blocks;
    }

    /** @return bytes from one block of a tensor to the next */
    public long blockStride()
    {
        return blockStride;
    }

    /**
     * @param layer  a layer
     * @param tensor a tensor of it
     * @return the tensor's address
     */
    public long tensorBase(final int layer, final int tensor)
    {
        return tensorBase[layer * shape.tensorsPerLayer() + tensor];
    }

    /**
     * @param layer  a layer
     * @param tensor a tensor of it
     * @param block  a block
     * @return address of that block's slice of the tensor
     */
    public long blockAddress(final int layer, final int tensor, final int block)
    {
        checkBlock(block);
        return tensorBase(layer, tensor) + block * blockStride;
    }

    /**
     * @param layer  a layer
     * @param tensor a tensor of it
     * @param block  a block
     * @param token  a token of the block
     * @return address of that token's bytes
     */
    public long tokenAddress(final int layer, final int tensor, final int block, final int token)
    {
        return blockAddress(layer, tensor, block) + token * shape.tokenBytes();
    }

    /** @return one past the highest address any block of the layout touches */
    public long extent()
    {
        long end = 0;
        for (final long base : tensorBase)
        {
            end = Math.max(end, base + (blocks - 1) * blockStride + shape.blockBytes());
        }
        return end;
    }

    /**
     * @param block a block index
     * @throws IndexOutOfBoundsException when the layout has no such block
     */
    public void checkBlock(final int block)
    {
        if (block < 0 || block >= blocks)
        {
            throw new IndexOutOfBoundsException("block=" + block + " is outside blocks=" + blocks);
        }
    }

    @Override
    public String toString()
    {
        return "LayerFirstLayout{" + shape + ", blocks=" + blocks + ", blockStride=" + blockStride + ", tensorBase="
            + Arrays.toString(tensorBase) + "}";
    }
}
