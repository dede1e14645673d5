package io.kvtier.device;

/**
 * The shape of one model's KV cache as both sides agree on it: how many layers, how many tensors per
 * layer (2 for attention that keeps K and V, 1 for multi-head latent attention, which keeps one
 * compressed latent per token), tokens per block, heads, head dimension and element size.
 *
 * <p>Within one block of one tensor both layouts order the bytes the same way,
 * {@code [block_tokens][heads][head_dim]} elements, so a token's bytes are contiguous and a block's
 * first {@code n} tokens are its first {@code n * tokenBytes()} bytes: a copy never reorders inside a
 * block, it only moves whole block slices.
 *
 * @param layers          transformer layers
 * @param tensorsPerLayer 2 (K and V) or 1 (an MLA latent)
 * @param blockTokens     tokens per block (the engine's block size, the pool's page granularity)
 * @param heads           KV heads stored per token on this rank (any count, odd ones included)
 * @param headDim         elements per head
 * @param elementBytes    bytes per element (2 for fp16 and bf16, 1 for fp8)
 */
public record KvShape(int layers, int tensorsPerLayer, int blockTokens, int heads, int headDim, int elementBytes)
{
    /** Index of the K tensor within a layer. */
    public static final int K = 0;
    /** Index of the V tensor within a layer. */
    public static final int V = 1;

    /**
     * @throws IllegalArgumentException naming the first bad field and its value
     */
    public KvShape
    {
        requirePositive("layers", layers);
        requirePositive("blockTokens", blockTokens);
        requirePositive("heads", heads);
        requirePositive("headDim", headDim);
        requirePositive("elementBytes", elementBytes);
        if (tensorsPerLayer != 1 && tensorsPerLayer != 2)
        {
            throw new IllegalArgumentException("tensorsPerLayer=" + tensorsPerLayer + " must be 2 (K and V) or 1 (an MLA latent)");
        }
        try
        {
            Math.multiplyExact(Math.multiplyExact(Math.multiplyExact((long)layers * tensorsPerLayer, blockTokens), (long)heads * headDim),
                elementBytes);
        }
        catch (final ArithmeticException ex)
        {
            throw new IllegalArgumentException("a page of " + layers + " layers, " + blockTokens + " tokens, " + heads + " heads of "
                + headDim + " overflows a long", ex);
        }
    }

    /**
     * Multi-head (or grouped-query) attention: K and V per layer.
     *
     * @param layers       layers
     * @param blockTokens  tokens per block
     * @param heads        KV heads
     * @param headDim      elements per head
     * @param elementBytes bytes per element
     * @return the shape
     */
    public static KvShape keyValue(final int layers, final int blockTokens, final int heads, final int headDim, final int elementBytes)
    {
        return new KvShape(layers, 2, blockTokens, heads, headDim, elementBytes);
    }

    /**
     * Multi-head latent attention (DeepSeek-style): one tensor per layer holding the compressed latent
     * and the rotary part, e.g. 512 + 64 = 576 elements per token.
     *
     * @param layers       layers
     * @param blockTokens  tokens per block
     * @param latentDim    elements per token
     * @param elementBytes bytes per element
     * @return the shape
     */
    public static KvShape latent(final int layers, final int blockTokens, final int latentDim, final int elementBytes)
    {
        return new KvShape(layers, 1, blockTokens, 1, latentDim, elementBytes);
    }

    private static void requirePositive(final String name, final int value)
    {
        if (value <= 0)
        {
            throw new IllegalArgumentException(name + "=" + value + " must be positive");
        }
    }

    /** @return bytes one token takes in one tensor */
    public long tokenBytes()
    {
        return (long)heads * headDim * elementBytes;
    }

    /** @return bytes one block takes in one tensor: a slot of the page */
    public long blockBytes()
    {
        return blockTokens * tokenBytes();
    }

    /** @return tensors in one block across all layers: the slots of a page */
    public int slots()
    {
        return layers * tensorsPerLayer;
    }

    /** @return bytes of one block across all layers and tensors: a page's KV payload */
    public long pageBytes()
    {
        return slots() * blockBytes();
    }
}
