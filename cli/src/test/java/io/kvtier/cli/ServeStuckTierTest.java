package io.kvtier.cli;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.spi.StorageTierProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kvtier issue 16, item 11: {@code kvtier serve} with a tier plugin whose every call and whose close
 * never return (they ignore interrupts, as a plugin stuck in native code would) still stops on SIGTERM,
 * within a bound, with exit code 0. Before the fix the engine thread sat in the plugin's call and the
 * process was still running minutes after the signal.
 */
class ServeStuckTierTest
{
    /** The plugin, compiled at test time against the SPI alone, as a third party's would be. */
    private static final String PROVIDER = """
        package com.example.stuck;

        import io.kvtier.spi.*;

        public final class Provider implements StorageTierProvider
        {
            public String type() { return "stuck"; }
            public SpiVersion spiVersion() { return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR); }
            public StorageTier create(final TierConfig config, final TierContext context)
            {
                config.rejectUnknown(java.util.Set.of("marker"));
                final java.nio.file.Path marker = config.path("marker");
                return new StorageTier()
                {
                    public String name() { return config.tierName(); }
                    // Shared, as a store other engines write: lookups ask it about keys the index does not know.
                    public java.util.Set<TierCapability> capabilities() { return java.util.EnumSet.of(TierCapability.SHARED); }
                    public void exists(final TierBatch b) { forever(marker); }
                    public void read(final TierBatch b) { forever(marker); }
                    public void write(final TierBatch b) { forever(marker); }
                    public void remove(final TierBatch b) { forever(marker); }
                    public TierUsage usage() { return new TierUsage(0, TierUsage.UNBOUNDED, 0); }
                    public void close() { forever(marker.resolveSibling("closing")); }
                };
            }

            /** Says it was called (a file the test waits for), then never returns. */
            private static void forever(final java.nio.file.Path marker)
            {
                try
                {
                    java.nio.file.Files.writeString(marker, "entered");
                }
                catch (final java.io.IOException ex)
                {
                    throw new java.io.UncheckedIOException(ex);
                }
                final Object never = new Object();
                while (true)
                {
                    try
                    {
                        synchronized (never)
                        {
                            never.wait();
                        }
                    }
                    catch (final InterruptedException ignored)
                    {
                        // stuck for good
                    }
                }
            }
        }
        """;

    @Test
    void shouldStopOnSigtermWithinABoundWhenATierNeverReturns(@TempDir final Path dir) throws Exception
    {
        final Path plugins = Files.createDirectories(dir.resolve("plugins"));
        buildPlugin(plugins.resolve("stuck.jar"), dir);
        final Path pool = Path.of("/dev/shm/kvtier-serve-stuck-" + ProcessHandle.current().pid());
        final Path config = dir.resolve("kvtier.conf");
        Files.write(config, List.of("pool.path = " + pool, "pool.size = 2MiB", "pool.page-size = 64KiB", "l3.io-timeout = 500ms",
            "plugins.dir = " + plugins, "tier.stuck.type = stuck", "tier.stuck.marker = " + dir.resolve("entered")));
        final Path out = dir.resolve("out.txt");
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        IpcConnection client = null;
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("kvtier serving"))
            {
                assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced itself in time").isLessThan(deadline);
                Thread.sleep(50);
            }
            // A lookup of a key the index does not know asks the tier (exists), which never returns. The
            // client then dies without a word (its socket closes): nobody waits on the lookup's answer.
            client = IpcConnection.connect(Path.of(pool + ".sock"), 4);
            client.send(MessageType.LOOKUP, 0, 1, new long[] {0x51}, new long[] {0x51});
            final long asked = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(dir.resolve("entered")))
            {
                assertThat(System.nanoTime()).as("the tier is called; output so far: %s", Files.readString(out)).isLessThan(asked);
                Thread.sleep(50);
            }
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("serve stopped after SIGTERM; output: %s", Files.readString(out)).isTrue();
            final String output = Files.readString(out);
            assertThat(output).contains("kvtier: stopping on SIGTERM").contains("kvtier: stopped")
                .contains("did not close within 500 ms");
            assertThat(process.exitValue()).as("a clean stop on SIGTERM; output: %s", output).isZero();
            assertThat(pool).doesNotExist();
            assertThat(dir.resolve("closing")).as("the tier was asked to close").exists();
        }
        finally
        {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            if (client != null)
            {
                client.close(); // the engine is gone: it only stops its heartbeat and closes its socket
            }
        }
    }

    /** Compiles the plugin against the SPI with the JDK's javac and writes it as a jar with its service file. */
    private static void buildPlugin(final Path jar, final Path scratch) throws Exception
    {
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler").isNotNull();
        final Path classes = Files.createDirectories(scratch.resolve("classes"));
        final Path spi = Path.of(StorageTierProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        final SimpleJavaFileObject source = new SimpleJavaFileObject(URI.create("string:///com/example/stuck/Provider.java"),
            javax.tools.JavaFileObject.Kind.SOURCE)
        {
            @Override
            public CharSequence getCharContent(final boolean ignoreEncodingErrors)
            {
                return PROVIDER;
            }
        };
        assertThat(javac.getTask(null, null, null, List.of("-classpath", spi.toString(), "-d", classes.toString()), null, List.of(source)).call())
            .as("the plugin compiles").isTrue();
        try (OutputStream file = Files.newOutputStream(jar);
             JarOutputStream out = new JarOutputStream(file);
             Stream<Path> walk = Files.walk(classes))
        {
            for (final Path path : walk.filter(Files::isRegularFile).toList())
            {
                out.putNextEntry(new JarEntry(classes.relativize(path).toString().replace('\\', '/')));
                out.write(Files.readAllBytes(path));
                out.closeEntry();
            }
            out.putNextEntry(new JarEntry("META-INF/services/" + StorageTierProvider.class.getName()));
            out.write("com.example.stuck.Provider\n".getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
    }
}
