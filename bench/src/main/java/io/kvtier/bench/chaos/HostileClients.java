package io.kvtier.bench.chaos;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Clients that break the protocol on purpose, written against the protocol's own classes rather than the
 * client library's safe calls. Each attack answers how the engine met it: the named error it refused the
 * request with, or that it dropped the client and why; an attack the engine let through answers
 * {@code null}, which the campaign counts against the engine.
 */
final class HostileClients
{
    /** The attacks, one drawn per hostile event. */
    enum Attack
    {
        /** A HELLO of random bytes. */
        GARBAGE_HELLO,
        /** A LOOKUP naming slots past the client's Max Keys. */
        SLOT_RANGE,
        /** A LOOKUP writing other keys into slots that hold this client's reservation. */
        SLOT_HELD,
        /** A LOOKUP naming a namespace index the client never declared. */
        NAMESPACE,
        /** A record of an operation that does not exist. */
        UNKNOWN_TYPE,
        /** A LOOKUP whose body is shorter than its count of keys needs. */
        MALFORMED,
        /** A keyed request whose record is longer than the engine's Max Message Length. */
        OVERSIZED,
        /** A client that sends and never reads its responses. */
        NEVER_READS,
        /** A LOOKUP whose header is rewritten in the ring after it was queued (its count made huge). */
        CHANGED_AFTER_QUEUEING
    }

    /** The answer of an attack that the engine may lawfully serve: it served the record as it copied it. */
    static final String SERVED_AS_COPIED = "served as copied";
    /** The answer of an attack whose set-up the engine refused for a reason of its own (a full pool). */
    static final String NOT_ATTEMPTED = "not attempted";

    private final Path socket;
    private final long clientTimeoutMillis;

    /**
     * @param socket              the engine's IPC socket
     * @param clientTimeoutMillis the engine's ipc.client-timeout
     */
    HostileClients(final Path socket, final long clientTimeoutMillis)
    {
        this.socket = socket;
        this.clientTimeoutMillis = clientTimeoutMillis;
    }

