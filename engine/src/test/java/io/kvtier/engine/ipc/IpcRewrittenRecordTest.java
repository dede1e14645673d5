package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.RecordDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.engine.Engine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client owns its request ring and may rewrite a record after queueing it. The engine reads each
 * record once into memory of its own, validates that copy and acts only on it: whatever a client
 * thread flips meanwhile, the engine never acts on a value it did not check.
 */
class IpcRewrittenRecordTest
{
    /** The engine-internal OPEN, which no client may ask for: it takes a client slot of the engine. */
    private static final int INTERNAL_OPEN = 1;
    private static final int ROUNDS = 20_000;

    @TempDir
    Path directory;

    @Test
    void shouldNeverActOnATypeFlippedAfterValidation() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.max-clients", "2");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection attacker = IpcConnection.connect(IpcTestSupport.socket(engine), 4))
        {
            final MemorySegment ring = attacker.ringFile();
            final int capacity = attacker.welcome().ringCapacity();
            final Flipper flipper = new Flipper(ring);
            flipper.start();
            int unchecked = 0;
            int refused = 0;
            try
            {
                for (int round = 0; round < ROUNDS && unchecked == 0; round++)
                {
                    final long tail = (long)LittleEndian.LONG_HANDLE.getAcquire(ring, (long)RingFileDescriptor.REQUEST_TAIL_OFFSET);
                    final long record = RingFileDescriptor.requestRingOffset() + (tail & (capacity - 1));
                    attacker.claim(MessageType.STATS, 0, 0, 0, 0, 0);
                    flipper.target = record + RecordDescriptor.TYPE_OFFSET;
                    final long id = attacker.publish();
                    final ResponseDecoder response = attacker.awaitResponse(id);
                    final int type = response.type();
                    final int status = response.status();
                    attacker.releaseResponse();
                    if (type == MessageType.STATS)
                    {
                        assertThat(status).isEqualTo(ErrorCode.OK.code());
                    }
                    else if (type == INTERNAL_OPEN && status == ErrorCode.UNKNOWN_TYPE.code())
                    {
                        refused++;
                    }
                    else
                    {
                        unchecked++;
                    }
                }
            }
            finally
            {
                flipper.running = false;
                flipper.join(TimeUnit.SECONDS.toMillis(10));
            }
            assertThat(unchecked).as("answers to a type the engine never validated").isZero();
            // The engine's client slots are all still there: a second client connects and is served.
            try (IpcConnection other = IpcConnection.connect(IpcTestSupport.socket(engine), 4))
            {
                final long id = other.send(MessageType.STATS, 0, 0, 0);
                assertThat(other.awaitResponse(id).status()).isEqualTo(ErrorCode.OK.code());
                other.releaseResponse();
            }
            System.out.println("flipped records refused as UNKNOWN_TYPE: " + refused + " of " + ROUNDS);
        }
    }

    /** Writes STATS and the internal OPEN's code into the queued record's Type, over and over. */
    private static final class Flipper extends Thread
    {
        private final MemorySegment ring;
        volatile long target = -1;
        volatile boolean running = true;

        Flipper(final MemorySegment ring)
        {
            super("type-flipper");
            setDaemon(true);
            this.ring = ring;
        }

        @Override
        public void run()
        {
            while (running)
            {
                final long at = target;
                if (at >= 0)
                {
                    LittleEndian.INT_HANDLE.setOpaque(ring, at, MessageType.STATS);
                    LittleEndian.INT_HANDLE.setOpaque(ring, at, INTERNAL_OPEN);
                }
            }
        }
    }
}
