package io.kvtier.engine.pool;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The pool on huge pages: a hugetlbfs mounted without a size limit (which reports no blocks, so a check of
 * its free space alone refuses every pool) takes a pool up to the free huge pages, its pages come from
 * them, and a pool larger than they are is refused naming them. Reserves 16 huge pages of 2 MiB for the
 * test and mounts a hugetlbfs, which needs root; gives both back after.
 */
class PoolOnHugePagesTest
{
    private static final Path NR_HUGEPAGES = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    private static final Path FREE_HUGEPAGES = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
    private static final int RESERVED = 16;

    private Path mount;
    private long nrBefore = -1;

    @BeforeEach
    void mountHugetlbfs() throws Exception
    {
        Assumptions.assumeTrue(Files.isWritable(NR_HUGEPAGES), "skipped: " + NR_HUGEPAGES + " is not writable here (needs root and 2 MiB huge pages)");
        nrBefore = Long.parseLong(Files.readString(NR_HUGEPAGES).strip());
        final long freeBefore = Long.parseLong(Files.readString(FREE_HUGEPAGES).strip());
        Files.writeString(NR_HUGEPAGES, String.valueOf(nrBefore + RESERVED));
        final long free = Long.parseLong(Files.readString(FREE_HUGEPAGES).strip());
        Assumptions.assumeTrue(free >= freeBefore + RESERVED, "skipped: the kernel found " + (free - freeBefore) + " of " + RESERVED
            + " huge pages of 2 MiB asked for (memory too fragmented)");
        mount = Files.createTempDirectory("kvtier-hugetlbfs");
        final Process process = new ProcessBuilder("mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "none", mount.toString())
            .redirectErrorStream(true).start();
        final boolean exited = process.waitFor(30, TimeUnit.SECONDS);
        final String output = new String(process.getInputStream().readAllBytes()).strip();
        Assumptions.assumeTrue(exited && process.exitValue() == 0, "skipped: mounting a hugetlbfs needs root; mount said: " + output);
    }

    @AfterEach
    void giveBack() throws Exception
    {
        if (mount != null)
        {
            new ProcessBuilder("umount", "-l", mount.toString()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
            Files.deleteIfExists(mount);
        }
        if (nrBefore >= 0)
        {
            Files.writeString(NR_HUGEPAGES, String.valueOf(nrBefore));
        }
    }

    @Test
    void shouldPutThePoolOnFreeHugePagesOfAnUnsizedMountAndServeFromIt() throws Exception
    {
        final long freeBefore = Long.parseLong(Files.readString(FREE_HUGEPAGES).strip());
        try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, mount.resolve("pool").toString(), EngineConfig.POOL_SIZE,
                "8MiB", EngineConfig.POOL_PAGE_SIZE, "64KiB")));
             Session session = engine.openSession())
        {
            final long used = freeBefore - Long.parseLong(Files.readString(FREE_HUGEPAGES).strip());
            assertThat(used).as("huge pages the pool file took (8 MiB of pages and their trailers)").isGreaterThanOrEqualTo(4);
            final int pages = 8;
            for (int i = 0; i < pages; i++)
            {
                session.keys().add(12, i);
            }
            assertThat(session.reserve(0, pages)).as("reserved; first status %s", session.status(0)).isEqualTo(pages);
            for (int i = 0; i < pages; i++)
            {
                session.page(i).fill((byte)(i + 1));
                session.payloadLength(i, (int)engine.pool().pageSize());
            }
            assertThat(session.commit(0, pages)).isEqualTo(pages);
            assertThat(session.acquire(0, pages)).isEqualTo(pages);
            for (int i = 0; i < pages; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED);
                assertThat(session.page(i).get(ValueLayout.JAVA_BYTE, engine.pool().pageSize() - 1)).isEqualTo((byte)(i + 1));
            }
        }
    }

    @Test
    void shouldRefuseAPoolLargerThanTheFreeHugePagesNamingThem()
    {
        assertThatThrownBy(() -> EngineConfig.from(Map.of(EngineConfig.POOL_PATH, mount.resolve("pool").toString(), EngineConfig.POOL_SIZE,
                "64GiB", EngineConfig.POOL_PAGE_SIZE, "64KiB")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("pool.size").hasMessageContaining("free in huge pages");
    }
}
