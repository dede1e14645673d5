package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.FutexWord;
import io.kvtier.client.protocol.MessageType;

import java.nio.file.Path;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;

/**
 * A client JVM of {@link IpcWithoutNativeAccessTest}: reserves, writes, commits and acquires one page,
 * then says how it waited. Argument: the socket path.
 */
public final class IpcRoundTripClient
{
    private IpcRoundTripClient()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (IpcConnection client = IpcConnection.connect(Path.of(args[0]), 8))
        {
            final long[] key = keys(0x4242, 1);
            final Answer reserved = call(client, MessageType.RESERVE, 0, key, key);
            IpcTestSupport.fill(client.page(reserved.pageIds()[0]), key[0], key[0], IpcTestSupport.PAGE_SIZE);
            await(client, client.sendCommit(0, 1, new int[] {IpcTestSupport.PAGE_SIZE}));
            final Answer acquired = call(client, MessageType.ACQUIRE, 1, key, key);
            final boolean same = IpcTestSupport.holds(client.page(acquired.pageIds()[0]), key[0], key[0], IpcTestSupport.PAGE_SIZE);
            System.out.println((same && acquired.resultCount() == 1 ? "OK" : "FAILED") + " futex=" + FutexWord.isNative());
        }
    }
}
