package io.kvtier.device;

/**
 * The page-first layout: how the pool keeps one block of KV. One page holds one block's K and V for
 * every layer, contiguous, layer by layer, so that a page is a unit that L3 tiers store and a client
 * reads with one copy. The page's KV payload is the start of the pool frame's payload
 * ({@code PageFrameDescriptor}); a frame whose Page Size exceeds {@link #pageLength} leaves the rest
 * unused.
 *
 * <pre>
 * Page (T = tensorsPerLayer: K and V, or one MLA latent; S = blockBytes = block_tokens * heads * head_dim * element)
 * +--------------------------------+ 0
 * | layer 0, K  [tokens][heads][d] |
 * +--------------------------------+ S
 * | layer 0, V                     |
 * +--------------------------------+ 2S
 * | layer 1, K                     |
 * +--------------------------------+ 3S
 * | ...                            |
 * +--------------------------------+ (L*T - 1) S
 * | layer L-1, V                   |
 * +--------------------------------+ L*T*S = Page Length
 *
 * Slot (layer l, tensor t) at (l*T + t) * S; token n of it at that + n * tokenBytes.
 * A partial block (n valid tokens) fills the first n * tokenBytes of every slot; the rest of
 * each slot is left as it was.
 * </pre>
 */
public final class KvPageDescriptor
{
    private KvPageDescriptor()
    {
    }

    /**
     * @param shape  the KV shape
     * @param layer  a layer
     * @param tensor {@link KvShape#K}, {@link KvShape#V}, or 0 for a latent
     * @return offset of that slot within the page
     */
    public static long slotOffset(final KvShape shape, final int layer, final int tensor)
    {
        return ((long)layer * shape.tensorsPerLayer() + tensor) * shape.blockBytes();
    }

    /**
     * @param shape  the KV shape
     * @param layer  a layer
     * @param tensor a tensor of the layer
     * @param token  a token of the block
     * @return offset of that token's bytes within the page
     */
    public static long tokenOffset(final KvShape shape, final int layer, final int tensor, final int token)
    {
        return slotOffset(shape, layer, tensor) + token * shape.tokenBytes();
    }

    /**
     * @param shape the KV shape
     * @return bytes of KV one page holds
     */
    public static long pageLength(final KvShape shape)
    {
        return shape.pageBytes();
    }

    /**
     * @param shape    the KV shape
     * @param pageSize the pool's page size
     * @throws IllegalArgumentException when a block of this shape does not fit a page
     */
    public static void checkPageSize(final KvShape shape, final long pageSize)
    {
        if (pageSize < pageLength(shape))
        {
            throw new IllegalArgumentException("pageSize=" + pageSize + " is smaller than one block of KV, pageLength=" + pageLength(shape)
                + " (" + shape + ")");
        }
    }
}
