package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** {@code kvtier serve} with events.enabled publishes KV events (docs/kv-events.md), and stops cleanly. */
class ServeEventsTest
{
    @Test
    void shouldPublishAllBlocksClearedToTheFirstSubscriberAndStopOnSigterm(@TempDir final Path dir) throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-serve-events-test-" + ProcessHandle.current().pid());
        final Path config = dir.resolve("kvtier.conf");
        Files.write(config, List.of("pool.path = " + pool, "pool.size = 2MiB", "pool.page-size = 64KiB",
            "tier.disk.type = posix", "tier.disk.dir = " + dir.resolve("l3"),
            "events.enabled = true", "events.endpoint = tcp://127.0.0.1:*", "events.topic-prefix = kv@serve-test@"));
        final Path out = dir.resolve("out.txt");
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try (ZContext context = new ZContext(1))
        {
            final Pattern announced = Pattern.compile("kvtier KV events: (tcp://127\\.0\\.0\\.1:\\d+) ");
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Matcher matcher = announced.matcher(Files.readString(out));
            while (!matcher.find())
            {
                assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced its KV events in time; output: %s", Files.readString(out)).isLessThan(deadline);
                Thread.sleep(50);
                matcher = announced.matcher(Files.readString(out));
            }
            final ZMQ.Socket subscriber = context.createSocket(SocketType.SUB);
            // JeroMQ now and then loses a connecting socket's poller registration, leaving it connected with no
            // handshake until the handshake interval (30 s by default) drops it: give that up after 1 s and reconnect
            // (docs/kv-events.md, Replay).
            subscriber.setHandshakeIvl(1_000);
            subscriber.setReceiveTimeOut(30_000);
            subscriber.connect(matcher.group(1));
            subscriber.subscribe("kv@serve-test@".getBytes(StandardCharsets.UTF_8));
            final byte[] topic = subscriber.recv();
            assertThat(topic).as("a message from serve; output: %s", Files.readString(out)).isNotNull();
            assertThat(new String(topic, StandardCharsets.UTF_8)).isEqualTo("kv@serve-test@");
            assertThat(subscriber.recv()).as("sequence 0").containsExactly(0, 0, 0, 0, 0, 0, 0, 0);
            final byte[] payload = subscriber.recv();
            // [ts, [["AllBlocksCleared"]]]: the events array and the event after the 9-byte float64.
            assertThat(HexFormat.of().formatHex(payload, 10, payload.length))
                .isEqualTo("9191b0" + HexFormat.of().formatHex("AllBlocksCleared".getBytes(StandardCharsets.US_ASCII)));
            process.destroy();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("serve stopped after SIGTERM").isTrue();
            assertThat(process.exitValue()).as(Files.readString(out)).isZero();
            assertThat(pool).doesNotExist();
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}
