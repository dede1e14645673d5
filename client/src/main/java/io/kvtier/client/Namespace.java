package io.kvtier.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * A key namespace (docs/keys.md): pages computed under different models, layouts, ranks or tenants
 * never share a key, even for the same tokens. Its root is the parent of the first page of every
 * chain and is what HELLO sends for each namespace the client uses.
 *
 * <p>The client computes keys itself, byte for byte as docs/keys.md says, with nothing of the
 * engine's code: {@code root = SHA-256("kvtier:ns:v1" || field(modelId) || field(kvLayout) ||
 * u32le(tpRank) || field(tenantSalt))[0:16]}, {@code field(x) = u32le(len(x)) || x} over UTF-8.
 *
 * @param modelId    the model and its revision, e.g. {@code meta-llama/Llama-3.1-8B-Instruct@5206a32}
 * @param kvLayout   everything that changes a page's bytes, e.g. {@code bf16/page16/layer-first/tp4}
 * @param tpRank     the tensor-parallel rank whose shard the pages hold
 * @param tenantSalt empty to share across tenants, or a per-tenant secret
 */
public record Namespace(String modelId, String kvLayout, int tpRank, String tenantSalt)
{
    /** Domain tag of the namespace root. */
    public static final String ROOT_TAG = "kvtier:ns:v1";

    /** Validates the fields. */
    public Namespace
    {
        Objects.requireNonNull(modelId, "modelId");
        Objects.requireNonNull(kvLayout, "kvLayout");
        Objects.requireNonNull(tenantSalt, "tenantSalt");
        if (modelId.isEmpty())
        {
            throw new IllegalArgumentException("modelId must not be empty");
        }
        if (tpRank < 0)
        {
            throw new IllegalArgumentException("tpRank=" + tpRank + " must be >= 0");
        }
    }

    /** @return the root's 16 bytes, as HELLO carries them */
    public byte[] rootBytes()
    {
        final byte[] model = modelId.getBytes(StandardCharsets.UTF_8);
        final byte[] layout = kvLayout.getBytes(StandardCharsets.UTF_8);
        final byte[] salt = tenantSalt.getBytes(StandardCharsets.UTF_8);
        final byte[] tag = ROOT_TAG.getBytes(StandardCharsets.US_ASCII);
        final ByteBuffer message = ByteBuffer.allocate(tag.length + 4 + model.length + 4 + layout.length + 4 + 4 + salt.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        message.put(tag);
        message.putInt(model.length).put(model);
        message.putInt(layout.length).put(layout);
        message.putInt(tpRank);
        message.putInt(salt.length).put(salt);
        final byte[] root = new byte[16];
        System.arraycopy(sha256().digest(message.array()), 0, root, 0, 16);
        return root;
    }

    /**
     * The namespace's tag (docs/ipc-protocol.md section 8): what the engine stores with every page
     * reserved under this namespace, so that it gives the page only to requests naming it.
     *
     * @return the root's first 8 bytes as a big-endian long, or 1 if those are 0 (0 means no namespace)
     */
    public long tag()
    {
        return tagOf(rootBytes(), 0);
    }

    /**
     * @param roots  bytes holding a 16-byte root, as HELLO carries it
     * @param offset where the root starts
     * @return its tag, as {@link #tag()}
     */
    public static long tagOf(final byte[] roots, final int offset)
    {
        final long high = ByteBuffer.wrap(roots, offset, 8).getLong();
        return high == 0 ? 1 : high;
    }

    /** @return the root's first 8 bytes as a big-endian long (a key's {@code high}) */
    public long rootHigh()
    {
        return ByteBuffer.wrap(rootBytes()).getLong(0);
    }

    /** @return the root's last 8 bytes as a big-endian long (a key's {@code low}) */
    public long rootLow()
    {
        return ByteBuffer.wrap(rootBytes()).getLong(8);
    }

    static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("every Java platform must provide SHA-256", ex);
        }
    }
}