    /**
     * @param attack what to try
     * @param random the campaign's random, for the attack's bytes
     * @return the named error the engine answered or dropped the client with, or null if it did neither
     * @throws IOException if the engine cannot be reached at all
     */
    String run(final Attack attack, final SplittableRandom random) throws IOException, InterruptedException
    {
        return switch (attack)
        {
            case GARBAGE_HELLO -> garbageHello(random);
            case SLOT_RANGE -> answer(8, connection -> connection.send(MessageType.LOOKUP, 8 + random.nextInt(1000), 4,
                RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            case SLOT_HELD -> slotHeld(random);
            case NAMESPACE -> answer(8, connection ->
            {
                connection.claim(MessageType.LOOKUP, 0, 1, 1 + random.nextInt(15), RequestDescriptor.FLAG_KEYS_IN_SLOTS, 0);
                return connection.publish();
            });
            case UNKNOWN_TYPE -> answer(8, connection ->
            {
                connection.claim(100 + random.nextInt(100), 0, 1, 0, 0, 0);
                return connection.publish();
            });
            case MALFORMED -> answer(8, connection ->
            {
                connection.claim(MessageType.LOOKUP, 0, 4, 0, 0, RequestDescriptor.KEY_LENGTH);
                return connection.publish();
            });
            case OVERSIZED -> answer(8, connection ->
            {
                // Longer than the engine's Max Message Length, yet small enough for the ring: only the engine can refuse it.
                final int body = connection.welcome().maxMessageLength() - RequestDescriptor.HEADER_LENGTH + RequestDescriptor.KEY_LENGTH;
                connection.claim(MessageType.LOOKUP, 0, 1, 0, 0, body);
                return connection.publish();
            });
            case CHANGED_AFTER_QUEUEING -> changedAfterQueueing(random);
            case NEVER_READS -> neverReads();
        };
    }

    /** One request of a hostile client. */
    @FunctionalInterface
    private interface Request
    {
        long send(IpcConnection connection) throws IpcException;
    }

    /** Connects, sends one request and reads how the engine answered it. */
    private String answer(final int maxKeys, final Request request) throws IOException
    {
        try (IpcConnection connection = IpcConnection.connect(socket, maxKeys))
        {
            try
            {
                final long id = request.send(connection);
                final ResponseDecoder response = connection.awaitResponse(id);
                final int status = response.status();
                connection.releaseResponse();
                return status == ErrorCode.OK.code() ? null : name(status);
            }
            catch (final IpcException ex)
            {
                return "dropped " + ex.errorCode();
            }
            catch (final RuntimeException ex)
            {
                // The client's own library refused to write it (an oversized record that cannot fit the ring):
                // nothing reached the engine, so nothing was refused by it.
                return null;
            }
        }
    }

    /** Publishes a LOOKUP, then rewrites its header in the ring at once. */
    private String changedAfterQueueing(final SplittableRandom random) throws IOException
    {
        try (IpcConnection connection = IpcConnection.connect(socket, 8))
        {
            try
            {
                final RequestEncoder request = connection.claim(MessageType.LOOKUP, 0, 1, 0, 0, RequestDescriptor.KEY_LENGTH);
                request.key(0, random.nextLong(), random.nextLong());
                final long id = connection.publish();
                // The engine copies a record before it validates it: the rewrite lands before or after that copy,
                // never half in it as far as what the engine acts on.
                request.header(RequestDescriptor.HEADER_LENGTH + RequestDescriptor.KEY_LENGTH, MessageType.LOOKUP, id, 0, 1 << 20, 0, 0);
                final int status = connection.awaitResponse(id).status();
                connection.releaseResponse();
                return status == ErrorCode.OK.code() ? SERVED_AS_COPIED : name(status);
            }
            catch (final IpcException ex)
            {
                return "dropped " + ex.errorCode();
            }
        }
    }

    /** Reserves a key in slot 0, then names another key in that slot. */
    private String slotHeld(final SplittableRandom random) throws IOException, InterruptedException
    {
        try (IpcConnection connection = IpcConnection.connect(socket, 8))
        {
            try
            {
                // A full pool (another client holding every page) reserves nothing: try again for up to 3 s.
                int reserved = ErrorCode.OK.code();
                boolean holds = false;
                for (int attempt = 0; attempt < 30 && !holds && reserved == ErrorCode.OK.code(); attempt++)
                {
                    if (attempt > 0)
                    {
                        Thread.sleep(100);
                    }
                    final long reserve = connection.send(MessageType.RESERVE, 0, 1, new long[] {random.nextLong()}, new long[] {random.nextLong()});
                    final ResponseDecoder reservation = connection.awaitResponse(reserve);
                    reserved = reservation.status();
                    holds = reserved == ErrorCode.OK.code() && reservation.entryCount() == 1
                        && reservation.entryStatus(0) == PageEntryStatus.RESERVED;
                    connection.releaseResponse();
                }
                if (reserved != ErrorCode.OK.code())
                {
                    return name(reserved);
                }
                if (!holds)
                {
                    // Nothing reserved (the pool is full): the slot holds nothing, so the next request is lawful.
                    return NOT_ATTEMPTED;
                }
                final long lookup = connection.send(MessageType.LOOKUP, 0, 1, new long[] {random.nextLong()}, new long[] {random.nextLong()});
                final int status = connection.awaitResponse(lookup).status();
                connection.releaseResponse();
                return status == ErrorCode.OK.code() ? null : name(status);
            }
            catch (final IpcException ex)
            {
                return "dropped " + ex.errorCode();
            }
        }
    }

    /** Sends until the engine drops the client for not reading (bounded by five client timeouts and 5 s). */
    private String neverReads() throws IOException, InterruptedException
    {
        try (IpcConnection connection = IpcConnection.connect(socket, 8))
        {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(clientTimeoutMillis * 5 + 5_000);
            try
            {
                // The response ring fills; the client's claims then wait for room the engine never makes,
                // until it drops the client (NOT_READING) and the claim says so.
                while (System.nanoTime() < deadline)
                {
                    connection.send(MessageType.STATS, 0, 0, 0);
                }
            }
            catch (final IpcException ex)
            {
                return "dropped " + ex.errorCode();
            }
            final int reason = connection.disconnectReasonAcquire();
            return reason == 0 ? null : "dropped " + name(reason);
        }
    }

    /** Sends random bytes as a HELLO and waits for the engine to end the connection. */
    private String garbageHello(final SplittableRandom random) throws IOException, InterruptedException
    {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            channel.connect(UnixDomainSocketAddress.of(socket));
            final byte[] garbage = new byte[64 + random.nextInt(512)];
            random.nextBytes(garbage);
            channel.write(ByteBuffer.wrap(garbage));
            // The engine answers a bad HELLO and closes, or just closes: either way the socket ends.
            final ByteBuffer sink = ByteBuffer.allocate(4096);
            final Thread timeout = Thread.ofVirtual().start(() ->
            {
                try
                {
                    Thread.sleep(clientTimeoutMillis * 5 + 5_000);
                    channel.close();
                }
                catch (final InterruptedException | IOException ex)
                {
                    // Done before the timeout.
                }
            });
            try
            {
                while (channel.read(sink) >= 0)
                {
                    sink.clear();
                }
                return "dropped BAD_HELLO";
            }
            catch (final IOException ex)
            {
                return channel.isOpen() ? "dropped (" + ex.getMessage() + ")" : null;
            }
            finally
            {
                timeout.interrupt();
            }
        }
    }

    /** @return the error code's name */
    private static String name(final int status)
    {
        for (final ErrorCode code : ErrorCode.values())
        {
            if (code.code() == status)
            {
                return code.name();
            }
        }
        return "status " + status;
    }
}
