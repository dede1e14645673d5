package io.kvtier.client;

import io.kvtier.client.protocol.DeviceRequestDescriptor;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * What a REGISTER_KV tells the engine (docs/ipc-protocol.md section 10): where a client's KV blocks
 * live and how they are laid out, so that the engine can copy pool pages into them (DEVICE_LOAD) and
 * out of them (DEVICE_SAVE) without the client touching a byte.
 *
 * <p>The shape is the engine's {@code KvShape}: layers, tensors per layer (2 for K and V, 1 for an MLA
 * latent), tokens per block, KV heads on this rank, head dimension, bytes per element; within one block
 * of one tensor the bytes are {@code [block_tokens][heads][head_dim]}. The arrangement says where the
 * blocks are: SEPARATE (one allocation per layer and tensor, in layer order, K before V), CONTIGUOUS
 * (one allocation, tensor after tensor) or INTERLEAVED (one allocation per layer, each block's K then V).
 *
 * @param handleKind      {@link DeviceRequestDescriptor#HANDLE_CUDA_IPC}, {@link DeviceRequestDescriptor#HANDLE_HOST_FILE} or
 *                        {@link DeviceRequestDescriptor#HANDLE_HOST_FD}
 * @param device          the CUDA ordinal (0 for host files)
 * @param arrangement     one of {@code DeviceRequestDescriptor.ARRANGEMENT_*}
 * @param layers          layers
 * @param tensorsPerLayer 2 or 1
 * @param blockTokens     tokens per block
 * @param heads           KV heads
 * @param headDim         elements per head
 * @param elementBytes    bytes per element
 * @param blocks          blocks in each tensor
 * @param offsets         per allocation, where its tensor (or layer) starts in it
 * @param handles         per allocation, 64 bytes at most: a {@code cudaIpcMemHandle_t}, a path's bytes, or a descriptor's number (u32)
 */
public record KvBufferRegistration(int handleKind, int device, int arrangement, int layers, int tensorsPerLayer, int blockTokens, int heads,
                                   int headDim, int elementBytes, int blocks, long[] offsets, byte[][] handles)
{
    /**
     * @throws IllegalArgumentException if offsets and handles differ in number or a handle is too long
     */
    public KvBufferRegistration
    {
        if (offsets.length != handles.length)
        {
            throw new IllegalArgumentException(offsets.length + " offsets but " + handles.length + " handles");
        }
        for (final byte[] handle : handles)
        {
            if (handle.length > DeviceRequestDescriptor.HANDLE_LENGTH)
            {
                throw new IllegalArgumentException("a handle is " + handle.length + " bytes, more than " + DeviceRequestDescriptor.HANDLE_LENGTH);
            }
        }
    }

    /**
     * KV buffers in host shared-memory files that the engine maps (the client's user must own them).
     *
     * @param arrangement one of {@code DeviceRequestDescriptor.ARRANGEMENT_*}
     * @param shape       layers, tensors per layer, block tokens, heads, head dim, element bytes
     * @param blocks      blocks in each tensor
     * @param files       per allocation, an absolute path of at most 63 bytes
     * @param offsets     per allocation, where its tensor starts in the file
     * @return the registration
     */
    public static KvBufferRegistration hostFiles(final int arrangement, final int[] shape, final int blocks, final Path[] files, final long[] offsets)
    {
        final byte[][] handles = new byte[files.length][];
        for (int i = 0; i < files.length; i++)
        {
            final byte[] name = files[i].toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
            if (name.length >= DeviceRequestDescriptor.HANDLE_LENGTH)
            {
                throw new IllegalArgumentException(files[i] + " is longer than the 63 bytes a handle holds");
            }
            handles[i] = Arrays.copyOf(name, name.length + 1);
        }
        return new KvBufferRegistration(DeviceRequestDescriptor.HANDLE_HOST_FILE, 0, arrangement, shape[0], shape[1], shape[2], shape[3],
            shape[4], shape[5], blocks, offsets.clone(), handles);
    }

    /**
     * KV buffers in files the client passed to the engine as descriptors ({@link IpcConnection#sendDescriptors},
     * protocol 1.2): the engine never opens a path, and maps only what the client itself could write.
     *
     * @param arrangement one of {@code DeviceRequestDescriptor.ARRANGEMENT_*}
     * @param shape       layers, tensors per layer, block tokens, heads, head dim, element bytes
     * @param blocks      blocks in each tensor
     * @param descriptors per allocation, the number {@code sendDescriptors} gave its file
     * @param offsets     per allocation, where its tensor starts in the file
     * @return the registration
     */
    public static KvBufferRegistration hostDescriptors(final int arrangement, final int[] shape, final int blocks, final long[] descriptors,
                                                       final long[] offsets)
    {
        final byte[][] handles = new byte[descriptors.length][];
        for (int i = 0; i < descriptors.length; i++)
        {
            if (descriptors[i] < 0 || descriptors[i] > 0xFFFF_FFFFL)
            {
                throw new IllegalArgumentException("descriptor number " + descriptors[i] + " is not a u32");
            }
            handles[i] = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt((int)descriptors[i]).array();
        }
        return new KvBufferRegistration(DeviceRequestDescriptor.HANDLE_HOST_FD, 0, arrangement, shape[0], shape[1], shape[2], shape[3],
            shape[4], shape[5], blocks, offsets.clone(), handles);
    }

    /** @return the shape fields in wire order, blocks last */
    int[] wireShape()
    {
        return new int[] {layers, tensorsPerLayer, blockTokens, heads, headDim, elementBytes, blocks};
    }
}
