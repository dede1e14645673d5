package io.kvtier.cli;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An engine that reaches its open-files limit before it served any request still serves once it has
 * descriptors for a connection: none of its request path's classes is left to be read from a file at that
 * moment. The engine runs with kvtier's modules as class directories, as a development build does, since
 * classes in jars load from jars the JVM already holds open.
 */
class ServeAtDescriptorLimitTest
{
    private static final Namespace NAMESPACE = new Namespace("fd-limit-test", "page4", 0, "");
    private static final int PAGE_SIZE = 16 * 1024;
    private static final int PAGES = 8;

    /** java.class.path with each kvtier jar of the reactor (module/target/kvtier-*.jar) replaced by its module/target/classes. */
    private static String classPathWithDirectories()
    {
        final List<String> entries = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            final Path path = Path.of(entry);
            final Path classes = path.getParent() == null ? null : path.getParent().resolve("classes");
            final boolean reactorJar = path.getFileName().toString().startsWith("kvtier-") && path.toString().endsWith(".jar")
                && path.getParent().getFileName().toString().equals("target") && Files.isDirectory(classes);
            entries.add(reactorJar ? classes.toString() : entry);
        }
        return String.join(File.pathSeparator, entries);
    }

    private static long openDescriptors(final long pid) throws Exception
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd")))
        {
            return fds.count();
        }
    }

    @Test
    void shouldServeAClientThatConnectsWhenTheEngineIsAtItsDescriptorLimitBeforeItsFirstRequest(@TempDir final Path dir) throws Exception
    {
        final String classPath = classPathWithDirectories();
        assumeTrue(Stream.of(classPath.split(File.pathSeparator)).anyMatch(entry -> entry.endsWith(File.separator + "engine" + File.separator
            + "target" + File.separator + "classes")), "the engine's classes are not a directory here (" + classPath + ")");
        final Path pool = Path.of("/dev/shm/kvtier-fd-limit-test-" + ProcessHandle.current().pid());
        final Path config = dir.resolve("kvtier.conf");
        Files.write(config, List.of("pool.path = " + pool, "pool.size = 4MiB", "pool.page-size = " + PAGE_SIZE,
            "tier.l3.type = posix", "tier.l3.dir = " + dir.resolve("l3"), "l3.tiers = l3"));
        final Path out = dir.resolve("serve.txt");
        final Process serve = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", classPath, Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("kvtier serving"))
            {
                assertThat(serve.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced itself in time; output so far: %s", Files.readString(out)).isLessThan(deadline);
                Thread.sleep(20);
            }
            // Room for what a connection takes (the accepted socket, its doorbell), none for reading a class file.
            final long limit = openDescriptors(serve.pid()) + 2;
            final Process prlimit = new ProcessBuilder("prlimit", "--pid", Long.toString(serve.pid()), "--nofile=" + limit + ":")
                .redirectErrorStream(true).start();
            final String said = new String(prlimit.getInputStream().readAllBytes());
            assumeTrue(prlimit.waitFor() == 0, "prlimit could not lower the engine's open-files limit: " + said);

            final int[] tokens = IntStream.range(0, 4 * PAGES).toArray();
            final PageKeyChain keys = new PageKeyChain(PAGES).compute(NAMESPACE, tokens, tokens.length, 4, false);
            try (KvtierClient client = KvtierClient.connect(Path.of(pool + ".sock"), ClientOptions.of(PAGES, NAMESPACE)))
            {
                assertThat(client.lookup(keys).poolPages()).as("a cold engine at its limit answers a LOOKUP").isZero();
                try (ReservedPages pages = client.reserve(keys))
                {
                    final int[] lengths = new int[PAGES];
                    for (int i = 0; i < PAGES; i++)
                    {
                        pages.page(i).fill((byte)(i + 1));
                        lengths[i] = PAGE_SIZE;
                    }
                    assertThat(pages.commit(lengths)).as("pages committed at the limit").isEqualTo(PAGES);
                }
                try (PinnedPages pinned = client.acquire(keys))
                {
                    assertThat(pinned.count()).as("pages pinned at the limit").isEqualTo(PAGES);
                    for (int i = 0; i < PAGES; i++)
                    {
                        final MemorySegment page = pinned.page(i);
                        assertThat(page.get(ValueLayout.JAVA_BYTE, PAGE_SIZE - 1)).as("page %d's bytes", i).isEqualTo((byte)(i + 1));
                    }
                }
            }
            assertThat(Files.readString(out)).as("the engine's output").doesNotContain("NoClassDefFoundError");
        }
        finally
        {
            serve.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            Files.deleteIfExists(pool);
            Files.deleteIfExists(Path.of(pool + ".sock"));
            Files.deleteIfExists(Path.of(pool + ".ipc"));
        }
    }
}
