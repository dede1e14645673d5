package io.kvtier.events;

import io.kvtier.engine.events.EventRing;
import io.kvtier.engine.events.EventRingDescriptor;
import io.kvtier.engine.events.EventSource;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.ThreadWatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMsg;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The kvtier-events thread: reads the engine's event ring, groups the records into batches, one namespace
 * per batch and at most {@code events.batch-max} events each, in the order they were recorded, and sends
 * each as a three-frame ZMQ message on a PUB socket (docs/kv-events.md): the topic (the prefix and the
 * namespace), an 8-byte big-endian sequence number counting messages from 0, and the msgpack batch.
 * A record of everything cleared goes alone, on the bare prefix. The socket is an XPUB, so that the thread
 * knows when the first subscriber arrives: it reads the ring from then on, and the ring holds what the
 * engine recorded before (up to events.ring-entries). Nothing here runs on the engine thread.
 *
 * <p>With events.replay-endpoint set, a ROUTER socket on the same thread resends kept batches (the last
 * events.replay-batches) to a subscriber that asks from a sequence number, as vLLM's publisher does: the request
 * is an empty delimiter frame and the 8-byte big-endian number; each answer is the delimiter, the batch's number
 * and its payload; an end marker (number -1, empty payload) closes the replay.
 */
public final class EventPublisher implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(EventPublisher.class.getName());
    /** How long the thread parks when the ring is empty. */
    private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long close lets the socket send what it holds. */
    private static final int LINGER_MILLIS = 1000;
    /** The tag of records with no namespace, and its name in topics. */
    static final String UNTAGGED = "untagged";
    /** The sequence number that ends a replay. */
    static final long END_OF_REPLAY = -1L;
    /** How often a refused record or a malformed replay request is logged, at most. */
    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final byte[] EMPTY = new byte[0];

    private final EventSource source;
    private final EventRing ring;
    private final ZContext context;
    private final ZMQ.Socket socket;
    private final String endpoint;
    private final KvEventEncoder encoder;
    private final ThreadWatch.Watched watch;
    private final Thread thread;
    /** The replay socket, or null. */
    private final ZMQ.Socket replay;
    private final String replayEndpoint;
    /** Kept batches for replay, by sequence number modulo their count. */
    private final byte[][] keptPayloads;
    private long nextSequence;
    private long refusedLoggedAt = System.nanoTime() - LOG_EVERY_NANOS;
    private long malformedLoggedAt = System.nanoTime() - LOG_EVERY_NANOS;
    /** The namespace tag of the batch being collected. */
    private long batchTag;
    /** Whether a subscriber has subscribed yet: until then the ring keeps what the engine records. */
    private boolean subscribed;
    private volatile boolean running = true;

    private EventPublisher(final EventSource source)
    {
        this.source = source;
        this.ring = source.ring();
        this.watch = source.watch();
        this.encoder = new KvEventEncoder(source.mediums(), source.batchMax());
        this.context = new ZContext(1);
        this.socket = context.createSocket(SocketType.XPUB);
        socket.setLinger(LINGER_MILLIS);
        try
        {
            socket.bind(source.endpoint());
        }
        catch (final ZMQException ex)
        {
            context.close();
            throw new IllegalStateException("events.endpoint=" + source.endpoint() + " cannot be bound: " + ex.getMessage(), ex);
        }
        this.endpoint = socket.getLastEndpoint();
        if (source.replayEndpoint().isEmpty())
        {
            this.replay = null;
            this.replayEndpoint = "";
            this.keptPayloads = null;
        }
        else
        {
            this.replay = context.createSocket(SocketType.ROUTER);
            replay.setLinger(LINGER_MILLIS);
            try
            {
                replay.bind(source.replayEndpoint());
            }
            catch (final ZMQException ex)
            {
                context.close();
                throw new IllegalStateException("events.replay-endpoint=" + source.replayEndpoint() + " cannot be bound: " + ex.getMessage(), ex);
            }
            this.replayEndpoint = replay.getLastEndpoint();
            this.keptPayloads = new byte[source.replayBatches()][];
        }
        this.thread = new Thread(this::run, "kvtier-events");
        thread.setDaemon(true);
        watch.thread(thread);
    }

    /**
     * Binds the socket and starts the kvtier-events thread.
     *
     * @param source what the engine offers (Engine.events())
     * @return the running publisher; close it before or after the engine
     * @throws IllegalStateException when the endpoint cannot be bound, naming it
     */
    public static EventPublisher start(final EventSource source)
    {
        final EventPublisher publisher = new EventPublisher(source);
        publisher.thread.start();
        return publisher;
    }

    /** @return the endpoint the socket is bound to, with the port it took when events.endpoint asked for any ({@code *}) */
    public String endpoint()
    {
        return endpoint;
    }

    /** @return the replay socket's endpoint with the port it took, or empty when events.replay-endpoint is not set */
    public String replayEndpoint()
    {
        return replayEndpoint;
    }

    /**
     * @param namespaceTag a namespace tag
     * @param prefix       events.topic-prefix
     * @return the topic its batches go to: the prefix, then 16 lowercase hex digits or {@code untagged}
     */
    public static String topic(final String prefix, final long namespaceTag)
    {
        return prefix + (namespaceTag == 0 ? UNTAGGED : String.format("%016x", namespaceTag));
    }

    /** The thread's loop: waits for a subscriber, then reads the ring and sends batches until closed, then what is left. */
    private void run()
    {
        final EventRing.Handler handler = this::onRecord;
        while (running)
        {
            try
            {
                readSubscriptions();
                serveReplays();
                if (!subscribed)
                {
                    // Nobody would hear a batch yet: the first subscriber gets what was recorded since the engine
                    // started (AllBlocksCleared first) as long as the ring held it.
                    LockSupport.parkNanos(IDLE_NANOS);
                    continue;
                }
                if (ring.poll(handler, source.batchMax()) == 0)
                {
                    flush();
                    LockSupport.parkNanos(IDLE_NANOS);
                }
            }
            catch (final RuntimeException | Error ex)
            {
                // A batch that cannot be sent is lost, never the thread: the engine keeps running either way.
                watch.failed();
                LOG.log(System.Logger.Level.WARNING, "kvtier-events: a batch of KV events was not sent", ex);
            }
        }
        try
        {
            while (subscribed && ring.poll(handler, source.batchMax()) > 0)
            {
                // what the engine recorded before close
            }
            flush();
        }
        finally
        {
            context.close();
        }
    }

    /** Takes the subscription messages the XPUB socket passes up (1 then the topic to subscribe, 0 to leave). */
    private void readSubscriptions()
    {
        for (byte[] message = socket.recv(ZMQ.DONTWAIT); message != null; message = socket.recv(ZMQ.DONTWAIT))
        {
            if (message.length > 0 && message[0] == 1)
            {
                subscribed = true;
            }
        }
    }

    /**
     * Answers the replay requests waiting on the replay socket: every kept batch from the number asked for on, then
     * the end marker. A request that is not a delimiter and an 8-byte number gets the end marker alone, and a log line.
     */
    private void serveReplays()
    {
        if (replay == null)
        {
            return;
        }
        for (ZMsg request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT); request != null; request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT))
        {
            final ZFrame identity = request.pop();
            final ZFrame delimiter = request.pop();
            final ZFrame start = request.pop();
            if (identity == null)
            {
                continue;
            }
            if (delimiter == null || delimiter.size() != 0 || start == null || start.size() != Long.BYTES || !request.isEmpty())
            {
                if (System.nanoTime() - malformedLoggedAt >= LOG_EVERY_NANOS)
                {
                    malformedLoggedAt = System.nanoTime();
                    LOG.log(System.Logger.Level.WARNING, "kvtier-events: a replay request on " + replayEndpoint + " was not an empty"
                        + " delimiter frame and an 8-byte big-endian sequence number (it had " + (request.size() + (delimiter == null ? 1 : start == null ? 2 : 3))
                        + " frames); answered with the end marker alone");
                }
                sendReplayed(identity.getData(), END_OF_REPLAY, EMPTY);
                continue;
            }
            final long from = Math.max(ByteBuffer.wrap(start.getData()).getLong(), Math.max(0, nextSequence - keptPayloads.length));
            for (long sequence = from; sequence < nextSequence; sequence++)
            {
                sendReplayed(identity.getData(), sequence, keptPayloads[(int)(sequence % keptPayloads.length)]);
            }
            sendReplayed(identity.getData(), END_OF_REPLAY, EMPTY);
        }
    }

    private void sendReplayed(final byte[] identity, final long sequence, final byte[] payload)
    {
        replay.sendMore(identity);
        replay.sendMore(EMPTY);
        replay.sendMore(ByteBuffer.allocate(Long.BYTES).putLong(sequence).array());
        replay.send(payload, 0);
    }

    /** Adds one record to the batch being collected, sending it first when the namespace changes, and after when full. */
    private void onRecord(final int type, final int medium, final long keyHigh, final long keyLow, final long namespaceTag)
    {
        if (!encoder.accepts(type, medium))
        {
            refuse(type, medium, keyHigh, keyLow, namespaceTag);
            return;
        }
        if (type == EventRingDescriptor.TYPE_CLEARED)
        {
            flush();
            encoder.add(type, medium, keyHigh, keyLow);
            send(source.topicPrefix());
            return;
        }
        if (encoder.count() > 0 && namespaceTag != batchTag)
        {
            flush();
        }
        batchTag = namespaceTag;
        encoder.add(type, medium, keyHigh, keyLow);
        if (encoder.isFull())
        {
            flush();
        }
    }

    /**
     * Drops a record the encoder cannot write (a type or a medium it does not know: a torn or foreign record), counting
     * it in events_dropped and logging it at most every 10 s, so that one bad record never stops the events after it.
     */
    private void refuse(final int type, final int medium, final long keyHigh, final long keyLow, final long namespaceTag)
    {
        source.counters().increment(EngineCounter.EVENTS_DROPPED);
        if (System.nanoTime() - refusedLoggedAt >= LOG_EVERY_NANOS)
        {
            refusedLoggedAt = System.nanoTime();
            LOG.log(System.Logger.Level.WARNING, String.format("kvtier-events: dropped a record the encoder refuses (type %d, medium %d of %s,"
                + " key %016x%016x, namespace %016x): counted in events_dropped; the events after it are published", type, medium,
                source.mediums(), keyHigh, keyLow, namespaceTag));
        }
    }

    /** Sends the batch being collected, if it holds any event, on its namespace's topic. */
    private void flush()
    {
        if (encoder.count() > 0)
        {
            send(topic(source.topicPrefix(), batchTag));
        }
    }

    /** Encodes the collected events and sends them as one three-frame message on {@code topic}. */
    private void send(final String topic)
    {
        watch.begin();
        try
        {
            final byte[] payload = encoder.encode(System.currentTimeMillis() / 1000.0);
            // A frame's bytes are taken by reference and written later by ZMQ's I/O thread: each message needs its own
            // array (one reused array let a later number overwrite an earlier message's before it was sent).
            if (keptPayloads != null)
            {
                keptPayloads[(int)(nextSequence % keptPayloads.length)] = payload;
            }
            final byte[] sequence = ByteBuffer.allocate(Long.BYTES).putLong(nextSequence++).array();
            // A PUB socket never blocks: a subscriber too slow to keep up loses messages at its high-water mark,
            // and sees the gap in the sequence numbers.
            socket.sendMore(topic.getBytes(StandardCharsets.UTF_8));
            socket.sendMore(sequence);
            socket.send(payload, 0);
            source.counters().increment(EngineCounter.EVENT_BATCHES_PUBLISHED);
        }
        finally
        {
            watch.end();
        }
    }

    /** Stops the thread after it sent what the ring holds, and closes the socket; bounded by a few seconds. */
    @Override
    public void close()
    {
        running = false;
        watch.stopping();
        try
        {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
