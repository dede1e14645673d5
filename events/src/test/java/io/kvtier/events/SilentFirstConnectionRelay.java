package io.kvtier.events;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of a ZMQ endpoint whose first connection is accepted and then left silent: it never answers the
 * ZMTP greeting, which is what a connecting JeroMQ socket sees when its poller lost the registration of its channel
 * (connected, no handshake). Every later connection is relayed byte for byte to the endpoint.
 */
final class SilentFirstConnectionRelay implements AutoCloseable
{
    private final ServerSocket server;
    private final String target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();

    /**
     * @param endpoint the endpoint relayed to, {@code tcp://127.0.0.1:PORT}
     * @throws IOException when no local port can be bound
     */
    SilentFirstConnectionRelay(final String endpoint) throws IOException
    {
        this.target = endpoint;
        this.server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        final Thread acceptor = new Thread(this::accept, "relay-accept");
        acceptor.setDaemon(true);
        threads.add(acceptor);
        acceptor.start();
    }

    /** @return the endpoint to connect to instead of the relayed one */
    String endpoint()
    {
        return "tcp://127.0.0.1:" + server.getLocalPort();
    }

    /** @return connections accepted so far, the silent first one included */
    int accepted()
    {
        return accepted.get();
    }

    /** Accepts until closed: keeps the first connection open and silent, relays the others. */
    private void accept()
    {
        try
        {
            while (true)
            {
                final Socket client = server.accept();
                sockets.add(client);
                if (accepted.incrementAndGet() == 1)
                {
                    continue;
                }
                final int colon = target.lastIndexOf(':');
                final Socket upstream = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(target.substring(colon + 1)));
                sockets.add(upstream);
                copy(client, upstream);
                copy(upstream, client);
            }
        }
        catch (final IOException ex)
        {
            // closed
        }
    }

    /** Copies what {@code from} receives to {@code to} on a thread of its own, until either closes. */
    private void copy(final Socket from, final Socket to)
    {
        final Thread copier = new Thread(() ->
        {
            final byte[] buffer = new byte[8192];
            try
            {
                final InputStream in = from.getInputStream();
                final OutputStream out = to.getOutputStream();
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer))
                {
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (final IOException ex)
            {
                // closed
            }
        }, "relay-copy");
        copier.setDaemon(true);
        threads.add(copier);
        copier.start();
    }

    /** Closes the listening socket and every connection, and waits for the relay's threads to end. */
    @Override
    public void close() throws IOException, InterruptedException
    {
        server.close();
        for (final Socket socket : sockets)
        {
            socket.close();
        }
        for (final Thread thread : threads)
        {
            thread.join(5_000);
        }
    }
}
