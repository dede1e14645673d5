package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;

/**
 * The client of {@link IpcCrossProcessTest}, in a JVM of its own: pins committed pages, reserves
 * more, writes half of them, says READY and keeps writing the next one until it is killed.
 *
 * <p>Arguments: socket path, base of the keys to pin, how many, base of the keys to reserve, how many, and
 * optionally {@code lock}: pin and reserve with one LOOKUP_AND_LOCK of both runs of keys (protocol 1.3)
 * instead of an ACQUIRE and a RESERVE.
 */
public final class IpcCrashingClient
{
    private IpcCrashingClient()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path socket = Path.of(args[0]);
        final long pinBase = Long.parseLong(args[1]);
        final int pins = Integer.parseInt(args[2]);
        final long reserveBase = Long.parseLong(args[3]);
        final int reserves = Integer.parseInt(args[4]);
        final IpcConnection client = IpcConnection.connect(socket, 64);
        final int[] reservedPages = new int[reserves];
        final int pinnedCount;
        final int reservedCount;
        if (args.length > 5 && "lock".equals(args[5]))
        {
            final long[] chain = new long[pins + reserves];
            System.arraycopy(keys(pinBase, pins), 0, chain, 0, pins);
            System.arraycopy(keys(reserveBase, reserves), 0, chain, pins, reserves);
            final Answer locked = IpcTestSupport.await(client, client.sendLookupAndLock(0, chain.length,
                io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL, chain, chain));
            pinnedCount = locked.resultCount();
            reservedCount = locked.poolPages();
            for (int i = 0; i < reserves; i++)
            {
                reservedPages[i] = locked.pageStatuses()[pins + i] == PageEntryStatus.RESERVED ? locked.pageIds()[pins + i] : -1;
            }
        }
        else
        {
            final Answer pinned = call(client, MessageType.ACQUIRE, 0, keys(pinBase, pins), keys(pinBase, pins));
            final Answer reserved = call(client, MessageType.RESERVE, pins, keys(reserveBase, reserves), keys(reserveBase, reserves));
            pinnedCount = pinned.resultCount();
            reservedCount = reserved.resultCount();
            for (int i = 0; i < reserves; i++)
            {
                reservedPages[i] = reserved.pageStatuses()[i] == PageEntryStatus.RESERVED ? reserved.pageIds()[i] : -1;
            }
        }
        if (pinnedCount != pins || reservedCount != reserves)
        {
            System.out.println("FAILED pinned " + pinnedCount + " reserved " + reservedCount);
            System.exit(1);
        }
        for (int i = 0; i < reserves / 2; i++)
        {
            IpcTestSupport.fill(client.page(reservedPages[i]), reserveBase + i, reserveBase + i, IpcTestSupport.PAGE_SIZE);
        }
        final StringBuilder pages = new StringBuilder();
        for (int i = 0; i < reserves; i++)
        {
            pages.append(' ').append(reservedPages[i]);
        }
        System.out.println("READY" + pages);
        System.out.flush();
        // Mid-write, forever: the next reserved page is never finished.
        final MemorySegment page = client.page(reservedPages[reserves / 2]);
        long n = 0;
        while (true)
        {
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, (n * 8) % IpcTestSupport.PAGE_SIZE, n);
            n++;
        }
    }
}
