package io.kvtier.client.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * HELLO and WELCOME, the two messages of the socket (docs/ipc-protocol.md section 2). They are sent
 * once per client, so these helpers work on heap {@link ByteBuffer}s and may allocate.
 *
 * <pre>
 * HELLO (client to engine), 24 + 16 x N bytes:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 Magic 0x4C4C4548 ("HELL")                     |  0
 *  +-------------------------------+-------------------------------+
 *  |        Major Version (1)      |        Minor Version (2)      |  4
 *  +-------------------------------+-------------------------------+
 *  |                  Max Keys wanted (1..65536)                   |  8
 *  +---------------------------------------------------------------+
 *  |                 Namespace Count N (0..16)                     | 12
 *  +---------------------------------------------------------------+
 *  |                 Client PID (informational)                    | 16
 *  +---------------------------------------------------------------+
 *  |                       Reserved (0)                            | 20
 *  +---------------------------------------------------------------+
 *  |          Namespace roots: N x 16 bytes (keys.md "root")      ... 24
 *  +---------------------------------------------------------------+
 *
 * WELCOME (engine to client), 72 bytes plus three paths (each u32 length + UTF-8):
 *  +---------------------------------------------------------------+
 *  |                 Magic 0x43574C45 ("ELWC")                     |  0
 *  |   Status (0 accepted; else a handshake error code)            |  4
 *  |                        Client Id                              |  8
 *  |                     Max Keys granted                          | 12
 *  |                        Epoch (u64)                            | 16
 *  |                      Page Size (u32)                          | 24
 *  |                      Page Count (u32)                         | 28
 *  |               Data Offset (u64): where page 0 starts          | 32
 *  |          Frame Length (u64): distance between pages           | 40
 *  |                Ring Capacity (u32, each ring)                 | 48
 *  |        Client Timeout (u32 ms): silence that ends a client     | 52
 *  |        Max Message Length (u32): longest request record       | 56
 *  |        Engine Minor Version (u32; 1.2 on; 0 from older)       | 60
 *  |        Descriptors (u32): 3 attached (1.2 sessions), or 0      | 64
 *  |                       Reserved (0)                            | 68
 *  |  Pool path, control path, ring path: each u32 length + UTF-8 ... 72
 *  +---------------------------------------------------------------+
 *
 * DESCRIPTORS (client to engine, after the WELCOME of a 1.2 session), 8 bytes, with Count
 * descriptors attached to them (SCM_RIGHTS):
 *  +---------------------------------------------------------------+
 *  |                 Magic 0x4446564B ("KVFD")                     |  0
 *  |                 Count (u32, 1..16)                            |  4
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * A refused WELCOME (Status not 0) is the 72-byte header followed by one path-shaped field holding
 * the engine's message. In a session of minor version 2 or later (both sides announce at least 2),
 * the WELCOME's first byte carries three descriptors, in this order: the pool file, the control file
 * and the client's ring file, each open read-write; the client maps those, not the paths, and the ring
 * path is empty (the ring has no name).
 */
public final class HandshakeDescriptor
{
    /** "HELL" as a little-endian u32. */
    public static final int HELLO_MAGIC = 0x4C4C4548;
    /** "ELWC" as a little-endian u32. */
    public static final int WELCOME_MAGIC = 0x43574C45;
    /** The major version this code speaks. */
    public static final int MAJOR_VERSION = 1;
    /** The minor version this code speaks. */
    public static final int MINOR_VERSION = 3;
    /** The first minor version whose sessions pass descriptors over the socket. */
    public static final int DESCRIPTORS_MINOR_VERSION = 2;
    /** The first minor version that knows LOOKUP_AND_LOCK and COMMIT_AND_RELEASE. */
    public static final int COMBINED_MINOR_VERSION = 3;
    /** How many descriptors a 1.2 WELCOME carries: pool, control file, ring. */
    public static final int WELCOME_DESCRIPTOR_COUNT = 3;

    /** HELLO: offset of the magic. */
    public static final int HELLO_MAGIC_OFFSET = 0;
    /** HELLO: offset of the u16 major version. */
    public static final int HELLO_MAJOR_VERSION_OFFSET = 4;
    /** HELLO: offset of the u16 minor version. */
    public static final int HELLO_MINOR_VERSION_OFFSET = 6;
    /** HELLO: offset of the slots wanted. */
    public static final int HELLO_MAX_KEYS_OFFSET = 8;
    /** HELLO: offset of the namespace count. */
    public static final int HELLO_NAMESPACE_COUNT_OFFSET = 12;
    /** HELLO: offset of the client's pid. */
    public static final int HELLO_CLIENT_PID_OFFSET = 16;
    /** HELLO: offset of the reserved word. */
    public static final int HELLO_RESERVED_OFFSET = 20;
    /** HELLO: length of the fixed part; namespace roots follow. */
    public static final int HELLO_HEADER_LENGTH = 24;
    /** HELLO: bytes of one namespace root. */
    public static final int NAMESPACE_ROOT_LENGTH = 16;
    /** HELLO: most slots a client may ask for. */
    public static final int MAX_KEYS_LIMIT = 65_536;
    /** HELLO: most namespaces a client may name. */
    public static final int MAX_NAMESPACES = 16;
    /** HELLO: its longest form. */
    public static final int HELLO_MAX_LENGTH = HELLO_HEADER_LENGTH + MAX_NAMESPACES * NAMESPACE_ROOT_LENGTH;

