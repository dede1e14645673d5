package io.kvtier.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * Keys from an inference engine's own page ids (docs/keys.md, "Keys from an engine's own page ids"):
 * SGLang names a page by a chained SHA-256 hex string, vLLM a block by its block hash and KV cache
 * group index (its OffloadKey). The key is {@code SHA-256(tag || root || u32le(len(id)) || id)[0:16]}
 * with a tag per scheme, so that instances of one engine share keys, the namespace's tenant salt keeps
 * tenants apart, and no scheme's key is another's. Not chained again: the engine's id already is.
 */
public final class EnginePageKeys
{
    /** Domain tag of keys from SGLang's page hashes. */
    public static final String SGLANG_TAG = "kvtier:sglang:v1";

    /** Domain tag of keys from vLLM's OffloadKeys. */
    public static final String VLLM_TAG = "kvtier:vllm:v1";

    private EnginePageKeys()
    {
    }

    /**
     * @param namespace the namespace the page is in
     * @param pageHash  SGLang's page key text, taken as is (UTF-8)
     * @return the page's 16-byte kvtier key
     */
    public static byte[] sglang(final Namespace namespace, final String pageHash)
    {
        Objects.requireNonNull(pageHash, "pageHash");
        if (pageHash.isEmpty())
        {
            throw new IllegalArgumentException("an SGLang page hash must not be empty");
        }
        return key(SGLANG_TAG, namespace, pageHash.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param namespace  the namespace the block is in
     * @param blockHash  vLLM's block hash as bytes (an int hash as 32 bytes big-endian)
     * @param groupIndex the KV cache group index, unsigned 32-bit (0 with one group)
     * @return the block's 16-byte kvtier key
     */
    public static byte[] vllm(final Namespace namespace, final byte[] blockHash, final int groupIndex)
    {
        Objects.requireNonNull(blockHash, "blockHash");
        if (blockHash.length == 0)
        {
            throw new IllegalArgumentException("a vLLM block hash must not be empty");
        }
        final byte[] offloadKey = ByteBuffer.allocate(blockHash.length + 4).put(blockHash).putInt(groupIndex).array();
        return key(VLLM_TAG, namespace, offloadKey);
    }

    private static byte[] key(final String tag, final Namespace namespace, final byte[] id)
    {
        final MessageDigest digest = Namespace.sha256();
        digest.update(tag.getBytes(StandardCharsets.US_ASCII));
        digest.update(namespace.rootBytes());
        digest.update(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(id.length).array());
        digest.update(id);
        final byte[] key = new byte[16];
        System.arraycopy(digest.digest(), 0, key, 0, 16);
        return key;
    }
}
