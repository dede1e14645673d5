package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.MessageType;

import java.nio.file.Path;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;

/**
 * A client of {@link IpcDyingClientTest}, in a JVM of its own: pins committed pages, asks for their
 * backup, then sends a FLUSH (which a tier that never answers keeps waiting), says READY and waits for
 * the FLUSH's answer until it is killed.
 *
 * <p>Arguments: socket path, base of the keys, how many.
 */
public final class IpcFlushingClient
{
    private IpcFlushingClient()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final IpcConnection client = IpcConnection.connect(Path.of(args[0]), 64);
        final long base = Long.parseLong(args[1]);
        final int count = Integer.parseInt(args[2]);
        final Answer pinned = call(client, MessageType.ACQUIRE, 0, keys(base, count), keys(base, count));
        if (pinned.resultCount() != count)
        {
            System.out.println("FAILED pinned " + pinned.resultCount());
            System.exit(1);
        }
        call(client, MessageType.BACKUP, count, keys(base, count), keys(base, count));
        final long flush = client.send(MessageType.FLUSH, 0, 0, 0);
        System.out.println("READY");
        System.out.flush();
        client.awaitResponse(flush);
        System.out.println("FLUSHED");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
