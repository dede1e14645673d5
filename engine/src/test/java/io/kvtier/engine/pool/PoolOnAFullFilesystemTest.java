package io.kvtier.engine.pool;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool whose filesystem fills up after the engine started: every store into the pool still works,
 * because the file's blocks were allocated at creation (a sparse file would fault on the first touch
 * of an unallocated page, and the engine would lose that page).
 */
class PoolOnAFullFilesystemTest
{
    private Path mount;

    @BeforeEach
    void mountASmallFilesystem() throws Exception
    {
        mount = Files.createTempDirectory("kvtier-small-fs");
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
    void shouldKeepWritingEveryPageAfterThePoolsFilesystemFilledUp() throws Exception
    {
        final Path pool = mount.resolve("pool");
        try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, pool.toString(), EngineConfig.POOL_SIZE, "4MiB",
                EngineConfig.POOL_PAGE_SIZE, "64KiB")));
             Session session = engine.openSession())
        {
            fill(mount.resolve("filler"));
            // Below the low water level, so that nothing is evicted and every page can be read back.
            final int pages = engine.pool().pageCount() * 3 / 4;
            for (int i = 0; i < pages; i++)
            {
                session.keys().add(11, i);
            }
            assertThat(session.reserve(0, pages)).as("reserved; first status %s", session.status(0)).isEqualTo(pages);
            for (int i = 0; i < pages; i++)
            {
                session.page(i).fill((byte)i);
                session.payloadLength(i, (int)engine.pool().pageSize());
            }
            assertThat(session.commit(0, pages)).isEqualTo(pages);
            assertThat(session.acquire(0, pages)).isEqualTo(pages);
            for (int i = 0; i < pages; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED);
                assertThat(session.page(i).get(ValueLayout.JAVA_BYTE, engine.pool().pageSize() - 1)).isEqualTo((byte)i);
            }
            session.release();
        }
    }

    /** Writes into {@code filler} until its filesystem is full (PoolGrowthTest fills a small tmpfs the same way). */
    static void fill(final Path filler) throws IOException
    {
        final byte[] chunk = new byte[64 << 10];
        try (OutputStream out = Files.newOutputStream(filler))
        {
            while (true)
            {
                out.write(chunk);
            }
        }
        catch (final IOException ex)
        {
            assertThat(ex.getMessage()).as("the filler stops because the filesystem is full").containsIgnoringCase("space");
        }
    }
}
