package io.kvtier.bench.workload;

import io.kvtier.client.Namespace;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A workload client in a process of its own, as {@code kvtier demo --ipc} runs each client: it
 * attaches to the engine over the IPC protocol and serves the prompts its parent sends on stdin, one
 * at a time, answering each with its {@link RequestTally} on stdout. The parent keeps the workload (so
 * conversations still take turns across clients) and adds the tallies up.
 *
 * <p>Pipe protocol, big-endian ({@link DataInputStream}): the child first writes {@link #READY} (or
 * {@link #FAILED} and a message); then per request the parent writes the token count and the tokens,
 * and the child writes {@link #READY} and the tally ({@link RequestTally#writeTo}: its step count, 8,
 * then the counts and the step times), or {@link #FAILED} and a message. End of stdin ends the child.
 * The C and Python demo clients speak the same protocol; the parent ({@link ProcessWorkloadClient})
 * checks every answer and kills a child that breaks it or does not answer within its timeout.
 */
public final class WorkloadClientProcess
{
    static final int READY = 0x4B565452;
    static final int FAILED = 0x4641494C;

    private WorkloadClientProcess()
    {
    }

    /**
     * @param args socket path, tokens per page, the namespace's model id and its KV layout
     * @throws IOException if the pipes fail
     */
    public static void main(final String[] args) throws IOException
    {
        final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out, 1 << 16));
        // Nothing else may write to stdout: it carries the tallies.
        System.setOut(System.err);
        final DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        final WorkloadClient client;
        try
        {
            client = new IpcWorkloadClient(Path.of(args[0]), new Namespace(args[2], args[3], 0, ""), Integer.parseInt(args[1]));
        }
        catch (final IOException | RuntimeException ex)
        {
            fail(out, "cannot attach to the engine: " + ex);
            return;
        }
        try (client)
        {
            out.writeInt(READY);
            out.flush();
            final ChatWorkload.Request request = new ChatWorkload.Request();
            final RequestTally tally = new RequestTally();
            while (true)
            {
                final int length;
                try
                {
                    length = in.readInt();
                }
                catch (final EOFException ex)
                {
                    return;
                }
                if (request.tokens.length < length)
                {
                    request.tokens = new int[Integer.highestOneBit(length) << 1];
                }
                for (int i = 0; i < length; i++)
                {
                    request.tokens[i] = in.readInt();
                }
                request.length = length;
                tally.reset();
                try
                {
                    client.serve(request, tally);
                }
                catch (final RuntimeException ex)
                {
                    fail(out, ex.toString());
                    return;
                }
                out.writeInt(READY);
                tally.writeTo(out);
                out.flush();
            }
        }
    }

    private static void fail(final DataOutputStream out, final String message) throws IOException
    {
        out.writeInt(FAILED);
        out.writeUTF(message.length() > 20_000 ? message.substring(0, 20_000) : message);
        out.flush();
    }
}
