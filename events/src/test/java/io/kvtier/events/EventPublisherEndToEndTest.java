package io.kvtier.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.Namespace;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.events.EventRing;
import io.kvtier.engine.events.EventSource;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.status.EngineCounter;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * End to end: an engine over a POSIX tier with events on, its publisher, and a plain ZMQ SUB socket
 * that decodes what arrives with msgpack alone, as a router would.
 */
class EventPublisherEndToEndTest
{
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final String PREFIX = "kv@test-node@";
    private static final int PAGE_SIZE = 4096;
    /** How long the subscriber waits for one message before the test fails. */
    private static final int RECEIVE_TIMEOUT_MILLIS = 30_000;
    /**
     * How long a connecting socket of the test waits for the ZMTP handshake before it drops the connection and connects
     * again (JeroMQ's default is 30 s). JeroMQ 0.6.0 loses, now and then, the poller registration of a socket whose TCP
     * connect did not complete at once: it hands the channel from the connecter to the stream engine within one pass of
     * its poller, where the connecter's key is cancelled but not yet deregistered, so the engine's handle is never
     * registered and no greeting is sent. The connection then sits idle until the handshake interval ends it.
     */
    private static final int HANDSHAKE_MILLIS = 1_000;
    /** How long a request over a connection that never handshook may wait for its answer: well under JeroMQ's default 30 s. */
    private static final int STUCK_WAIT_MILLIS = 10_000;

    /** One decoded event, with the topic and sequence number of its message. */
    private record Received(String topic, long sequence, String type, String hash, String medium)
    {
    }

