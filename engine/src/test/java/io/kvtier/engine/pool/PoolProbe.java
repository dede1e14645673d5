package io.kvtier.engine.pool;

import io.kvtier.client.pool.PoolClient;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.nio.file.Path;
import java.util.Map;

/**
 * Run in a second JVM by the pool tests, as another process on the node would: {@code start POOL}
 * tries to start an engine on a pool file; {@code pin-and-die POOL HIGH LOW} pins a page by key from
 * outside the engine and then dies without unpinning, as a client killed with {@code kill -9} would;
 * {@code pin-and-wait POOL HIGH LOW} pins and waits for a line on its input, then reports whether it
 * still holds its slot.
 */
public final class PoolProbe
{
    private PoolProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        switch (args[0])
        {
            case "start" ->
            {
                try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, args[1], EngineConfig.POOL_SIZE, "1MiB",
                    EngineConfig.POOL_PAGE_SIZE, "64KiB")));
                     io.kvtier.engine.Session session = engine.openSession())
                {
                    session.keys().add(3, 4);
                    session.reserve(0, 1);
                    session.page(0).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)5);
                    session.payloadLength(0, 1);
                    System.out.println("started pid=" + ProcessHandle.current().pid() + " committed=" + session.commit(0, 1)
                        + " acquired=" + session.acquire(0, 1) + " byte=" + session.page(0).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
                    session.release();
                }
                catch (final Exception ex)
                {
                    System.out.println("refused " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
                }
            }
            case "pin-and-die" ->
            {
                final long high = Long.parseUnsignedLong(args[2], 16);
                final long low = Long.parseUnsignedLong(args[3], 16);
                final PoolClient client = PoolClient.attach(Path.of(args[1]));
                final long pin = client.pinKey(high, low);
                System.out.println(pin != PoolClient.NO_PIN ? "pinned page=" + PoolClient.page(pin) + " slot=" + client.slot() : "missing");
                System.out.flush();
                Runtime.getRuntime().halt(9);
            }
            case "pin-and-wait" ->
            {
                final long high = Long.parseUnsignedLong(args[2], 16);
                final long low = Long.parseUnsignedLong(args[3], 16);
                final PoolClient client = PoolClient.attach(Path.of(args[1]));
                final long pin = client.pinKey(high, low);
                System.out.println(pin != PoolClient.NO_PIN ? "pinned" : "missing");
                System.out.flush();
                // Stopped and continued by the test; then it finds out whether it still holds its slot.
                new java.io.BufferedReader(new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8)).readLine();
                System.out.println("current=" + client.isCurrent() + " valid=" + client.isValid(pin));
                try
                {
                    System.out.println("pin again: " + client.pinKey(high, low));
                }
                catch (final IllegalStateException ex)
                {
                    System.out.println("lost: " + ex.getMessage());
                }
                System.out.flush();
                client.close();
            }
            case "pin-loop" ->
            {
                // Pins keys (9, 0..63) until it verified the wanted number of pages, checking each one's
                // bytes under its pin, and prints what it found.
                final int wanted = Integer.parseInt(args[2]);
                long verified = 0;
                long wrong = 0;
                try (PoolClient client = PoolClient.attach(Path.of(args[1])))
                {
                    System.out.println("attached slot=" + client.slot());
                    System.out.flush();
                    final long deadline = System.nanoTime() + 120_000_000_000L;
                    for (int key = 0; verified < wanted && System.nanoTime() < deadline; key = (key + 1) & 63)
                    {
                        final long pin = client.pinKey(9, key);
                        if (pin == PoolClient.NO_PIN)
                        {
                            continue;
                        }
                        final java.lang.foreign.MemorySegment payload = client.payload(pin);
                        final byte first = payload.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
                        Thread.onSpinWait();
                        final byte last = payload.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 999);
                        if (first == (byte)key && last == (byte)key && client.payloadLength(pin) == 1000 && client.isValid(pin))
                        {
                            verified++;
                        }
                        else
                        {
                            wrong++;
                        }
                        client.unpin(pin);
                    }
                }
                System.out.println("verified=" + verified + " wrong=" + wrong);
            }
            default -> throw new IllegalArgumentException("unknown probe " + args[0]);
        }
    }
}
