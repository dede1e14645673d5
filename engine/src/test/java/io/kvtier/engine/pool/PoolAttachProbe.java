package io.kvtier.engine.pool;

import io.kvtier.collections.KeyTable;

import java.nio.file.Path;

/**
 * Run in a second JVM by {@link PagePoolCrossProcessTest}: maps a running engine's pool as a client
 * would, finds a page by key, pins it, checks its bytes against the CRC recorded at commit, and
 * prints what it found.
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
        try (PagePool pool = PagePool.attach(Path.of(args[0])))
        {
            final KeyTable index = pool.index();
            final int slot = index.find(high, low);
            if (slot == KeyTable.NONE)
            {
                System.out.println("missing");
                return;
            }
            final int page = index.value(slot);
            if (!pool.tryPin(page) || pool.keyHigh(page) != high || pool.keyLow(page) != low)
            {
                System.out.println("not-serving");
                return;
            }
            try
            {
                System.out.println("found page=" + page + " length=" + pool.payloadLength(page) + " intact=" + pool.payloadIntact(page)
                    + " first=" + pool.payload(page).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)
                    + " owner=" + pool.isOwner() + " creator=" + pool.creatorPid());
            }
            finally
            {
                pool.unpin(page);
            }
        }
    }
}
