package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client of another user, admitted through {@code ipc.group}, against an engine running as root:
 * it can open none of the engine's files nor another client's ring, and a HOST_FILE registration
 * through a directory that is swapped, again and again, with a link to a root-only file never maps
 * that file (the engine opens the path once, with no link anywhere on it, and checks what it opened).
 * Needs root (to run the client as nobody with setpriv); skipped elsewhere, saying so.
 */
class IpcOtherUserTest
{
    private static final int NOBODY = 65534;
    private static final long FORBIDDEN = 0x5EC2E7_0000_0001L;
    private static final long OWN = 0x0000_0B0D_0000_0002L;
    private static final int TRIES = 400;
    private static final int RENAME_EXCHANGE = 2;
    private static final int AT_FDCWD = -100;

    @Test
    void aClientOfAnotherUserOpensNothingOfOthersAndNeverMapsAFileItCannotRead() throws Exception
    {
        Assumptions.assumeTrue("0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"))),
            "skipped: this test runs a client as the user nobody, which needs root");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")),
            "skipped: this test runs a client as nobody with setpriv (util-linux), which is not installed");
        final Path base = Files.createTempDirectory("kvtier-other-user");
        try
        {
            Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
            final Path engineDir = Files.createDirectory(base.resolve("engine"));
            Files.setPosixFilePermissions(engineDir, PosixFilePermissions.fromString("rwxr-xr-x"));
            // The client's own buffer file, in a directory it owns, and a root-only file with a marker it must never see.
            final Path swap = Files.createDirectory(base.resolve("swap"));
            final Path real = Files.createDirectory(swap.resolve("A"));
            final Path secretDir = Files.createDirectory(base.resolve("secret"));
            Files.setPosixFilePermissions(secretDir, PosixFilePermissions.fromString("rwx------"));
            final Path secret = Files.write(secretDir.resolve("kv"), marked(FORBIDDEN));
            Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
            final Path own = Files.write(real.resolve("kv"), marked(OWN));
            Files.createSymbolicLink(swap.resolve("B"), secretDir);
            for (final Path path : List.of(swap, real, own))
            {
                Files.setAttribute(path, "unix:uid", NOBODY);
                Files.setAttribute(path, "unix:gid", NOBODY);
            }
            Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rw-------"));
            final Path classpath = readableClasspath(base.resolve("cp"));

            final Map<String, String> settings = IpcTestSupport.settings(engineDir, 64);
            settings.put("ipc.group", "nogroup");
            settings.put("ipc.allowed-gids", Integer.toString(NOBODY));
            settings.put("ipc.allowed-uids", "0");
            try (Engine engine = IpcTestSupport.start(settings);
                 io.kvtier.client.IpcConnection victim = io.kvtier.client.IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                assertThat(victim.welcome().status()).isZero();
                final AtomicBoolean swapping = new AtomicBoolean(true);
                final AtomicLong swaps = new AtomicLong();
                final Thread swapper = Thread.ofPlatform().daemon(true).start(() -> swapLoop(swap.resolve("A"), swap.resolve("B"), swapping, swaps));
                final Path out = base.resolve("client.out");
                final List<String> command = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                    ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED", "-cp", classpath.toString() + "/*"
                        + File.pathSeparator + classpath.resolve("classes"), IpcOtherUserClient.class.getName(), IpcTestSupport.socket(engine).toString(),
                    engineDir.toString(), real.resolve("kv").toString(), Long.toString(FORBIDDEN), Long.toString(OWN), Integer.toString(TRIES)));
                final Process client = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
                try
                {
                    assertThat(client.waitFor(5, TimeUnit.MINUTES)).as("the client finished: %s", out).isTrue();
                }
                finally
                {
                    client.destroyForcibly();
                    swapping.set(false);
                    swapper.join(10_000);
                }
                final String output = Files.readString(out);
                assertThat(client.exitValue()).as(output).isZero();
                final String result = output.lines().filter(l -> l.startsWith("RESULT")).findFirst().orElseThrow(() -> new AssertionError(output));
                assertThat(value(result, "opened")).as("files of the engine or of another client opened for writing: %s", output).isZero();
                assertThat(value(result, "leaked")).as("registrations that mapped the root-only file: %s", result).isZero();
                // The race was run: registrations went both ways while the directories were swapped.
                assertThat(value(result, "accepted")).as(result).isPositive();
                assertThat(value(result, "refused")).as(result).isPositive();
                assertThat(value(result, "own")).as("every accepted registration mapped the client's own file").isEqualTo(value(result, "accepted"));
                assertThat(swaps.get()).isPositive();
            }
        }
        finally
        {
            try (Stream<Path> walk = Files.walk(base))
            {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static byte[] marked(final long marker)
    {
        final ByteBuffer bytes = ByteBuffer.allocate((int)IpcOtherUserClient.FILE_BYTES).order(ByteOrder.nativeOrder());
        for (int i = 0; i < bytes.capacity(); i += 8)
        {
            bytes.putLong(i, marker);
        }
        return bytes.array();
    }

    private static long value(final String result, final String name)
    {
        for (final String part : result.split(" "))
        {
            if (part.startsWith(name + "="))
            {
                return Long.parseLong(part.substring(name.length() + 1));
            }
        }
        throw new AssertionError("no " + name + " in " + result);
    }

    /** Swaps the two names atomically over and over (renameat2 RENAME_EXCHANGE), as the attacker did. */
    private static void swapLoop(final Path a, final Path b, final AtomicBoolean running, final AtomicLong swaps)
    {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle renameat2 = linker.downcallHandle(linker.defaultLookup().find("renameat2").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment from = arena.allocateFrom(a.toString());
            final MemorySegment to = arena.allocateFrom(b.toString());
            while (running.get())
            {
                if ((int)renameat2.invokeExact(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0)
                {
                    swaps.incrementAndGet();
                }
            }
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The client's classes, readable by nobody: this JVM's class path lives under root's home. Only what
     * the client needs: the client and native modules, and this package's test classes.
     */
    private static Path readableClasspath(final Path target) throws Exception
    {
        final Path classes = Files.createDirectories(target.resolve("classes"));
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            final Path path = Path.of(entry);
            final String name = path.toString();
            final boolean wanted = name.contains("kvtier-client") || name.contains("kvtier-native") || name.contains("/client/target/classes")
                || name.contains("/native/target/classes") || name.endsWith("engine/target/test-classes");
            if (!wanted || !Files.exists(path))
            {
                continue;
            }
            if (Files.isRegularFile(path))
            {
                Files.copy(path, target.resolve(path.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            else
            {
                try (Stream<Path> walk = Files.walk(path))
                {
                    for (final Path file : (Iterable<Path>)walk::iterator)
                    {
                        final Path copy = classes.resolve(path.relativize(file).toString());
                        if (Files.isDirectory(file))
                        {
                            Files.createDirectories(copy);
                        }
                        else if (!Files.exists(copy))
                        {
                            Files.copy(file, copy);
                        }
                    }
                }
            }
        }
        try (Stream<Path> walk = Files.walk(target))
        {
            for (final Path file : (Iterable<Path>)walk::iterator)
            {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(Files.isDirectory(file) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
        Files.setPosixFilePermissions(target.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        return target;
    }
}
