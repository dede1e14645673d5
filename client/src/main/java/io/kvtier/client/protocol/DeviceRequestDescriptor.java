package io.kvtier.client.protocol;

/**
 * The bodies of the device operations (docs/ipc-protocol.md section 10, version 1.1): REGISTER_KV
 * names a client's KV buffers and their layout, DEVICE_LOAD and DEVICE_SAVE copy between those buffers
 * and the pool pages the slots hold. Both follow the 32-byte request header ({@link RequestDescriptor}).
 *
 * <p>REGISTER_KV (First Slot and Count 0), 80 + 72 x A bytes:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 Request header (32 bytes)                   ... 0
 *  +---------------------------------------------------------------+
 *  |      Handle Kind (u32): 1 CUDA_IPC, 2 HOST_FILE               | 32
 *  +---------------------------------------------------------------+
 *  |      Device (i32): CUDA ordinal as the engine numbers them    | 36
 *  +-------------------------------+-------------------------------+
 *  |  Arrangement (u16) 1 SEPARATE |        Reserved (0)           | 40
 *  |  2 CONTIGUOUS 3 INTERLEAVED   |                               |
 *  +-------------------------------+-------------------------------+
 *  |      Layers (i32)                                             | 44
 *  +---------------------------------------------------------------+
 *  |      Tensors per Layer (i32): 2 (K, V) or 1 (MLA latent)      | 48
 *  +---------------------------------------------------------------+
 *  |      Block Tokens (i32)                                       | 52
 *  +---------------------------------------------------------------+
 *  |      Heads (i32)                                              | 56
 *  +---------------------------------------------------------------+
 *  |      Head Dim (i32)                                           | 60
 *  +---------------------------------------------------------------+
 *  |      Element Bytes (i32)                                      | 64
 *  +---------------------------------------------------------------+
 *  |      Blocks (i32): blocks in each tensor                      | 68
 *  +---------------------------------------------------------------+
 *  |      Allocation Count A (i32): SEPARATE L x T, CONTIGUOUS 1,  | 72
 *  |      INTERLEAVED L                                            |
 *  +---------------------------------------------------------------+
 *  |      Reserved (0)                                             | 76
 *  +---------------------------------------------------------------+
 *  |      Allocations: A x 72 bytes, below                       ... 80
 *  +---------------------------------------------------------------+
 *
 *  Allocation i (at 80 + 72 x i):
 *  +---------------------------------------------------------------+
 *  |      Offset (u64): where tensor (or layer) i starts, bytes     | 0
 *  |      into the allocation the handle names                     |
 *  +---------------------------------------------------------------+
 *  |      Handle (64 bytes): a cudaIpcMemHandle_t (CUDA_IPC), or   | 8
 *  |      an absolute path, NUL-terminated (HOST_FILE)           ...
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>DEVICE_LOAD and DEVICE_SAVE (First Slot, Count: the slots), 40 + 8 x Count bytes:
 * <pre>
 *  +---------------------------------------------------------------+
 *  |                 Request header (32 bytes)                   ... 0
 *  +---------------------------------------------------------------+
 *  |      Layout Id (i32): REGISTER_KV's Result Count              | 32
 *  +---------------------------------------------------------------+
 *  |      Reserved (0)                                             | 36
 *  +---------------------------------------------------------------+
 *  |      Block (i32) of slot First + i                            | 40 + 8i
 *  +---------------------------------------------------------------+
 *  |      Valid Tokens (i32) of it: 1..Block Tokens                | 44 + 8i
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class DeviceRequestDescriptor
{
    /** Handle kind: a CUDA IPC memory handle ({@code cudaIpcGetMemHandle}). */
    public static final int HANDLE_CUDA_IPC = 1;
    /** Handle kind: a file in host shared memory the engine maps (CPU inference, or a node without a GPU). */
    public static final int HANDLE_HOST_FILE = 2;
    /**
     * Handle Kind 3 (version 1.2): a file the client passed as a descriptor over its socket (a
     * DESCRIPTORS message sent before the request); the handle's first 4 bytes are the descriptor's
     * number, counted from 0 in the order the engine received them, and the other 60 are 0.
     */
    public static final int HANDLE_HOST_FD = 3;

    /** Arrangement: one allocation per layer and tensor. */
    public static final int ARRANGEMENT_SEPARATE = 1;
    /** Arrangement: one allocation, tensor after tensor. */
    public static final int ARRANGEMENT_CONTIGUOUS = 2;
    /** Arrangement: per layer, each block's K then V. */
    public static final int ARRANGEMENT_INTERLEAVED = 3;

    /** Offset of the handle kind. */
    public static final int HANDLE_KIND_OFFSET = 32;
    /** Offset of the device ordinal. */
    public static final int DEVICE_OFFSET = 36;
    /** Offset of the u16 arrangement. */
    public static final int ARRANGEMENT_OFFSET = 40;
    /** Offset of the layers. */
    public static final int LAYERS_OFFSET = 44;
    /** Offset of the tensors per layer. */
    public static final int TENSORS_OFFSET = 48;
    /** Offset of the tokens per block. */
    public static final int BLOCK_TOKENS_OFFSET = 52;
    /** Offset of the heads. */
    public static final int HEADS_OFFSET = 56;
    /** Offset of the head dimension. */
    public static final int HEAD_DIM_OFFSET = 60;
    /** Offset of the element size. */
    public static final int ELEMENT_BYTES_OFFSET = 64;
    /** Offset of the blocks per tensor. */
    public static final int BLOCKS_OFFSET = 68;
    /** Offset of the allocation count. */
    public static final int ALLOCATION_COUNT_OFFSET = 72;
    /** Where the allocations start. */
    public static final int ALLOCATIONS_OFFSET = 80;
    /** Bytes of one allocation entry. */
    public static final int ALLOCATION_LENGTH = 72;
    /** Offset of the handle inside an allocation entry. */
    public static final int ALLOCATION_HANDLE_OFFSET = 8;
    /** Bytes of a handle: a {@code cudaIpcMemHandle_t}, or a path and its NUL. */
    public static final int HANDLE_LENGTH = 64;
    /** Most allocations one registration may name (256 layers of K and V). */
    public static final int MAX_ALLOCATIONS = 512;

    /** Offset of a device copy's layout id. */
    public static final int LAYOUT_ID_OFFSET = 32;
    /** Where a device copy's entries start. */
    public static final int COPY_ENTRIES_OFFSET = 40;
    /** Bytes of one device copy entry: block, valid tokens. */
    public static final int COPY_ENTRY_LENGTH = 8;

    /** Most layouts one client may register (a device per layout, say). */
    public static final int MAX_LAYOUTS = 8;

    /** REGISTER_KV refused, Result Count: a shape field is out of range (not positive, tensors not 1 or 2). */
    public static final int DETAIL_SHAPE = 1;
    /** REGISTER_KV refused: the arrangement is not 1, 2 or 3. */
    public static final int DETAIL_ARRANGEMENT = 2;
    /** REGISTER_KV refused: the handle kind is not 1 or 2. */
    public static final int DETAIL_HANDLE_KIND = 3;
    /** REGISTER_KV refused: the allocation count does not match the arrangement, or exceeds {@link #MAX_ALLOCATIONS}. */
    public static final int DETAIL_ALLOCATION_COUNT = 4;
    /** REGISTER_KV refused: CUDA_IPC, but the engine has no CUDA device (the engine logs why). */
    public static final int DETAIL_NO_DEVICE = 5;
    /** REGISTER_KV refused: a handle did not open (CUDA's error, or a file that is missing, not regular, or not the peer's). */
    public static final int DETAIL_OPEN_FAILED = 6;
    /** REGISTER_KV refused: an allocation is smaller than the layout needs from its offset. */
    public static final int DETAIL_TOO_SMALL = 7;
    /** REGISTER_KV refused: the client already has {@link #MAX_LAYOUTS} layouts. */
    public static final int DETAIL_TOO_MANY_LAYOUTS = 8;
    /** REGISTER_KV refused: a page of this shape is larger than the pool's page size. */
    public static final int DETAIL_PAGE_SIZE = 9;

    private DeviceRequestDescriptor()
    {
    }

    /**
     * @param allocations A
     * @return the Length of a REGISTER_KV request naming that many allocations
     */
    public static long registerLength(final int allocations)
    {
        return ALLOCATIONS_OFFSET + (long)ALLOCATION_LENGTH * allocations;
    }

    /**
     * @param count the slots
     * @return the Length of a DEVICE_LOAD or DEVICE_SAVE request for that many slots
     */
    public static long copyLength(final int count)
    {
        return COPY_ENTRIES_OFFSET + (long)COPY_ENTRY_LENGTH * count;
    }

    /**
     * @param detail a refused REGISTER_KV's Result Count
     * @return its name, for messages
     */
    public static String detailName(final int detail)
    {
        return switch (detail)
        {
            case DETAIL_SHAPE -> "SHAPE";
            case DETAIL_ARRANGEMENT -> "ARRANGEMENT";
            case DETAIL_HANDLE_KIND -> "HANDLE_KIND";
            case DETAIL_ALLOCATION_COUNT -> "ALLOCATION_COUNT";
            case DETAIL_NO_DEVICE -> "NO_DEVICE";
            case DETAIL_OPEN_FAILED -> "OPEN_FAILED";
            case DETAIL_TOO_SMALL -> "TOO_SMALL";
            case DETAIL_TOO_MANY_LAYOUTS -> "TOO_MANY_LAYOUTS";
            case DETAIL_PAGE_SIZE -> "PAGE_SIZE";
            default -> "detail " + detail;
        };
    }
}
