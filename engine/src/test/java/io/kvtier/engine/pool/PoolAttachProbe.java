package io.kvtier.engine.pool;

import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PoolClient;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Run in a second JVM by {@link PagePoolCrossProcessTest}: attaches to a running engine's pool as a
 * client would, pins a page by key, checks its bytes against the CRC recorded at commit, and prints
 * what it found.
 */
public final class PoolAttachProbe
{
    private PoolAttachProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final long high = Long.parseUnsignedLong(args[1], 16);
        final long low = Long.parseUnsignedLong(args[2], 16);
        try (PoolClient client = PoolClient.attach(Path.of(args[0])))
        {
            final long pin = client.pinKey(high, low);
            if (pin == PoolClient.NO_PIN)
            {
                System.out.println(client.pool().index().find(high, low) == io.kvtier.collections.KeyTable.NONE ? "missing" : "not-serving");
                return;
            }
            try
            {
                final MappedPool pool = client.pool();
                final int page = PoolClient.page(pin);
                System.out.println("found page=" + page + " length=" + client.payloadLength(pin) + " intact=" + intact(client.payload(pin), client.payloadLength(pin), pool.metadata().payloadCrcPlain(page))
                    + " first=" + client.payload(pin).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)
                    + " creator=" + pool.header().creatorPidPlain() + " valid=" + client.isValid(pin));
            }
            finally
            {
                client.unpin(pin);
            }
        }
    }

    /** The reader's own check of the bytes it pinned against the CRC32C the engine recorded at commit. */
    private static boolean intact(final MemorySegment payload, final int length, final int crc)
    {
        final CRC32C checksum = new CRC32C();
        checksum.update(payload.asSlice(0, length).asByteBuffer());
        return (int)checksum.getValue() == crc;
    }
}