    /** WELCOME: offset of the magic. */
    public static final int WELCOME_MAGIC_OFFSET = 0;
    /** WELCOME: offset of the status. */
    public static final int WELCOME_STATUS_OFFSET = 4;
    /** WELCOME: offset of the client id. */
    public static final int WELCOME_CLIENT_ID_OFFSET = 8;
    /** WELCOME: offset of the slots granted. */
    public static final int WELCOME_MAX_KEYS_OFFSET = 12;
    /** WELCOME: offset of the epoch. */
    public static final int WELCOME_EPOCH_OFFSET = 16;
    /** WELCOME: offset of the page size. */
    public static final int WELCOME_PAGE_SIZE_OFFSET = 24;
    /** WELCOME: offset of the page count. */
    public static final int WELCOME_PAGE_COUNT_OFFSET = 28;
    /** WELCOME: offset of the pool file offset of page 0. */
    public static final int WELCOME_DATA_OFFSET_OFFSET = 32;
    /** WELCOME: offset of the distance between pages. */
    public static final int WELCOME_FRAME_LENGTH_OFFSET = 40;
    /** WELCOME: offset of each ring's capacity. */
    public static final int WELCOME_RING_CAPACITY_OFFSET = 48;
    /** WELCOME: offset of the client timeout in ms. */
    public static final int WELCOME_CLIENT_TIMEOUT_OFFSET = 52;
    /** WELCOME: offset of the longest request record. */
    public static final int WELCOME_MAX_MESSAGE_LENGTH_OFFSET = 56;
    /** WELCOME: offset of the engine's minor version (0 from an engine older than 1.2). */
    public static final int WELCOME_ENGINE_MINOR_VERSION_OFFSET = 60;
    /** WELCOME: offset of the count of descriptors attached to the WELCOME. */
    public static final int WELCOME_DESCRIPTORS_OFFSET = 64;
    /** WELCOME: offset of the reserved word. */
    public static final int WELCOME_RESERVED_OFFSET = 68;
    /** WELCOME: length of the fixed part; the paths follow. */
    public static final int WELCOME_HEADER_LENGTH = 72;
    /** WELCOME: the longest path (or message) field this code writes or accepts. */
    public static final int MAX_PATH_BYTES = 4096;

    /** DESCRIPTORS: "KVFD" as a little-endian u32. */
    public static final int DESCRIPTORS_MAGIC = 0x4446564B;
    /** DESCRIPTORS: offset of the magic. */
    public static final int DESCRIPTORS_MAGIC_OFFSET = 0;
    /** DESCRIPTORS: offset of the count of descriptors attached. */
    public static final int DESCRIPTORS_COUNT_OFFSET = 4;
    /** DESCRIPTORS: the message's length. */
    public static final int DESCRIPTORS_LENGTH = 8;
    /** DESCRIPTORS: most descriptors one message carries. */
    public static final int DESCRIPTORS_MAX_COUNT = 16;
    /** Most descriptors a client may have sent and not yet named in a registration. */
    public static final int DESCRIPTORS_MAX_HELD = 64;

    private HandshakeDescriptor()
    {
    }

    /**
     * A HELLO's fields.
     *
     * @param magic          its magic
     * @param majorVersion   its major version
     * @param minorVersion   its minor version
     * @param maxKeys        slots wanted
     * @param clientPid      the client's pid
     * @param reserved       the reserved word (0)
     * @param namespaceRoots N roots of 16 bytes each, as on the wire
     */
    public record Hello(int magic, int majorVersion, int minorVersion, int maxKeys, int clientPid, int reserved, byte[] namespaceRoots)
    {
        /** @return N */
        public int namespaceCount()
        {
            return namespaceRoots.length / NAMESPACE_ROOT_LENGTH;
        }

        /** @return the HELLO's bytes, little-endian */
        public ByteBuffer encode()
        {
            final ByteBuffer buffer = ByteBuffer.allocate(HELLO_HEADER_LENGTH + namespaceRoots.length).order(ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(magic).putShort((short)majorVersion).putShort((short)minorVersion).putInt(maxKeys)
                .putInt(namespaceRoots.length / NAMESPACE_ROOT_LENGTH).putInt(clientPid).putInt(reserved).put(namespaceRoots);
            return buffer.flip();
        }

        /**
         * @param header the first {@link #HELLO_HEADER_LENGTH} bytes, little-endian
         * @return N as the HELLO states it (unchecked)
         */
        public static int namespaceCount(final ByteBuffer header)
        {
            return header.order(ByteOrder.LITTLE_ENDIAN).getInt(HELLO_NAMESPACE_COUNT_OFFSET);
        }

        /**
         * @param header the fixed part
         * @param roots  the N roots that followed it
         * @return the HELLO
         */
        public static Hello decode(final ByteBuffer header, final byte[] roots)
        {
            header.order(ByteOrder.LITTLE_ENDIAN);
            return new Hello(header.getInt(HELLO_MAGIC_OFFSET), header.getShort(HELLO_MAJOR_VERSION_OFFSET) & 0xFFFF,
                header.getShort(HELLO_MINOR_VERSION_OFFSET) & 0xFFFF, header.getInt(HELLO_MAX_KEYS_OFFSET), header.getInt(HELLO_CLIENT_PID_OFFSET),
                header.getInt(HELLO_RESERVED_OFFSET), roots);
        }
    }

