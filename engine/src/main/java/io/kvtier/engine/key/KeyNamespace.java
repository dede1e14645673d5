package io.kvtier.engine.key;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * The namespace every key chain starts from. Pages computed under different models, layouts, ranks
 * or tenants never share a key, even for the same tokens.
 *
 * <p>The root is {@code SHA-256("kvtier:ns:v1" || field(modelId) || field(kvLayout) || u32le(tpRank)
 * || field(tenantSalt))[0:16]} where {@code field(x) = u32le(len(x)) || x} over UTF-8 bytes.
 *
 * @param modelId    the model, e.g. {@code meta-llama/Llama-3.1-8B-Instruct@5206a32}
 * @param kvLayout   everything that changes the bytes of a page: dtype, tokens per page, layer and
 *                   head layout, TP degree, e.g. {@code bf16/page64/layer-first/tp4}
 * @param tpRank     the tensor-parallel rank whose shard the pages hold
 * @param tenantSalt isolates tenants that must not share cache; empty for a shared namespace
 */
public record KeyNamespace(String modelId, String kvLayout, int tpRank, String tenantSalt)
{
    /** Domain tag of the namespace root. */
    public static final String ROOT_TAG = "kvtier:ns:v1";

    /**
     * Validates the fields.
     */
    public KeyNamespace
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

    /**
     * @return the 16-byte root key as {high, low}, the parent of the first page of every chain
     */
    public long[] root()
    {
        final byte[] model = modelId.getBytes(StandardCharsets.UTF_8);
        final byte[] layout = kvLayout.getBytes(StandardCharsets.UTF_8);
        final byte[] salt = tenantSalt.getBytes(StandardCharsets.UTF_8);
        final byte[] tag = ROOT_TAG.getBytes(StandardCharsets.US_ASCII);
        final ByteBuffer buffer = ByteBuffer.allocate(tag.length + 4 + model.length + 4 + layout.length + 4 + 4 + salt.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        buffer.put(tag);
        buffer.putInt(model.length).put(model);
        buffer.putInt(layout.length).put(layout);
        buffer.putInt(tpRank);
        buffer.putInt(salt.length).put(salt);
        final byte[] digest = sha256().digest(buffer.array());
        final ByteBuffer out = ByteBuffer.wrap(digest).order(ByteOrder.BIG_ENDIAN);
        return new long[] {out.getLong(0), out.getLong(8)};
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