    private static Map<String, String> settings(final Path l3)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-events-test-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf(PAGE_SIZE * 32L));
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", l3.toString());
        settings.put("events.enabled", "true");
        settings.put("events.endpoint", "tcp://127.0.0.1:*");
        settings.put("events.topic-prefix", PREFIX);
        settings.put("events.batch-max", "4");
        return settings;
    }

    /**
     * A socket of the test's connecting side (a SUB, a DEALER), connected to {@code endpoint}, that gives up a handshake
     * stuck by JeroMQ's lost registration within {@link #HANDSHAKE_MILLIS} and connects again; what it queued (a
     * subscription, a replay request) goes out on the new connection.
     */
    private static ZMQ.Socket connected(final ZContext context, final SocketType type, final String endpoint)
    {
        final ZMQ.Socket socket = context.createSocket(type);
        socket.setHandshakeIvl(HANDSHAKE_MILLIS);
        socket.connect(endpoint);
        return socket;
    }

    private static void writePages(final Session session, final long salt, final int count)
    {
        session.keys().clear();
        for (int i = 0; i < count; i++)
        {
            session.keys().add(salt, i * 0x9E3779B97F4A7C15L + 1);
        }
        session.reserve(0, count);
        for (int i = 0; i < count; i++)
        {
            assertThat(session.status(i)).as("reservation of page %d", i).isEqualTo(PageEntryStatus.RESERVED);
            session.page(i).set(ValueLayout.JAVA_LONG, 0, session.keys().low(i));
            session.payloadLength(i, 1000);
        }
        assertThat(session.commit(0, count)).isEqualTo(count);
    }

    private static String hashOf(final Session session, final int index)
    {
        return String.format("%016x%016x", session.keys().high(index), session.keys().low(index));
    }

    /** Receives one message and decodes its events; fails, naming what it waited for, when none comes. */
    private static List<Received> receive(final ZMQ.Socket subscriber, final String waitingFor) throws Exception
    {
        final byte[] topic = subscriber.recv();
        assertThat(topic).as("a message while waiting for " + waitingFor).isNotNull();
        assertThat(subscriber.hasReceiveMore()).as("a sequence frame after the topic").isTrue();
        final byte[] sequence = subscriber.recv();
        assertThat(sequence).hasSize(8);
        assertThat(subscriber.hasReceiveMore()).as("a payload frame after the sequence").isTrue();
        final byte[] payload = subscriber.recv();
        assertThat(subscriber.hasReceiveMore()).as("three frames in all").isFalse();
        final List<Received> events = new ArrayList<>();
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            assertThat(unpacker.unpackArrayHeader()).as("KVEventBatch fields").isEqualTo(2);
            assertThat(unpacker.unpackDouble()).as("time stamp, seconds").isPositive();
            final int count = unpacker.unpackArrayHeader();
            for (int e = 0; e < count; e++)
            {
                final int fields = unpacker.unpackArrayHeader();
                final String type = unpacker.unpackString();
                String hash = null;
                String medium = null;
                switch (type)
                {
                    case "BlockStored" ->
                    {
                        assertThat(fields).isEqualTo(7);
                        assertThat(unpacker.unpackArrayHeader()).as("block hashes").isEqualTo(1);
                        hash = HexFormat.of().formatHex(unpacker.readPayload(unpacker.unpackBinaryHeader()));
                        unpacker.unpackNil();
                        assertThat(unpacker.unpackArrayHeader()).as("token ids").isZero();
                        assertThat(unpacker.unpackInt()).as("block size").isZero();
                        unpacker.unpackNil();
                        medium = unpacker.unpackString();
                    }
                    case "BlockRemoved" ->
                    {
                        assertThat(fields).isEqualTo(3);
                        assertThat(unpacker.unpackArrayHeader()).as("block hashes").isEqualTo(1);
                        hash = HexFormat.of().formatHex(unpacker.readPayload(unpacker.unpackBinaryHeader()));
                        medium = unpacker.unpackString();
                    }
                    case "AllBlocksCleared" -> assertThat(fields).isEqualTo(1);
                    default -> throw new AssertionError("an event of unknown type " + type);
                }
                events.add(new Received(new String(topic, StandardCharsets.UTF_8), ByteBuffer.wrap(sequence).getLong(), type, hash, medium));
            }
            assertThat(unpacker.hasNext()).as("nothing after the batch").isFalse();
        }
        return events;
    }

    /** Receives until {@code done} holds of what came so far. */
    private static List<Received> receiveUntil(final ZMQ.Socket subscriber, final List<Received> into,
                                               final java.util.function.Predicate<List<Received>> done, final String what) throws Exception
    {
        while (!done.test(into))
        {
            into.addAll(receive(subscriber, what + " (so far " + into + ")"));
        }
        return into;
    }

    private static List<String> historyOf(final List<Received> events, final String hash)
    {
        return events.stream().filter(e -> hash.equals(e.hash())).map(e -> e.type() + " " + e.medium()).toList();
    }

    @Test
    void shouldPublishClearedThenStoredInThePoolAndTheTierThenRemovedPerNamespace(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings(l3)));
             ZContext context = new ZContext(1))
        {
            final EventSource source = engine.events().orElseThrow();
            try (EventPublisher publisher = EventPublisher.start(source))
            {
                final ZMQ.Socket subscriber = connected(context, SocketType.SUB, publisher.endpoint());
                subscriber.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
                subscriber.subscribe(PREFIX.getBytes(StandardCharsets.UTF_8));

                // The engine recorded AllBlocksCleared when it started; the publisher sends it once someone subscribes.
                final List<Received> events = new ArrayList<>(receive(subscriber, "AllBlocksCleared"));
                assertThat(events).hasSize(1);
                assertThat(events.get(0).type()).isEqualTo("AllBlocksCleared");
                assertThat(events.get(0).topic()).isEqualTo(PREFIX);
                assertThat(events.get(0).sequence()).isZero();

                final Namespace namespace = new Namespace("model-a", "layout", 0, "");
                try (Session untagged = engine.openSession();
                     Session tagged = engine.openSession().scope(namespace))
                {
                    writePages(untagged, 81, 3);
                    writePages(tagged, 82, 2);
                    untagged.flush();
                    tagged.flush();
                    assertThat(untagged.evict(0, 3)).isEqualTo(3);
                    assertThat(tagged.evict(0, 2)).isEqualTo(2);

                    final List<String> untaggedKeys = List.of(hashOf(untagged, 0), hashOf(untagged, 1), hashOf(untagged, 2));
                    final List<String> taggedKeys = List.of(hashOf(tagged, 0), hashOf(tagged, 1));
                    final List<String> expected = List.of("BlockStored cpu", "BlockStored disk", "BlockRemoved cpu");
                    receiveUntil(subscriber, events, got -> java.util.stream.Stream.concat(untaggedKeys.stream(), taggedKeys.stream())
                        .allMatch(k -> historyOf(got, k).size() >= expected.size()), "each page stored in the pool, backed up, evicted");
                    for (final String key : untaggedKeys)
                    {
                        assertThat(historyOf(events, key)).as("untagged key %s", key).isEqualTo(expected);
                        assertThat(events.stream().filter(e -> key.equals(e.hash())).map(Received::topic)).containsOnly(PREFIX + "untagged");
                    }
                    for (final String key : taggedKeys)
                    {
                        assertThat(historyOf(events, key)).as("tagged key %s", key).isEqualTo(expected);
                        assertThat(events.stream().filter(e -> key.equals(e.hash())).map(Received::topic))
                            .containsOnly(PREFIX + String.format("%016x", namespace.tag()));
                    }
                    final List<Long> sequences = events.stream().map(Received::sequence).distinct().toList();
                    assertThat(sequences).as("messages numbered from 0 with no gap: %s", events)
                        .isEqualTo(java.util.stream.LongStream.range(0, sequences.size()).boxed().toList());
                }
            }
            assertThat(engine.snapshot().get(EngineCounter.EVENTS_DROPPED)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.EVENT_BATCHES_PUBLISHED)).isPositive();
        }
    }
    /**
     * A record the encoder refuses (a medium it has no name for) is dropped and counted, and the records after it are
     * published: before, the publisher read the same record again forever and published nothing more.
     */
    @Test
    void shouldDropARecordTheEncoderRefusesAndPublishTheOnesAfterIt(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings(l3)));
             ZContext context = new ZContext(1))
        {
            // A ring of the test's own, fed from this thread alone, with the engine's counters and the publisher's watch.
            final EventSource engineSource = engine.events().orElseThrow();
            final EventRing ring = new EventRing(64, engine.counters());
            final EventSource source = new EventSource(ring, List.of(EventSource.POOL_MEDIUM, "disk"), "tcp://127.0.0.1:*", PREFIX, 4, "", 16,
                engineSource.watch(), engine.counters());
            final long droppedBefore = engine.snapshot().get(EngineCounter.EVENTS_DROPPED);
            ring.cleared();
            ring.stored(1, 1, 0, PageEvents.POOL);
            ring.stored(2, 2, 0, 99);
            ring.stored(3, 3, 0, PageEvents.tierMedium(0));
            try (EventPublisher publisher = EventPublisher.start(source))
            {
                final ZMQ.Socket subscriber = connected(context, SocketType.SUB, publisher.endpoint());
                subscriber.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
                subscriber.subscribe(PREFIX.getBytes(StandardCharsets.UTF_8));
                final List<Received> events = receiveUntil(subscriber, new ArrayList<>(), got -> got.size() >= 3, "the records around the refused one");
                assertThat(events).extracting(e -> e.type() + " " + e.hash() + " " + e.medium()).containsExactly("AllBlocksCleared null null",
                    "BlockStored 00000000000000010000000000000001 cpu", "BlockStored 00000000000000030000000000000003 disk");
            }
            assertThat(engine.snapshot().get(EngineCounter.EVENTS_DROPPED) - droppedBefore).as("the refused record, counted").isEqualTo(1);
        }
    }

    /**
     * The replay socket: a DEALER that asks from a sequence number gets the kept batches from there, byte for byte as the
     * SUB saw them, then the end marker; one that asks for more than is kept gets what is kept; a malformed request gets
     * the end marker alone.
     */
    @Test
    void shouldReplayKeptBatchesFromTheNumberAskedForThenTheEndMarker(@TempDir final Path l3) throws Exception
    {
        final Map<String, String> settings = settings(l3);
        // No L3 tier: the pool's 12 pages are all the engine records, so nothing is published after them.
        settings.keySet().removeIf(key -> key.startsWith("tier."));
        settings.put("events.replay-endpoint", "tcp://127.0.0.1:*");
        settings.put("events.replay-batches", "3");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             ZContext context = new ZContext(1);
             EventPublisher publisher = EventPublisher.start(engine.events().orElseThrow()))
        {
            assertThat(publisher.replayEndpoint()).startsWith("tcp://127.0.0.1:");
            final ZMQ.Socket subscriber = connected(context, SocketType.SUB, publisher.endpoint());
            subscriber.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
            subscriber.subscribe(PREFIX.getBytes(StandardCharsets.UTF_8));
            final Map<Long, byte[]> seen = new LinkedHashMap<>(receiveRaw(subscriber, 1));
            try (Session session = engine.openSession())
            {
                writePages(session, 91, 12);
            }
            // AllBlocksCleared, then the 12 BlockStored in batches of at most 4: at least 4 messages.
            while (seen.values().stream().mapToInt(EventPublisherEndToEndTest::eventCount).sum() < 13)
            {
                seen.putAll(receiveRaw(subscriber, 1));
            }
            final long messages = seen.size();
            assertThat(seen.keySet()).as("numbered from 0 with no gap").containsExactlyElementsOf(java.util.stream.LongStream.range(0, messages).boxed().toList());
            assertThat(messages).isGreaterThanOrEqualTo(4);

            final ZMQ.Socket dealer = connected(context, SocketType.DEALER, publisher.replayEndpoint());
            final Map<Long, byte[]> replayed = replay(dealer, ByteBuffer.allocate(8).putLong(messages - 2).array());
            assertThat(replayed.keySet()).containsExactly(messages - 2, messages - 1);
            for (final long sequence : replayed.keySet())
            {
                assertThat(replayed.get(sequence)).as("batch %d as published", sequence).isEqualTo(seen.get(sequence));
            }
            assertThat(replay(dealer, ByteBuffer.allocate(8).putLong(0).array()).keySet()).as("only the last 3 are kept")
                .containsExactly(messages - 3, messages - 2, messages - 1);
            assertThat(replay(dealer, new byte[] {1, 2, 3})).as("a malformed request gets the end marker alone").isEmpty();
        }
    }

    /**
     * A DEALER whose first connection never handshakes (the state JeroMQ's lost poller registration leaves a connecting
     * socket in) still has its replay request answered: the connection is dropped after {@link #HANDSHAKE_MILLIS} and
     * made again, and the request queued on it goes out on the new one. With JeroMQ's default interval (30 s) the
     * request stayed unanswered for as long as a subscriber waits, which is what the end-to-end test above saw.
     */
    @Test
    void shouldAnswerAReplayRequestWhoseFirstConnectionNeverHandshakes(@TempDir final Path l3) throws Exception
    {
        final Map<String, String> settings = settings(l3);
        settings.keySet().removeIf(key -> key.startsWith("tier."));
        settings.put("events.replay-endpoint", "tcp://127.0.0.1:*");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             ZContext context = new ZContext(1);
             EventPublisher publisher = EventPublisher.start(engine.events().orElseThrow());
             SilentFirstConnectionRelay relay = new SilentFirstConnectionRelay(publisher.replayEndpoint()))
        {
            final ZMQ.Socket dealer = connected(context, SocketType.DEALER, relay.endpoint());
            dealer.setReceiveTimeOut(STUCK_WAIT_MILLIS);
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(0).array(), 0);
            // Nothing was published (no subscriber yet), so the answer is the end marker alone.
            assertThat(dealer.recv()).as("an answer within %d ms though the first of %d connections never handshook", STUCK_WAIT_MILLIS,
                relay.accepted()).isNotNull().isEmpty();
            assertThat(ByteBuffer.wrap(dealer.recv()).getLong()).as("the end marker").isEqualTo(EventPublisher.END_OF_REPLAY);
            assertThat(dealer.recv()).as("the end marker's payload").isEmpty();
            assertThat(relay.accepted()).as("connections: the silent one, then the one that answered").isEqualTo(2);
        }
    }

    /** Events in one KVEventBatch payload. */
    private static int eventCount(final byte[] payload)
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            unpacker.unpackArrayHeader();
            unpacker.unpackDouble();
            return unpacker.unpackArrayHeader();
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** Receives {@code count} messages as they came: sequence number to payload. */
    private static Map<Long, byte[]> receiveRaw(final ZMQ.Socket subscriber, final int count)
    {
        final Map<Long, byte[]> out = new LinkedHashMap<>();
        for (int i = 0; i < count; i++)
        {
            assertThat(subscriber.recv()).as("message %d of %d", i + 1, count).isNotNull();
            final long sequence = ByteBuffer.wrap(subscriber.recv()).getLong();
            out.put(sequence, subscriber.recv());
        }
        return out;
    }

    /**
     * Asks for a replay and reads it: delimiter, number and payload per batch, until the end marker (-1, empty). Asks
     * again when no answer comes within a few seconds, as a subscriber does (CI once saw a first request go unanswered
     * for 30 s); a replay may be asked for any number of times, and the answers to a repeated request are drained.
     */
    private static Map<Long, byte[]> replay(final ZMQ.Socket dealer, final byte[] start)
    {
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(RECEIVE_TIMEOUT_MILLIS);
        int asked = 0;
        byte[] delimiter = null;
        while (delimiter == null)
        {
            assertThat(System.nanoTime() - deadline).as("a replay answer within %d ms (asked %d times)", RECEIVE_TIMEOUT_MILLIS, asked).isNegative();
            dealer.sendMore(new byte[0]);
            dealer.send(start, 0);
            asked++;
            dealer.setReceiveTimeOut(5_000);
            delimiter = dealer.recv();
        }
        dealer.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        final Map<Long, byte[]> out = new LinkedHashMap<>();
        while (true)
        {
            assertThat(delimiter).as("a replay answer").isNotNull().isEmpty();
            final byte[] sequence = dealer.recv();
            assertThat(sequence).hasSize(8);
            final byte[] payload = dealer.recv();
            assertThat(dealer.hasReceiveMore()).isFalse();
            final long number = ByteBuffer.wrap(sequence).getLong();
            if (number == -1)
            {
                assertThat(payload).as("the end marker's payload").isEmpty();
                break;
            }
            out.put(number, payload);
            delimiter = dealer.recv();
        }
        if (asked > 1)
        {
            // the answers to the earlier requests, if they come after all
            dealer.setReceiveTimeOut(1_000);
            while (dealer.recv() != null)
            {
                // drained
            }
            dealer.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        }
        return out;
    }
}
