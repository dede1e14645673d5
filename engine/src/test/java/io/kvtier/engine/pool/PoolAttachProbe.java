package io.kvtier.engine.pool;

import java.nio.file.Path;

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
                final PagePool pool = client.pool();
                final int page = PoolClient.page(pin);
                System.out.println("found page=" + page + " length=" + client.payloadLength(pin) + " intact=" + pool.frames().payloadIntact(page)
                    + " first=" + client.payload(pin).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)
                    + " owner=" + pool.isOwner() + " creator=" + pool.header().creatorPidPlain() + " valid=" + client.isValid(pin));
            }
            finally
            {
                client.unpin(pin);
            }
        }
    }
}