    /**
     * A WELCOME's fields.
     *
     * @param status           0 accepted, else an {@link ErrorCode}
     * @param clientId         the client's id
     * @param maxKeys          slots granted
     * @param epoch            the pool's epoch
     * @param pageSize         payload bytes per page
     * @param pageCount        pages in the pool
     * @param dataOffset       pool file offset of page 0
     * @param frameLength      distance between pages
     * @param ringCapacity     each ring's capacity
     * @param clientTimeoutMs  silence that ends a client
     * @param maxMessageLength longest request record
     * @param engineMinorVersion the engine's minor version (0 from an engine older than 1.2)
     * @param descriptors      descriptors attached to the WELCOME: 3 in a session of minor version 2 or later, else 0
     * @param poolPath         the pool file (or, refused, the engine's message)
     * @param controlPath      the control file
     * @param ringPath         the client's ring file, empty when its descriptor is attached
     */
    public record Welcome(int status, int clientId, int maxKeys, long epoch, int pageSize, int pageCount, long dataOffset, long frameLength,
                          int ringCapacity, int clientTimeoutMs, int maxMessageLength, int engineMinorVersion, int descriptors, String poolPath,
                          String controlPath, String ringPath)
    {
        /**
         * @param status  why the HELLO was refused
         * @param message the engine's words
         * @return a refusal
         */
        public static Welcome refused(final ErrorCode status, final String message)
        {
            return new Welcome(status.code(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, MINOR_VERSION, 0, message, null, null);
        }

        /** @return the WELCOME's bytes, little-endian */
        public ByteBuffer encode()
        {
            final byte[][] paths = status == 0
                ? new byte[][] {utf8(poolPath), utf8(controlPath), utf8(ringPath)}
                : new byte[][] {utf8(poolPath)};
            int length = WELCOME_HEADER_LENGTH;
            for (final byte[] path : paths)
            {
                length += 4 + path.length;
            }
            final ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(WELCOME_MAGIC).putInt(status).putInt(clientId).putInt(maxKeys).putLong(epoch).putInt(pageSize).putInt(pageCount)
                .putLong(dataOffset).putLong(frameLength).putInt(ringCapacity).putInt(clientTimeoutMs).putInt(maxMessageLength).putInt(engineMinorVersion)
                .putInt(descriptors).putInt(0);
            for (final byte[] path : paths)
            {
                buffer.putInt(path.length).put(path);
            }
            return buffer.flip();
        }

        /**
         * @param header the fixed part, {@link #WELCOME_HEADER_LENGTH} bytes
         * @param paths  the path fields that followed (one, the message, when refused)
         * @return the WELCOME
         * @throws IllegalArgumentException if the magic is wrong
         */
        public static Welcome decode(final ByteBuffer header, final String[] paths)
        {
            header.order(ByteOrder.LITTLE_ENDIAN);
            if (header.getInt(WELCOME_MAGIC_OFFSET) != WELCOME_MAGIC)
            {
                throw new IllegalArgumentException("not a WELCOME: magic " + Integer.toHexString(header.getInt(WELCOME_MAGIC_OFFSET)));
            }
            return new Welcome(header.getInt(WELCOME_STATUS_OFFSET), header.getInt(WELCOME_CLIENT_ID_OFFSET), header.getInt(WELCOME_MAX_KEYS_OFFSET),
                header.getLong(WELCOME_EPOCH_OFFSET), header.getInt(WELCOME_PAGE_SIZE_OFFSET), header.getInt(WELCOME_PAGE_COUNT_OFFSET),
                header.getLong(WELCOME_DATA_OFFSET_OFFSET), header.getLong(WELCOME_FRAME_LENGTH_OFFSET), header.getInt(WELCOME_RING_CAPACITY_OFFSET),
                header.getInt(WELCOME_CLIENT_TIMEOUT_OFFSET), header.getInt(WELCOME_MAX_MESSAGE_LENGTH_OFFSET),
                header.getInt(WELCOME_ENGINE_MINOR_VERSION_OFFSET), header.getInt(WELCOME_DESCRIPTORS_OFFSET),
                paths.length > 0 ? paths[0] : null, paths.length > 1 ? paths[1] : null, paths.length > 2 ? paths[2] : null);
        }

        private static byte[] utf8(final String text)
        {
            return text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        }
    }
}
