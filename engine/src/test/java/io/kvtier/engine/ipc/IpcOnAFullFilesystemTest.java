package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.Engine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Any local user can fill {@code /dev/shm}. The engine allocates every block of a file it makes at
 * creation, so a full filesystem refuses a client cleanly at its handshake, with a message saying so,
 * instead of faulting the engine's first store into a ring page; and a 1.2 client, whose ring is an
 * anonymous memory file, is not held up by that filesystem at all.
 */
class IpcOnAFullFilesystemTest
{
    private Path mount;

    @BeforeEach
    void mountASmallFilesystem() throws Exception
    {
        mount = Files.createTempDirectory("kvtier-small-shm");
        final Process process = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mount.toString())
            .redirectErrorStream(true).start();
        final boolean exited = process.waitFor(30, TimeUnit.SECONDS);
        final String output = new String(process.getInputStream().readAllBytes()).strip();
        Assumptions.assumeTrue(exited && process.exitValue() == 0,
            "skipped: this test mounts a 16 MiB tmpfs to fill it, which needs root (mount -t tmpfs); mount said: " + output);
    }

    @AfterEach
    void unmount() throws Exception
    {
        if (mount != null)
        {
            new ProcessBuilder("umount", "-l", mount.toString()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
            Files.deleteIfExists(mount);
        }
    }

    @Test
    void aFullFilesystemRefusesARingFileAtTheHandshakeAndTheEngineCarriesOn() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(mount, 64);
        try (Engine engine = IpcTestSupport.start(settings))
        {
            fill(mount.resolve("filler"));
            // A 1.1 client's ring is a file beside the pool: no room for it, said at once.
            assertThatThrownBy(() -> IpcConnection.connect(IpcTestSupport.socket(engine), 8, new byte[0], 1, 1, IdleStrategy.Kind.BACKOFF))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.INTERNAL_ERROR))
                .hasMessageContaining("filesystem is full");
            try (Stream<Path> left = Files.list(mount))
            {
                assertThat(left.filter(p -> p.getFileName().toString().contains(".client-")).toList()).as("no half-made ring file left").isEmpty();
            }
            // A 1.2 client's ring is anonymous memory: served, every answer written into it.
            try (IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                for (int i = 0; i < 100; i++)
                {
                    final long id = client.send(MessageType.STATS, 0, 0, 0);
                    assertThat(client.awaitResponse(id).status()).isZero();
                    client.releaseResponse();
                }
            }
        }
    }

    private static void fill(final Path file) throws IOException
    {
        final byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file))
        {
            while (true)
            {
                out.write(chunk);
            }
        }
        catch (final IOException full)
        {
            if (!String.valueOf(full.getMessage()).contains("No space left"))
            {
                throw full;
            }
        }
    }
}
