package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;

import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Constructor;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * The kit's second JVM, for the capabilities that promise something to other processes: objects a
 * {@link io.kvtier.spi.TierCapability#PERSISTENT} tier wrote are there for a process that opens it
 * after the writer closed, and a {@link io.kvtier.spi.TierCapability#SHARED} tier's objects are
 * visible to another process while the writer is still open. Reopening in the same JVM cannot tell
 * those from objects kept in a static field; another process can.
 *
 * <p>The first process writes a {@link Plan} to a file and starts this class's {@link #main} with its
 * own java binary and class path. This side rebuilds the tier the way the contract test built it (a new
 * instance of the contract test class gives the provider, the plan gives the settings, the tier name
 * and the object size), checks that the keys the plan names are present with their bytes or absent,
 * writes and removes the keys it names, closes the tier and exits 0; on any failure it prints what
 * failed and exits 1. Its output goes to a file, never to the parent's streams (surefire reads the
 * test JVM's standard output as its own channel), and the first process shows it when the run failed.
 */
final class SecondProcess
{
    private static final String CONTRACT = "contract";
    private static final String TIER_NAME = "tier-name";
    private static final String OBJECT_SIZE = "object-size";
    private static final String DEADLINE_MS = "deadline-ms";
    private static final String CONFIG_PREFIX = "config.";
    private static final String PRESENT = "present";
    private static final String ABSENT = "absent";
    private static final String WRITE = "write";
    private static final String REMOVE = "remove";
    private static final String OVERWRITE = "overwrite";
    private static final String HOLD = "hold-until";
    /** What the second process of a {@link #HOLD} plan prints once it wrote and removed, keeping its tier open. */
    private static final String HELD = "written and removed; keeping the tier open until the first process has checked";
    /** What the second process prints once every key of an {@link #OVERWRITE} plan was written once. */
    private static final String WRITING = "every key written once; overwriting until killed";
    private static final int OUTPUT_SHOWN = 8192;

    private final Properties plan;
    private final Duration deadline;
    private final BoundedCalls calls = new BoundedCalls();

    private SecondProcess(final Properties plan)
    {
        this.plan = plan;
        this.deadline = Duration.ofMillis(Long.parseLong(plan.getProperty(DEADLINE_MS)));
    }

    /**
     * Runs a plan written by the first process.
     *
     * @param args the plan file
     */
    public static void main(final String[] args)
    {
        int status;
        try
        {
            final Properties plan = new Properties();
            try (Reader reader = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8))
            {
                plan.load(reader);
            }
            System.out.println(new SecondProcess(plan).run());
            status = 0;
        }
        catch (final Throwable failure)
        {
            System.out.println("the second process failed: " + failure);
            failure.printStackTrace(System.out);
            status = 1;
        }
        System.out.flush();
        // Exits even when a tier left non-daemon threads running.
        System.exit(status);
    }

    private String run() throws ReflectiveOperationException, InterruptedException
    {
        final String tierName = plan.getProperty(TIER_NAME);
        final long objectSize = Long.parseLong(plan.getProperty(OBJECT_SIZE));
        final Map<String, String> config = new LinkedHashMap<>();
        for (final String name : plan.stringPropertyNames())
        {
            if (name.startsWith(CONFIG_PREFIX))
            {
                config.put(name.substring(CONFIG_PREFIX.length()), plan.getProperty(name));
            }
        }
        final StorageTierProvider provider = contract().provider();
        final StorageTier tier = calls.call("provider().create(" + config + ") in the second process", deadline,
            () -> provider.create(new TierConfig(tierName, config), new ContractTierContext(tierName, objectSize)));
        if (plan.containsKey(OVERWRITE))
        {
            overwriteUntilKilled(tier, objectSize);
        }
        final Map<PageKey, Long> present = seeded(PRESENT);
        final List<PageKey> absent = keys(ABSENT);
        final Map<PageKey, Long> writes = seeded(WRITE);
        final List<PageKey> removes = keys(REMOVE);
        try (PageArena arena = new PageArena(PageArena.bytesFor(present.size() + writes.size(), objectSize)))
        {
            final List<PageKey> probed = new ArrayList<>(present.keySet());
            probed.addAll(absent);
            final RecordingTierBatch found = submit(tier, TierOperation.EXISTS, RecordingTierBatch.ofKeys("exists", probed));
            for (int i = 0; i < probed.size(); i++)
            {
                final TierStatus expected = i < present.size() ? TierStatus.OK : TierStatus.NOT_FOUND;
                check(found.status(i) == expected, "exists of key " + probed.get(i) + ", which the first process "
                    + (i < present.size() ? "wrote" : "removed") + ", completed " + found.status(i) + " (expected " + expected + ")");
            }
            final List<PageKey> readKeys = List.copyOf(present.keySet());
            final List<MemorySegment> destinations = arena.slices(readKeys.size(), objectSize);
            for (final MemorySegment destination : destinations)
            {
                destination.fill((byte)0x5A);
            }
            final RecordingTierBatch read = submit(tier, TierOperation.READ, new RecordingTierBatch("read", readKeys, destinations));
            for (int i = 0; i < readKeys.size(); i++)
            {
                check(read.status(i) == TierStatus.OK, "read of key " + readKeys.get(i) + ", which the first process wrote, completed "
                    + read.status(i) + " (expected OK)");
                PageBytes.assertContent(read.slice(i), present.get(readKeys.get(i)), "key " + readKeys.get(i) + " read by the second process");
            }
            final List<PageKey> writeKeys = List.copyOf(writes.keySet());
            final List<MemorySegment> sources = arena.slices(writeKeys.size(), objectSize);
            for (int i = 0; i < writeKeys.size(); i++)
            {
                PageBytes.fill(sources.get(i), writes.get(writeKeys.get(i)));
            }
            final RecordingTierBatch written = submit(tier, TierOperation.WRITE, new RecordingTierBatch("write", writeKeys, sources));
            final RecordingTierBatch removed = submit(tier, TierOperation.REMOVE, RecordingTierBatch.ofKeys("remove", removes));
            for (int i = 0; i < writeKeys.size(); i++)
            {
                check(written.status(i) == TierStatus.OK, "write of key " + writeKeys.get(i) + " completed " + written.status(i));
            }
            for (int i = 0; i < removes.size(); i++)
            {
                check(removed.status(i) == TierStatus.OK, "remove of key " + removes.get(i) + ", which the first process wrote, completed "
                    + removed.status(i) + " (expected OK)");
            }
            if (plan.containsKey(HOLD))
            {
                // Its objects may live in this process (a store whose clients each contribute memory): the first
                // process checks them while this one still has the tier open.
                System.out.println(HELD);
                System.out.flush();
                awaitRelease(Path.of(plan.getProperty(HOLD)));
            }
            calls.run("close() of tier '" + tierName + "' in the second process", deadline, tier::close);
            arena.assertGuardsIntact();
        }
        calls.close();
        return "the second process found " + present.size() + " objects and missed " + absent.size() + " as expected, wrote "
            + writes.size() + " and removed " + removes.size();
    }

    /**
     * Writes each key of the plan once, says so, then keeps overwriting every key with its two contents in
     * turn, one thread per key, until the first process kills this one.
     */
    private void overwriteUntilKilled(final StorageTier tier, final long objectSize) throws InterruptedException
    {
        final List<String> entries = entries(OVERWRITE);
        final PageArena arena = new PageArena(PageArena.bytesFor(2 * entries.size(), objectSize));
        final CountDownLatch firstPass = new CountDownLatch(entries.size());
        for (final String entry : entries)
        {
            final String[] parts = entry.split(":");
            final List<PageKey> key = List.of(PageKey.fromHex(parts[0]));
            final MemorySegment[] contents = {arena.slice(objectSize), arena.slice(objectSize)};
            PageBytes.fill(contents[0], Long.parseLong(parts[1]));
            PageBytes.fill(contents[1], Long.parseLong(parts[2]));
            final Thread writer = new Thread(() ->
            {
                for (int round = 0; ; round++)
                {
                    // A bare batch: a RecordingTierBatch hashes the whole segment as the key completes, and the time
                    // that takes between writes is time in which a kill finds no write in flight.
                    final OneKeyBatch written = new OneKeyBatch(key.getFirst(), contents[round % 2]);
                    tier.write(written);
                    final TierStatus status = written.await(deadline);
                    check(status == TierStatus.OK, "overwrite " + round + " of key " + key.getFirst() + " completed " + status);
                    if (round == 0)
                    {
                        firstPass.countDown();
                    }
                }
            }, "overwrite-" + parts[0]);
            writer.setUncaughtExceptionHandler((thread, failure) ->
            {
                System.out.println("the second process failed while overwriting: " + failure);
                failure.printStackTrace(System.out);
                System.out.flush();
                System.exit(1);
            });
            writer.start();
        }
        check(firstPass.await(deadline.toMillis(), TimeUnit.MILLISECONDS), "not every key was written once within " + deadline);
        System.out.println(WRITING);
        System.out.flush();
        // The writers run until the first process kills this one.
        new CountDownLatch(1).await();
    }

    private void awaitRelease(final Path release) throws InterruptedException
    {
        final long end = System.nanoTime() + deadline.toNanos();
        while (!Files.exists(release))
        {
            check(System.nanoTime() - end < 0, "the first process did not let this one close its tier within " + deadline);
            Thread.sleep(5);
        }
    }

    private RecordingTierBatch submit(final StorageTier tier, final TierOperation operation, final RecordingTierBatch batch)
    {
        calls.run(operation.label() + "() in the second process", deadline, () -> operation.submit(tier, batch));
        return batch.awaitCompletion(deadline);
    }

    private AbstractStorageTierContractTest contract() throws ReflectiveOperationException
    {
        final String name = plan.getProperty(CONTRACT);
        final Class<?> type = Class.forName(name);
        final Constructor<?> constructor;
        try
        {
            constructor = type.getDeclaredConstructor();
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalStateException("the kit rebuilds the tier in a second process from provider() of a new " + name
                + ", which needs a constructor without parameters", ex);
        }
        constructor.setAccessible(true);
        return (AbstractStorageTierContractTest)constructor.newInstance();
    }

    private static void check(final boolean condition, final String failure)
    {
        if (!condition)
        {
            throw new AssertionError("in the second process, " + failure);
        }
    }

    private Map<PageKey, Long> seeded(final String name)
    {
        final Map<PageKey, Long> seeded = new LinkedHashMap<>();
        for (final String entry : entries(name))
        {
            final int colon = entry.indexOf(':');
            seeded.put(PageKey.fromHex(entry.substring(0, colon)), Long.parseLong(entry.substring(colon + 1)));
        }
        return seeded;
    }

    private List<PageKey> keys(final String name)
    {
        final List<PageKey> keys = new ArrayList<>();
        for (final String entry : entries(name))
        {
            keys.add(PageKey.fromHex(entry));
        }
        return keys;
    }

    private List<String> entries(final String name)
    {
        final String value = plan.getProperty(name, "");
        return value.isEmpty() ? List.of() : List.of(value.split(","));
    }

    /** A write batch of one key, for the overwriting threads. */
    private static final class OneKeyBatch implements TierBatch
    {
        private final PageKey key;
        private final MemorySegment source;
        private final CountDownLatch completed = new CountDownLatch(1);
        private volatile TierStatus status;

        OneKeyBatch(final PageKey key, final MemorySegment source)
        {
            this.key = key;
            this.source = source;
        }

        @Override
        public int size()
        {
            return 1;
        }

        @Override
        public long keyHigh(final int index)
        {
            return key.high();
        }

        @Override
        public long keyLow(final int index)
        {
            return key.low();
        }

        @Override
        public MemorySegment segment(final int index)
        {
            return source;
        }

        @Override
        public void complete(final int index, final TierStatus outcome)
        {
            status = outcome;
            completed.countDown();
        }

        TierStatus await(final Duration deadline)
        {
            try
            {
                check(completed.await(deadline.toMillis(), TimeUnit.MILLISECONDS), "a write of key " + key + " did not complete within " + deadline);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", ex);
            }
            return status;
        }
    }

    /** What the first process asks of the second: how to rebuild the tier, and which keys to check and change. */
    static final class Plan
    {
        private final Properties properties = new Properties();

        /**
         * @param contract   the contract test class, whose new instance's {@code provider()} gives the provider
         * @param tierName   the tier's name
         * @param objectSize the object size of the tier's context
         * @param config     the settings the first process created the tier with
         * @param deadline   how long the second process waits for each call before calling the tier hung
         */
        Plan(final Class<?> contract, final String tierName, final long objectSize, final Map<String, String> config, final Duration deadline)
        {
            properties.setProperty(CONTRACT, contract.getName());
            properties.setProperty(TIER_NAME, tierName);
            properties.setProperty(OBJECT_SIZE, Long.toString(objectSize));
            properties.setProperty(DEADLINE_MS, Long.toString(deadline.toMillis()));
            config.forEach((key, value) -> properties.setProperty(CONFIG_PREFIX + key, value));
        }

        /**
         * @param keys  keys the second process must find, with these bytes
         * @param seeds their content seeds
         * @return this plan
         */
        Plan present(final List<PageKey> keys, final List<Long> seeds)
        {
            return put(PRESENT, keys, seeds);
        }

        /**
         * @param keys keys the second process must not find
         * @return this plan
         */
        Plan absent(final List<PageKey> keys)
        {
            return put(ABSENT, keys, null);
        }

        /**
         * @param keys  keys the second process writes
         * @param seeds their content seeds
         * @return this plan
         */
        Plan write(final List<PageKey> keys, final List<Long> seeds)
        {
            return put(WRITE, keys, seeds);
        }

        /**
         * @param keys keys the second process removes, each of which it must find
         * @return this plan
         */
        Plan remove(final List<PageKey> keys)
        {
            return put(REMOVE, keys, null);
        }

        private Plan put(final String name, final List<PageKey> keys, final List<Long> seeds)
        {
            final List<String> entries = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++)
            {
                entries.add(keys.get(i).toHex() + (seeds == null ? "" : ":" + seeds.get(i)));
            }
            properties.setProperty(name, String.join(",", entries));
            return this;
        }

        /**
         * @param keys   keys the second process overwrites until it is killed, each from its own thread
         * @param first  the content seed of each key's odd writes
         * @param second the content seed of each key's even writes
         * @return this plan
         */
        Plan overwrite(final List<PageKey> keys, final List<Long> first, final List<Long> second)
        {
            final List<String> entries = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++)
            {
                entries.add(keys.get(i).toHex() + ":" + first.get(i) + ":" + second.get(i));
            }
            properties.setProperty(OVERWRITE, String.join(",", entries));
            return this;
        }

        /**
         * Starts a second JVM on an {@link #overwrite} plan and kills it (SIGKILL) as soon as it says that
         * every key was written once, while its threads are busy overwriting them. Skips the calling test,
         * with the reason, when no second JVM can be started here.
         *
         * @param what     names the check in failures
         * @param workDir  an empty directory for the plan and the process's output
         * @param deadline how long the process may take to write every key once
         * @param code     classes whose code the second JVM needs beyond the class path
         * @throws AssertionError with the process's output when it failed or never got that far
         */
        void killWhileWriting(final String what, final Path workDir, final Duration deadline, final List<Class<?>> code)
        {
            final Path output = workDir.resolve("output.txt");
            final Process process = start(what, workDir, code);
            try
            {
                awaitOutput(what, process, output, WRITING, deadline);
            }
            finally
            {
                process.destroyForcibly();
                try
                {
                    process.waitFor(30, TimeUnit.SECONDS);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * Starts a second JVM on this plan, runs {@code whileOpen} once the second process has written and
         * removed what the plan says while it keeps its tier open, then lets it close the tier and waits for
         * it to succeed. Skips the calling test, with the reason, when no second JVM can be started here.
         *
         * @param what      names the check in failures
         * @param workDir   an empty directory for the plan and the process's output
         * @param deadline  how long the whole process may take
         * @param code      classes whose code the second JVM needs beyond the class path
         * @param whileOpen the first process's checks
         * @throws AssertionError with the process's output when it failed or did not finish in time
         */
        void runHoldingOpen(final String what, final Path workDir, final Duration deadline, final List<Class<?>> code, final Runnable whileOpen)
        {
            final Path release = workDir.resolve("release");
            properties.setProperty(HOLD, release.toString());
            final Path output = workDir.resolve("output.txt");
            final Process process = start(what, workDir, code);
            boolean checked = false;
            try
            {
                awaitOutput(what, process, output, HELD, deadline);
                whileOpen.run();
                checked = true;
            }
            finally
            {
                try
                {
                    Files.createFile(release);
                }
                catch (final IOException ex)
                {
                    process.destroyForcibly();
                }
                if (!checked)
                {
                    process.destroyForcibly();
                }
            }
            await(what, process, output, deadline);
        }

        /**
         * Starts a second JVM on this plan and waits for it to succeed. Skips the calling test, with the
         * reason, when no second JVM can be started here.
         *
         * @param what     names the check in failures
         * @param workDir  an empty directory for the plan and the process's output
         * @param deadline how long the whole process may take
         * @param code     classes whose code the second JVM needs beyond the class path (a contract test
         *                 loaded by a class loader of its own)
         * @throws AssertionError with the process's output when it failed or did not finish in time
         */
        void runIn(final String what, final Path workDir, final Duration deadline, final List<Class<?>> code)
        {
            final Path output = workDir.resolve("output.txt");
            await(what, start(what, workDir, code), output, deadline);
        }

        private static void await(final String what, final Process process, final Path output, final Duration deadline)
        {
            try
            {
                if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS))
                {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                    throw new AssertionError(what + ": the second process (pid " + process.pid() + ") did not finish within " + deadline
                        + "; killed it. Its output:\n" + tail(output));
                }
            }
            catch (final InterruptedException ex)
            {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for the second process", ex);
            }
            if (process.exitValue() != 0)
            {
                throw new AssertionError(what + ": the second process failed (exit code " + process.exitValue() + "). Its output:\n" + tail(output));
            }
        }

        /** Waits until the process prints {@code line}, failing with its output when it ends or takes too long first. */
        private static void awaitOutput(final String what, final Process process, final Path output, final String line, final Duration deadline)
        {
            final long end = System.nanoTime() + deadline.toNanos();
            try
            {
                while (!tail(output).contains(line))
                {
                    if (!process.isAlive())
                    {
                        throw new AssertionError(what + ": the second process ended (exit code " + process.exitValue()
                            + ") before it got that far. Its output:\n" + tail(output));
                    }
                    if (System.nanoTime() - end > 0)
                    {
                        process.destroyForcibly();
                        throw new AssertionError(what + ": the second process (pid " + process.pid() + ") did not get that far within "
                            + deadline + "; killed it. Its output:\n" + tail(output));
                    }
                    Thread.sleep(5);
                }
            }
            catch (final InterruptedException ex)
            {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for the second process", ex);
            }
        }

        /** Writes the plan and starts the second JVM on it, its output going to a file; skips the test when it cannot. */
        private Process start(final String what, final Path workDir, final List<Class<?>> code)
        {
            final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Assumptions.assumeTrue(Files.isExecutable(java), () -> "skipped: no second JVM can be started here to check " + what
                + " (" + java + " is not an executable)");
            final Path planFile = workDir.resolve("plan.properties");
            try (Writer writer = Files.newBufferedWriter(planFile, StandardCharsets.UTF_8))
            {
                properties.store(writer, what);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            final List<String> command = List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-cp", classPath(code), SecondProcess.class.getName(), planFile.toString());
            try
            {
                // Never inheritIO: the test JVM's standard output is surefire's channel, which the child's bytes would corrupt.
                return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(workDir.resolve("output.txt").toFile()).start();
            }
            catch (final IOException ex)
            {
                Assumptions.abort("skipped: no second JVM can be started here to check " + what + ": " + ex);
                throw new AssertionError("unreachable", ex);
            }
        }

        private static String classPath(final List<Class<?>> code)
        {
            final Set<String> entries = new LinkedHashSet<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
            for (final Class<?> type : code)
            {
                final CodeSource source = type.getProtectionDomain().getCodeSource();
                if (source != null && source.getLocation() != null)
                {
                    try
                    {
                        entries.add(Path.of(source.getLocation().toURI()).toString());
                    }
                    catch (final URISyntaxException | IllegalArgumentException ex)
                    {
                        // Not a file: the class path has to carry it.
                    }
                }
            }
            return String.join(File.pathSeparator, entries);
        }

        private static String tail(final Path output)
        {
            try
            {
                final String text = new String(Files.readAllBytes(output), StandardCharsets.UTF_8);
                return text.length() <= OUTPUT_SHOWN ? text : "..." + text.substring(text.length() - OUTPUT_SHOWN);
            }
            catch (final IOException ex)
            {
                return "(cannot read " + output + ": " + ex + ")";
            }
        }
    }
}
