package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.spi.TrailerBlock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.fail;

/**
 * The contract every {@link StorageTier} keeps, as JUnit 5 tests. A plugin runs the whole kit by
 * extending this class and filling in the hooks, Hadoop-contract-test style:
 *
 * <pre>{@code
 * class MyTierContractTest extends AbstractStorageTierContractTest
 * {
 *     protected StorageTierProvider provider() { return new MyTierProvider(); }
 *     protected Map<String, String> validConfig(Path scratchDir) { return Map.of("dir", scratchDir.toString()); }
 *     protected List<InvalidConfig> invalidConfigs(Path scratchDir) { ... }
 * }
 * }</pre>
 *
 * <p>Each test gets a fresh tier created by {@link #provider()} on {@link #validConfig(Path)} with a
 * {@link ContractTierContext} named {@link #tierName()}. Segments are 4 KiB-aligned slices of one
 * native arena with guard bytes around each, like the engine's shared pool. Keys are random, so
 * tests never see each other's objects. Tests whose contract depends on a {@link TierCapability}
 * exist only when the tier declares it (dynamic tests: a tier without the capability gets none, not a skip).
 *
 * <p>Every batch the kit submits is a {@link RecordingTierBatch}; after each test the kit closes
 * every tier it opened and fails the test if any batch saw a key completed twice or touched after
 * completion, or any of its methods called after its last key completed, even late.
 *
 * <p>No call into the tier can hang the build: {@code create}, the four operations and {@code close}
 * run on daemon threads of the kit, which waits for each at most {@link #completionDeadline()} and
 * then fails the test naming the call and showing where it hung. What a tier promises to other
 * processes (PERSISTENT, SHARED, atomic writes across a crash) is checked from a second JVM that
 * rebuilds the tier from a new instance of the contract test class (its {@link #provider()}) and
 * the settings of {@link #validConfig(Path)}: the class needs a constructor without parameters, as
 * JUnit does, and the provider must not depend on state a test set up in this JVM.
 */
public abstract class AbstractStorageTierContractTest
{
    /** The tier name the kit uses unless {@link #tierName()} is overridden. */
    public static final String DEFAULT_TIER_NAME = "contract";

    private static final int OBJECTS = 8;

    @TempDir
    Path scratchRoot;

    private final List<StorageTier> openTiers = new ArrayList<>();
    private final List<RecordingTierBatch> batches = Collections.synchronizedList(new ArrayList<>());
    private final List<PageArena> arenas = new ArrayList<>();
    private final Map<StorageTier, Long> objectSizes = new HashMap<>();
    private final SplittableRandom random = new SplittableRandom();
    private final BoundedCalls calls = new BoundedCalls();

    private Path tierDir;
    private Map<String, String> tierConfig;
    private ContractTierContext context;
    private StorageTier tier;

    /** @return the plugin's provider, as {@link java.util.ServiceLoader} would find it */
    protected abstract StorageTierProvider provider();

    /**
     * @param scratchDir an empty directory the tier may use, unique to the test; the same directory is
     *                   passed again when a test reopens the tier
     * @return settings, without the {@code tier.<name>.} prefix, for a tier that works; leave room for
     *         every test's objects (a few MiB) so the kit's ordinary tests see no eviction
     */
    protected abstract Map<String, String> validConfig(Path scratchDir);

    /**
     * @param scratchDir an empty directory the configurations may point at
     * @return configurations the provider must refuse with a {@link TierConfigException} naming the
     *         given key; the kit adds an unknown key of its own ({@link #unknownSettingKey()})
     */
    protected abstract List<InvalidConfig> invalidConfigs(Path scratchDir);

    /**
     * @return the object size of the kit's tiers: a multiple of 4096, by default 64 KiB + 4 KiB so a
     *         tier that assumes powers of two is caught
     */
    protected long objectSize()
    {
        return 64 * 1024 + 4096;
    }

    /** @return the tier name in the context and in qualified keys */
    protected String tierName()
    {
        return DEFAULT_TIER_NAME;
    }

    /**
     * @return how long the kit waits for a batch's keys to complete, or for a call into the tier
     *         ({@code create}, an operation, {@code close}) to return, before it calls the tier hung
     */
    protected Duration completionDeadline()
    {
        return Duration.ofSeconds(30);
    }

    /** @return how many keys the large-batch test puts in one batch */
    protected int largeBatchSize()
    {
        return 1024;
    }

    /**
     * @return the object size of the tiers of the large-batch, collision and concurrency tests, small to
     *         keep them fast
     */
    protected long largeBatchObjectSize()
    {
        return 4096;
    }

    /**
     * @return how long {@link #shouldServeConcurrentBatchesFromManyThreads()} keeps starting rounds (it runs
     *         one at least, and never stops one halfway): long enough for racing threads to meet inside a
     *         fast tier's unsynchronised code many times over
     */
    protected Duration concurrencyDuration()
    {
        return Duration.ofSeconds(2);
    }

    /**
     * The object sizes of {@link #shouldRoundTripFramesOfEverySize()}, each a multiple of 4096 (the SPI
     * promises no other). The engine hands a tier whole frames, a page of any multiple of 4 KiB from
     * 4 KiB to 1 GiB plus a 4 KiB trailer, so the defaults are the smallest frame (8 KiB), one of five
     * blocks (20 KiB, no power of two), one just past 128 KiB (a 128 KiB page's frame) and a 2 MiB
     * page's frame (2 MiB + 4 KiB, the size the README's examples use). A tier that cannot hold some
     * size drops it here and says so in its documentation.
     *
     * @return the sizes
     */
    protected List<Long> frameSizes()
    {
        return List.of(8L * 1024, 20L * 1024, 132L * 1024, 2L * 1024 * 1024 + 4096);
    }

    /**
     * @return how many keys {@link #shouldTellApartKeysWhoseWeakHashesCollide()} stores at once: thousands,
     *         as a tier holds in production, so an index that tolerates a few collisions but not a
     *         crowd of them is caught too
     */
    protected int collidingKeyCount()
    {
        return 2048;
    }

    /**
     * Settings for a tier holding at most {@code capacityBytes}, for the
     * {@link TierCapability#SELF_EVICTING} test.
     *
     * @param scratchDir    an empty directory the tier may use
     * @param capacityBytes the capacity to configure: a whole number of objects
     * @return the settings, or {@code null} (the default) when the plugin does not say how to bound
     *         its tier: then the eviction contract does not exist for it, unless the tier declares
     *         SELF_EVICTING, which fails
     */
    protected Map<String, String> boundedConfig(final Path scratchDir, final long capacityBytes)
    {
        return null;
    }

    /** @return a setting no tier knows, which the provider must refuse */
    protected String unknownSettingKey()
    {
        return "no-such-setting";
    }

    /**
     * @param key a setting without the prefix
     * @return {@code tier.<name>.<key>}, as error messages must name it
     */
    protected final String qualifiedKey(final String key)
    {
        return "tier." + tierName() + "." + key;
    }

    /** Objects a bounded tier of the eviction contract holds. */
    private static final int BOUNDED_OBJECTS = 8;

    // ------------------------------------------------------------------------------------------------
    // Lifecycle and helpers
    // ------------------------------------------------------------------------------------------------

    @BeforeEach
    final void openContractTier() throws IOException
    {
        final long size = objectSize();
        if (size <= 0 || size % 4096 != 0)
        {
            throw new IllegalStateException("objectSize() = " + size + " must be a positive multiple of 4096");
        }
        tierDir = Files.createDirectories(scratchRoot.resolve("tier"));
        context = new ContractTierContext(tierName(), size);
        tierConfig = validConfig(tierDir);
        tier = openTier(tierConfig, context);
    }

    @AfterEach
    final void closeContractTiers()
    {
        final List<Throwable> failures = new ArrayList<>();
        for (final StorageTier open : openTiers)
        {
            try
            {
                closeTier(open);
            }
            catch (final AssertionError ex)
            {
                failures.add(ex);
            }
            catch (final RuntimeException ex)
            {
                failures.add(new AssertionError("close() threw, a plugin failure", ex));
            }
        }
        openTiers.clear();
        objectSizes.clear();
        // Workers are stopped now, so a key completed twice "late" has shown up by this point.
        final List<String> violations = new ArrayList<>();
        synchronized (batches)
        {
            for (final RecordingTierBatch batch : batches)
            {
                for (final String violation : batch.violations())
                {
                    if (violations.size() < 16)
                    {
                        violations.add("batch '" + batch.label() + "': " + violation);
                    }
                }
            }
            batches.clear();
        }
        if (!calls.anyHung())
        {
            for (final PageArena arena : arenas)
            {
                arena.close();
            }
        }
        // else the arenas stay mapped: a hung call may still move bytes into them (an io_uring read, a DMA), and
        // memory freed under it would corrupt the test JVM instead of failing one test.
        arenas.clear();
        calls.close();
        try
        {
            releaseWhatKilledProcessesLeft(scratchRoot);
        }
        catch (final IOException | RuntimeException ex)
        {
            failures.add(new AssertionError("releaseWhatKilledProcessesLeft(" + scratchRoot + ") failed", ex));
        }
        if (!violations.isEmpty())
        {
            failures.add(new AssertionError("the tier broke the TierBatch contract: " + violations));
        }
        if (!failures.isEmpty())
        {
            final AssertionError first = failures.getFirst() instanceof AssertionError ae ? ae : new AssertionError(failures.getFirst());
            for (int i = 1; i < failures.size(); i++)
            {
                first.addSuppressed(failures.get(i));
            }
            throw first;
        }
    }

    /**
     * Called after each test, once the kit has closed its tiers and before the scratch root is deleted. A
     * second process the kit killed (the PERSISTENT check's writer) could not release what its tier holds
     * outside the scratch directories, such as shared memory registered with a client library; a kit whose
     * tier holds such things finds them from the scratch root and releases them here, so that runs do not
     * pile them up. The default does nothing.
     *
     * @param scratchRoot the root of every scratch directory of the test
     * @throws IOException when something found cannot be released
     */
    protected void releaseWhatKilledProcessesLeft(final Path scratchRoot) throws IOException
    {
    }

    /** @return the tier the current test runs against */
    protected final StorageTier tier()
    {
        return tier;
    }

    /** @return the context of {@link #tier()} */
    protected final ContractTierContext context()
    {
        return context;
    }

    /** @return the scratch directory {@link #tier()} was configured with */
    protected final Path tierDir()
    {
        return tierDir;
    }

    /**
     * Creates a tier that the kit closes after the test.
     *
     * @param config  settings without the prefix
     * @param context the context to create it with
     * @return the tier
     */
    protected final StorageTier openTier(final Map<String, String> config, final ContractTierContext context)
    {
        final StorageTierProvider provider = provider();
        final StorageTier opened = calls.call("provider().create(" + config + ")", completionDeadline(),
            () -> provider.create(new TierConfig(tierName(), config), context));
        assertThat(opened).as("provider().create returned null").isNotNull();
        openTiers.add(opened);
        objectSizes.put(opened, context.objectSize());
        return opened;
    }

    /**
     * Closes a tier, waiting at most {@link #completionDeadline()} for {@code close()} to return.
     *
     * @param target the tier
     * @throws AssertionError naming the tier when close() does not return in time
     */
    protected final void closeTier(final StorageTier target)
    {
        calls.run("close() of tier '" + target.name() + "'", completionDeadline(), target::close);
    }

    /**
     * @param name a subdirectory of the test's scratch root
     * @return the subdirectory, created
     */
    protected final Path scratchDir(final String name)
    {
        try
        {
            return Files.createDirectories(scratchRoot.resolve(name));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @param slices    how many slices the test needs
     * @param sliceSize the largest slice
     * @return an arena the kit closes after the test
     */
    protected final PageArena newArena(final int slices, final long sliceSize)
    {
        final PageArena arena = new PageArena(PageArena.bytesFor(slices, sliceSize));
        arenas.add(arena);
        return arena;
    }

    /**
     * @param count how many
     * @return fresh random keys, distinct
     */
    protected final List<PageKey> newKeys(final int count)
    {
        final Set<PageKey> keys = new LinkedHashSet<>();
        synchronized (random)
        {
            while (keys.size() < count)
            {
                keys.add(new PageKey(random.nextLong(), random.nextLong()));
            }
        }
        return List.copyOf(keys);
    }

    /** @return a fresh random seed for page contents */
    protected final long newSeed()
    {
        synchronized (random)
        {
            return random.nextLong();
        }
    }

    /**
     * @param label    names the batch in messages
     * @param keys     the keys
     * @param segments their segments
     * @return a batch the kit checks for violations after the test
     */
    protected final RecordingTierBatch batch(final String label, final List<PageKey> keys, final List<MemorySegment> segments)
    {
        final RecordingTierBatch batch = new RecordingTierBatch(label, keys, segments);
        batches.add(batch);
        return batch;
    }

    /**
     * @param label names the batch in messages
     * @param keys  the keys
     * @return a batch without segments, for {@code exists} and {@code remove}
     */
    protected final RecordingTierBatch keyBatch(final String label, final List<PageKey> keys)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys(label, keys);
        batches.add(batch);
        return batch;
    }

    /**
     * Hands a batch to one of the tier's operations, waiting at most {@link #completionDeadline()} for the
     * call itself to return (it should return at once; the keys complete later).
     *
     * @param target    the tier
     * @param operation which operation
     * @param batch     the batch
     * @return the batch, submitted
     * @throws AssertionError naming the call when it does not return in time
     */
    protected final RecordingTierBatch submit(final StorageTier target, final TierOperation operation, final RecordingTierBatch batch)
    {
        calls.run(operation.label() + "() of batch '" + batch.label() + "' on tier '" + target.name() + "'", completionDeadline(),
            () -> operation.submit(target, batch));
        return batch;
    }

    /**
     * @param batch a submitted batch
     * @return the batch, once every key is completed
     */
    protected final RecordingTierBatch await(final RecordingTierBatch batch)
    {
        return batch.awaitCompletion(completionDeadline());
    }

    /**
     * Writes pages filled from the seeds and waits.
     *
     * @param target the tier
     * @param label  names the batch
     * @param keys   the keys
     * @param seeds  one content seed per key
     * @param arena  where the source slices come from
     * @return the completed batch
     */
    protected final RecordingTierBatch write(final StorageTier target, final String label, final List<PageKey> keys,
                                             final List<Long> seeds, final PageArena arena)
    {
        final List<MemorySegment> sources = arena.slices(keys.size(), sizeOf(target));
        for (int i = 0; i < keys.size(); i++)
        {
            PageBytes.fill(sources.get(i), seeds.get(i));
        }
        return await(submit(target, TierOperation.WRITE, batch(label, keys, sources)));
    }

    /**
     * Reads into fresh slices (filled with noise first) and waits.
     *
     * @param target the tier
     * @param label  names the batch
     * @param keys   the keys
     * @param arena  where the destination slices come from
     * @return the completed batch
     */
    protected final RecordingTierBatch read(final StorageTier target, final String label, final List<PageKey> keys, final PageArena arena)
    {
        final List<MemorySegment> destinations = arena.slices(keys.size(), sizeOf(target));
        for (final MemorySegment destination : destinations)
        {
            PageBytes.fill(destination, newSeed());
        }
        return await(submit(target, TierOperation.READ, batch(label, keys, destinations)));
    }

    /**
     * @param target the tier
     * @param label  names the batch
     * @param keys   the keys
     * @return the completed {@code exists} batch
     */
    protected final RecordingTierBatch exists(final StorageTier target, final String label, final List<PageKey> keys)
    {
        return await(submit(target, TierOperation.EXISTS, keyBatch(label, keys)));
    }

    /**
     * @param target the tier
     * @param label  names the batch
     * @param keys   the keys
     * @return the completed {@code remove} batch
     */
    protected final RecordingTierBatch remove(final StorageTier target, final String label, final List<PageKey> keys)
    {
        return await(submit(target, TierOperation.REMOVE, keyBatch(label, keys)));
    }

    private long sizeOf(final StorageTier target)
    {
        return objectSizes.getOrDefault(target, objectSize());
    }

    /**
     * @param batch    a completed batch
     * @param expected the status of each key, in order
     */
    protected static void assertStatuses(final RecordingTierBatch batch, final TierStatus... expected)
    {
        assertThat(batch.statuses()).as("statuses of batch '%s'", batch.label()).containsExactly(expected);
    }

    /**
     * @param batch    a completed batch
     * @param expected the status every key must have
     */
    protected static void assertAll(final RecordingTierBatch batch, final TierStatus expected)
    {
        final List<Integer> wrong = new ArrayList<>();
        for (int i = 0; i < batch.keyCount(); i++)
        {
            if (batch.status(i) != expected)
            {
                wrong.add(i);
            }
        }
        if (!wrong.isEmpty())
        {
            fail("batch '%s': every key should be %s but %d were not, e.g. key %d was %s; all: %s", batch.label(), expected,
                wrong.size(), wrong.getFirst(), batch.status(wrong.getFirst()), batch.statuses());
        }
    }

    private Set<TierCapability> capabilities(final StorageTier target)
    {
        return TierCapability.closure(target.capabilities());
    }

    /**
     * The contract of a capability exists only for a tier that declares it: a tier without it gets no
     * test at all rather than a skipped one, so a skip in a plugin's build always means something
     * (a missing library or device), never "this does not apply".
     */
    private Stream<DynamicTest> ifDeclared(final TierCapability capability, final String what, final Runnable check)
    {
        return capabilities(tier).contains(capability)
            ? Stream.of(DynamicTest.dynamicTest(capability + ": " + what, check::run))
            : Stream.empty();
    }

    private static List<Long> seeds(final List<PageKey> keys, final SplittableRandom random)
    {
        final List<Long> seeds = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++)
        {
            seeds.add(random.nextLong());
        }
        return seeds;
    }

    private List<Long> newSeeds(final int count)
    {
        final List<Long> seeds = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            seeds.add(newSeed());
        }
        return seeds;
    }

    private void awaitCondition(final String what, final BooleanSupplier condition)
    {
        final long deadline = System.nanoTime() + completionDeadline().toNanos();
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                fail("%s did not happen within %s", what, completionDeadline());
            }
            try
            {
                Thread.sleep(5);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", ex);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Identity and round trips
    // ------------------------------------------------------------------------------------------------

    /** The tier reports the name it was configured under. */
    @Test
    public void shouldReportTheConfiguredName()
    {
        assertThat(tier.name()).isEqualTo(tierName());
        assertThat(tier.capabilities()).as("capabilities()").isNotNull();
    }

    /**
     * The provider says which SPI it was compiled against, and it is one this kit's SPI runs: an engine
     * refuses a plugin from its plugin directory that declares none, or one it cannot run.
     */
    @Test
    public void shouldDeclareTheSpiVersionItWasBuiltFor()
    {
        final SpiVersion builtFor = provider().spiVersion();
        assertThat(builtFor.isDeclared())
            .as("%s.spiVersion() declares no version; override it as: return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);",
                provider().getClass().getName())
            .isTrue();
        assertThat(SpiVersion.current().runs(builtFor))
            .as("the provider was built for SPI %s, which SPI %s does not run", builtFor, SpiVersion.current())
            .isTrue();
    }

    /**
     * Pages written come back byte for byte, into slices of a shared arena; the sources stay unchanged,
     * and the objects do not change when the sources do once the write completed (the engine reuses a
     * source page at once, so a tier that copies it later stores someone else's bytes).
     */
    @Test
    public void shouldRoundTripRandomBytes()
    {
        final PageArena arena = newArena(2 * OBJECTS, objectSize());
        final List<PageKey> keys = newKeys(OBJECTS);
        final List<Long> seeds = newSeeds(OBJECTS);
        final RecordingTierBatch written = write(tier, "write", keys, seeds, arena);
        assertAll(written, TierStatus.OK);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(written.slice(i), seeds.get(i), "write source of key " + i + " after the write (sources are read-only)");
            PageBytes.fill(written.slice(i), newSeed());
        }

        // Read in reverse order so a tier that mixes up indexes and keys is caught.
        final List<PageKey> reversed = new ArrayList<>(keys);
        Collections.reverse(reversed);
        final RecordingTierBatch readBack = read(tier, "read reversed", reversed, arena);
        assertAll(readBack, TierStatus.OK);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(readBack.slice(i), seeds.get(OBJECTS - 1 - i), "key " + reversed.get(i) + " read back"
                + " (its write source was overwritten once the write completed)");
        }
        arena.assertGuardsIntact();
    }

    /**
     * The round trip for every size of {@link #frameSizes()}, each on a tier of its own: every byte of
     * every object compared, a slice one block short or long read as CORRUPT, nothing written outside
     * the slices.
     */
    @TestFactory
    public Stream<DynamicTest> shouldRoundTripFramesOfEverySize()
    {
        return frameSizes().stream().map(size -> DynamicTest.dynamicTest("frames of " + size + " bytes", () -> roundTripFrames(size)));
    }

    private void roundTripFrames(final long size)
    {
        final int count = 3;
        final StorageTier sized = openTier(validConfig(scratchDir("frames-" + size)), new ContractTierContext(tierName(), size));
        final PageArena arena = newArena(2 * count + 2, size + 4096);
        final List<PageKey> keys = newKeys(count);
        final List<Long> seeds = newSeeds(count);
        final RecordingTierBatch written = write(sized, "write frames of " + size + " bytes", keys, seeds, arena);
        assertAll(written, TierStatus.OK);
        for (int i = 0; i < count; i++)
        {
            PageBytes.assertContent(written.slice(i), seeds.get(i), "write source of key " + i + " after the write (sources are read-only)");
            PageBytes.fill(written.slice(i), newSeed());
        }
        final List<PageKey> reversed = new ArrayList<>(keys);
        Collections.reverse(reversed);
        final RecordingTierBatch readBack = read(sized, "read frames of " + size + " bytes", reversed, arena);
        assertAll(readBack, TierStatus.OK);
        for (int i = 0; i < count; i++)
        {
            PageBytes.assertContent(readBack.slice(i), seeds.get(count - 1 - i), "frame of " + size + " bytes of key " + reversed.get(i));
        }
        final List<MemorySegment> wrongSlices = size > 4096 ? List.of(arena.slice(size + 4096), arena.slice(size - 4096)) : List.of(arena.slice(size + 4096));
        final RecordingTierBatch wrongSize = batch("read frames of " + size + " bytes into slices a block long and short",
            keys.subList(0, wrongSlices.size()), wrongSlices);
        assertAll(await(submit(sized, TierOperation.READ, wrongSize)), TierStatus.CORRUPT);
        arena.assertGuardsIntact();
        assertAll(remove(sized, "remove frames of " + size + " bytes", keys), TierStatus.OK);
    }

    /**
     * The engine's own objects come back byte for byte, zeros included: a page frame whose last 4 KiB block holds a
     * trailer's {@value TrailerBlock#TRAILER_BYTES} bytes and zeros, which a tier may store compactly
     * ({@link TrailerBlock}), read into slices full of noise; beside them objects of the same shape but for one
     * byte, which must be stored whole (a byte past the trailer, the block's last byte, the payload's last byte
     * zeroed in a block of zeros). A tier that keeps the trailer alone and forgets to give the zeros back fails here.
     */
    @Test
    public void shouldRoundTripEngineFramesTheirTrailerBlocksZerosIncluded()
    {
        final long size = objectSizeWithATrailerBlock();
        final int count = 4;
        final PageArena arena = newArena(2 * count, size);
        final List<PageKey> keys = newKeys(count);
        final List<MemorySegment> sources = arena.slices(count, size);
        final byte[][] expected = new byte[count][];
        final long blockStart = size - TrailerBlock.BYTES;
        for (int i = 0; i < count; i++)
        {
            final MemorySegment source = sources.get(i);
            PageBytes.fill(source, newSeed());
            source.asSlice(blockStart + TrailerBlock.TRAILER_BYTES).fill((byte)0);
            switch (i)
            {
                case 1 -> source.set(ValueLayout.JAVA_BYTE, blockStart + TrailerBlock.TRAILER_BYTES, (byte)1); // one byte past the trailer
                case 2 -> source.set(ValueLayout.JAVA_BYTE, size - 1, (byte)0x80);                              // the block's last byte
                case 3 -> source.asSlice(blockStart - TrailerBlock.BYTES, TrailerBlock.BYTES).fill((byte)0);    // a payload block of zeros
                default -> { }                                                                                    // an engine frame
            }
            expected[i] = source.toArray(ValueLayout.JAVA_BYTE);
        }
        assertAll(await(submit(tier, TierOperation.WRITE, batch("write engine-shaped frames", keys, sources))), TierStatus.OK);
        for (int i = 0; i < count; i++)
        {
            PageBytes.fill(sources.get(i), newSeed()); // the engine reuses a source page once its write completed
        }
        final RecordingTierBatch readBack = read(tier, "read engine-shaped frames into noise", keys, arena);
        assertAll(readBack, TierStatus.OK);
        final String[] shapes = {"an engine frame (trailer, then zeros)", "a byte past the trailer", "the last byte of the trailer block",
            "an engine frame with a payload block of zeros"};
        for (int i = 0; i < count; i++)
        {
            final long differs = MemorySegment.mismatch(readBack.slice(i), 0, size, MemorySegment.ofArray(expected[i]), 0, size);
            assertThat(differs).as("%s read back: first byte that differs (-1: none)", shapes[i]).isEqualTo(-1L);
        }
        arena.assertGuardsIntact();
    }

    /**
     * SPI 1.3: a write whose batch says that each segment's trailer block past its trailer is padding
     * ({@link io.kvtier.spi.TierBatch#trailerBlockIsPadding}), as the engine's do, reads back its payload and its
     * trailer exactly, and its padding either as written or as zeros: a tier may keep the compact form without
     * reading the padding, which here holds noise in one frame (a client scribbled on it). The trailer is not
     * padding, nor is any byte before it.
     */
    @Test
    public void shouldKeepPayloadAndTrailerExactlyWhereTheEngineDeclaresTheRestOfTheBlockPadding()
    {
        final long size = objectSizeWithATrailerBlock();
        final int count = 3;
        final PageArena arena = newArena(2 * count, size);
        final List<PageKey> keys = newKeys(count);
        final List<MemorySegment> sources = arena.slices(count, size);
        final byte[][] expected = new byte[count][];
        final long paddingStart = size - TrailerBlock.BYTES + TrailerBlock.TRAILER_BYTES;
        for (int i = 0; i < count; i++)
        {
            final MemorySegment source = sources.get(i);
            PageBytes.fill(source, newSeed());
            if (i != 1)
            {
                source.asSlice(paddingStart).fill((byte)0);
            }
            expected[i] = source.toArray(ValueLayout.JAVA_BYTE);
        }
        assertAll(await(submit(tier, TierOperation.WRITE, batch("write engine frames, padding declared", keys, sources).withTrailerBlockPadding())),
            TierStatus.OK);
        for (int i = 0; i < count; i++)
        {
            PageBytes.fill(sources.get(i), newSeed());
        }
        final RecordingTierBatch readBack = read(tier, "read frames written with declared padding into noise", keys, arena);
        assertAll(readBack, TierStatus.OK);
        final String[] shapes = {"an engine frame", "an engine frame whose padding holds noise", "another engine frame"};
        for (int i = 0; i < count; i++)
        {
            final MemorySegment got = readBack.slice(i);
            final MemorySegment want = MemorySegment.ofArray(expected[i]);
            assertThat(MemorySegment.mismatch(got, 0, paddingStart, want, 0, paddingStart))
                .as("%s read back: first byte of its payload or trailer that differs (-1: none)", shapes[i]).isEqualTo(-1L);
            final MemorySegment padding = got.asSlice(paddingStart);
            final boolean asWritten = padding.mismatch(want.asSlice(paddingStart)) == -1;
            final boolean zeros = padding.mismatch(MemorySegment.ofArray(new byte[(int)padding.byteSize()])) == -1;
            assertThat(asWritten || zeros).as("%s read back: its padding is as written or zeros", shapes[i]).isTrue();
        }
        arena.assertGuardsIntact();
    }

    /** @return the object size, when objects have a payload before a trailer block (two blocks and more); else the test is skipped */
    private long objectSizeWithATrailerBlock()
    {
        final long size = objectSize();
        Assumptions.assumeTrue(size >= 2L * TrailerBlock.BYTES, "objects of " + size + " bytes have no payload before a trailer block");
        return size;
    }

    /**
     * A tier offered transfer memory, as the engine offers its page frames, moves bytes through slices
     * of it (a tier may register it with its I/O layer at start), and still takes slices outside it.
     */
    @Test
    public void shouldMoveBytesThroughSlicesOfTheTransferMemoryItIsOffered()
    {
        final PageArena offered = newArena(2 * OBJECTS, objectSize());
        final StorageTier registered = openTier(validConfig(scratchDir("transfer-memory")),
            new ContractTierContext(tierName(), objectSize(), offered.region()));
        final List<PageKey> keys = newKeys(OBJECTS);
        final List<Long> seeds = newSeeds(OBJECTS);
        assertAll(write(registered, "write from offered memory", keys, seeds, offered), TierStatus.OK);
        final RecordingTierBatch inside = read(registered, "read into offered memory", keys, offered);
        assertAll(inside, TierStatus.OK);
        final PageArena outside = newArena(OBJECTS, objectSize());
        final RecordingTierBatch elsewhere = read(registered, "read into other memory", keys, outside);
        assertAll(elsewhere, TierStatus.OK);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(inside.slice(i), seeds.get(i), "key " + i + " read into offered memory");
            PageBytes.assertContent(elsewhere.slice(i), seeds.get(i), "key " + i + " read into other memory");
        }
        offered.assertGuardsIntact();
        outside.assertGuardsIntact();
    }

    /** A key never written is NOT_FOUND for read, exists and remove, and a failed read writes nothing outside its slice. */
    @Test
    public void shouldReportNotFoundForAMissingKey()
    {
        final PageArena arena = newArena(1, objectSize());
        final List<PageKey> missing = newKeys(1);
        assertStatuses(read(tier, "read missing", missing, arena), TierStatus.NOT_FOUND);
        assertStatuses(exists(tier, "exists missing", missing), TierStatus.NOT_FOUND);
        assertStatuses(remove(tier, "remove missing", missing), TierStatus.NOT_FOUND);
        arena.assertGuardsIntact();
    }

    /** exists is OK for exactly the keys written, interleaved with keys that were not. */
    @Test
    public void shouldReportExactlyTheWrittenKeysAsExisting()
    {
        final PageArena arena = newArena(OBJECTS, objectSize());
        final List<PageKey> keys = newKeys(2 * OBJECTS);
        final List<PageKey> written = new ArrayList<>();
        final TierStatus[] expected = new TierStatus[keys.size()];
        for (int i = 0; i < keys.size(); i++)
        {
            if (i % 2 == 0)
            {
                written.add(keys.get(i));
            }
            expected[i] = i % 2 == 0 ? TierStatus.OK : TierStatus.NOT_FOUND;
        }
        assertAll(write(tier, "write even keys", written, newSeeds(written.size()), arena), TierStatus.OK);
        assertStatuses(exists(tier, "exists all keys", keys), expected);
    }

    /**
     * One key's failure never fails its batch: present, missing and wrong-size reads in one batch
     * complete OK, NOT_FOUND and CORRUPT, and the OK keys hold their bytes.
     */
    @Test
    public void shouldCompleteEachKeyOnItsOwnInAMixedBatch()
    {
        final long size = objectSize();
        final PageArena arena = newArena(16, size + 4096);
        final List<PageKey> present = newKeys(4);
        final List<Long> seeds = newSeeds(4);
        assertAll(write(tier, "write present keys", present, seeds, arena), TierStatus.OK);
        final List<PageKey> missing = newKeys(2);

        final List<PageKey> keys = List.of(present.get(0), missing.get(0), present.get(1), present.get(2), missing.get(1), present.get(3));
        final List<MemorySegment> segments = List.of(
            arena.slice(size),
            arena.slice(size),
            arena.slice(size - 4096),
            arena.slice(size),
            arena.slice(size),
            arena.slice(size + 4096));
        for (final MemorySegment segment : segments)
        {
            PageBytes.fill(segment, newSeed());
        }
        final RecordingTierBatch mixed = batch("mixed read", keys, segments);
        submit(tier, TierOperation.READ, mixed);
        await(mixed);
        assertStatuses(mixed, TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.CORRUPT, TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.CORRUPT);
        PageBytes.assertContent(mixed.slice(0), seeds.get(0), "present key 0 in a mixed batch");
        PageBytes.assertContent(mixed.slice(3), seeds.get(2), "present key 3 in a mixed batch");
        arena.assertGuardsIntact();
    }

    /** Reads write only inside their slice, whatever the outcome: the guard bytes around every slice stay untouched. */
    @Test
    public void shouldKeepReadsInsideTheirSlices()
    {
        final long size = objectSize();
        final PageArena arena = newArena(3 * OBJECTS + 2, size + 4096);
        final List<PageKey> keys = newKeys(OBJECTS);
        assertAll(write(tier, "write", keys, newSeeds(OBJECTS), arena), TierStatus.OK);
        assertAll(read(tier, "read present", keys, arena), TierStatus.OK);
        arena.assertGuardsIntact();
        assertAll(read(tier, "read missing", newKeys(OBJECTS), arena), TierStatus.NOT_FOUND);
        arena.assertGuardsIntact();
        final RecordingTierBatch wrongSize = batch("read wrong sizes", keys.subList(0, 2), List.of(arena.slice(size - 4096), arena.slice(size + 4096)));
        submit(tier, TierOperation.READ, wrongSize);
        assertAll(await(wrongSize), TierStatus.CORRUPT);
        arena.assertGuardsIntact();
    }

    // ------------------------------------------------------------------------------------------------
    // Overwrite and remove
    // ------------------------------------------------------------------------------------------------

    /** Writing a key again replaces its object: reads see the new bytes. */
    @Test
    public void shouldReplaceAnObjectWhenOverwritten()
    {
        final PageArena arena = newArena(6, objectSize());
        final List<PageKey> key = newKeys(1);
        final long first = newSeed();
        final long second = newSeed();
        assertAll(write(tier, "write first", key, List.of(first), arena), TierStatus.OK);
        PageBytes.assertContent(read(tier, "read first", key, arena).slice(0), first, "object before overwrite");
        assertAll(write(tier, "overwrite", key, List.of(second), arena), TierStatus.OK);
        final RecordingTierBatch readBack = read(tier, "read second", key, arena);
        assertAll(readBack, TierStatus.OK);
        PageBytes.assertContent(readBack.slice(0), second, "object after overwrite");
        assertAll(exists(tier, "exists after overwrite", key), TierStatus.OK);
        arena.assertGuardsIntact();
    }

    /**
     * Overwrites are atomic per key: while one thread rewrites a key with two alternating contents,
     * every read another thread makes sees one of them whole (or NOT_FOUND), never a mix or CORRUPT.
     */
    @Test
    public void shouldNeverServeAPartialOverwrite() throws Exception
    {
        final int rewrites = 40;
        final PageArena arena = newArena(2 + 1 + 1, objectSize());
        final List<PageKey> key = newKeys(1);
        final long[] contents = {newSeed(), newSeed()};
        final List<MemorySegment> sources = arena.slices(2, objectSize());
        PageBytes.fill(sources.get(0), contents[0]);
        PageBytes.fill(sources.get(1), contents[1]);
        final MemorySegment destination = arena.slice(objectSize());
        final RecordingTierBatch initial = batch("initial write", key, List.of(sources.get(0)));
        submit(tier, TierOperation.WRITE, initial);
        assertAll(await(initial), TierStatus.OK);

        final AtomicBoolean writing = new AtomicBoolean(true);
        final List<String> torn = Collections.synchronizedList(new ArrayList<>());
        final ExecutorService reader = Executors.newSingleThreadExecutor();
        try
        {
            final Future<Integer> reads = reader.submit(() ->
            {
                int okReads = 0;
                int round = 0;
                while (writing.get() || round < 2)
                {
                    final RecordingTierBatch batch = batch("concurrent read " + round++, key, List.of(destination));
                    submit(tier, TierOperation.READ, batch);
                    await(batch);
                    final TierStatus status = batch.status(0);
                    if (status == TierStatus.OK)
                    {
                        okReads++;
                        if (PageBytes.mismatch(destination, contents[0]) >= 0 && PageBytes.mismatch(destination, contents[1]) >= 0)
                        {
                            torn.add("read " + round + " returned OK with bytes that are neither the old nor the new object");
                        }
                    }
                    else if (status != TierStatus.NOT_FOUND)
                    {
                        torn.add("read " + round + " during an overwrite completed " + status);
                    }
                }
                return okReads;
            });
            for (int i = 1; i <= rewrites; i++)
            {
                final RecordingTierBatch rewrite = batch("overwrite " + i, key, List.of(sources.get(i % 2)));
                submit(tier, TierOperation.WRITE, rewrite);
                assertAll(await(rewrite), TierStatus.OK);
            }
            writing.set(false);
            final int okReads = reads.get(completionDeadline().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(torn).as("reads racing overwrites").isEmpty();
            assertThat(okReads).as("OK reads while the key was being overwritten").isPositive();
        }
        finally
        {
            writing.set(false);
            reader.shutdownNow();
        }
        final RecordingTierBatch last = read(tier, "read after overwrites", key, arena);
        assertAll(last, TierStatus.OK);
        PageBytes.assertContent(last.slice(0), contents[rewrites % 2], "object after the last overwrite");
        arena.assertGuardsIntact();
    }

    /** remove is OK for a stored key and NOT_FOUND for a missing one; removed keys are gone for read and exists. */
    @Test
    public void shouldRemoveObjects()
    {
        final PageArena arena = newArena(5, objectSize());
        final List<PageKey> keys = newKeys(3);
        final List<Long> seeds = newSeeds(3);
        assertAll(write(tier, "write", keys, seeds, arena), TierStatus.OK);
        final PageKey missing = newKeys(1).getFirst();
        assertStatuses(remove(tier, "remove", List.of(keys.get(0), missing, keys.get(1))), TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.OK);
        assertStatuses(exists(tier, "exists after remove", keys), TierStatus.NOT_FOUND, TierStatus.NOT_FOUND, TierStatus.OK);
        assertStatuses(remove(tier, "remove again", keys.subList(0, 1)), TierStatus.NOT_FOUND);
        final RecordingTierBatch readBack = read(tier, "read after remove", List.of(keys.get(0), keys.get(2)), arena);
        assertStatuses(readBack, TierStatus.NOT_FOUND, TierStatus.OK);
        PageBytes.assertContent(readBack.slice(1), seeds.get(2), "the key that was not removed");
    }

    // ------------------------------------------------------------------------------------------------
    // Batches: concurrency, size, exactly-once
    // ------------------------------------------------------------------------------------------------

    /**
     * Eight threads submit batches of every operation to one tier at once, in rounds that start in all of
     * them together. In each round a thread writes 64 keys of its own in batches of 16, probing every key
     * of the round written so far and reading the batch back byte for byte after each write, so that one
     * thread's writes meet the others' reads; writes the 16 keys every thread overwrites, and reads them
     * back, each one whole version that some thread wrote; removes half of its keys and probes them all.
     * At the end every object written holds its own bytes and every one removed is gone.
     *
     * <p>Rounds go on until {@link #concurrencyDuration()} has passed, one at least: a data race shows
     * only when two threads happen to be inside the same unsynchronised code at once, so the kit keeps a
     * fast tier busy long enough for that to happen many times, where a fixed number of rounds would take
     * a slow tier long and a fast one no time at all. The objects are small and every key has the same
     * hash code, so the tier's index takes the load: a tier on an unsynchronised hash map has all threads
     * change one bin (a tree, past 8 entries) at once, and loses or mixes up keys.
     */
    @Test
    public void shouldServeConcurrentBatchesFromManyThreads() throws Exception
    {
        final ConcurrentRun run = new ConcurrentRun(8, 4, 16);
        // Daemon threads: one left in a call that never returns does not keep the JVM from exiting.
        final ExecutorService pool = Executors.newFixedThreadPool(run.threads, task ->
        {
            final Thread thread = new Thread(task, "kvtier-tck-concurrent");
            thread.setDaemon(true);
            return thread;
        });
        try
        {
            final List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < run.threads; t++)
            {
                final int thread = t;
                futures.add(pool.submit(() ->
                {
                    try
                    {
                        run.rounds(thread);
                    }
                    catch (final Exception | Error failure)
                    {
                        // The first failure is the one to report; the others wait at the barrier, which this breaks.
                        run.firstFailure.compareAndSet(null, failure);
                        run.phase.reset();
                        throw failure;
                    }
                    return null;
                }));
            }
            joinAll(futures, concurrencyDuration().plus(completionDeadline().multipliedBy(2)), run.firstFailure);
        }
        finally
        {
            pool.shutdownNow();
        }
        run.checkEveryObject();
    }

    /** The state of {@link #shouldServeConcurrentBatchesFromManyThreads()}, shared by its threads. */
    private final class ConcurrentRun
    {
        private static final int COMMON = 16;
        private static final int MIN_ROUNDS = 1;
        private static final int MAX_ROUNDS = 48;

        private final int threads;
        private final int batches;
        private final int perBatch;
        private final int perRound;
        private final long size = largeBatchObjectSize();
        private final StorageTier shared;
        private final List<PageKey> keys;
        private final List<Long> seeds;
        private final long[][] commonSeeds;
        private final List<PageArena> arenas = new ArrayList<>();
        private final Set<PageKey> removed = ConcurrentHashMap.newKeySet();
        private final CyclicBarrier phase;
        private final long end;
        private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        private volatile int rounds;
        private volatile boolean done;

        ConcurrentRun(final int threads, final int batches, final int perBatch)
        {
            this.threads = threads;
            this.batches = batches;
            this.perBatch = perBatch;
            this.perRound = batches * perBatch;
            shared = openTier(validConfig(scratchDir("concurrent")), new ContractTierContext(tierName(), size));
            synchronized (random)
            {
                keys = CollidingKeys.sharedHashCodeKeys(COMMON + MAX_ROUNDS * threads * perRound, random);
            }
            seeds = newSeeds(keys.size());
            commonSeeds = new long[threads][COMMON];
            for (int t = 0; t < threads; t++)
            {
                for (int k = 0; k < COMMON; k++)
                {
                    commonSeeds[t][k] = newSeed();
                }
                arenas.add(newArena(2 * perBatch + 2 * COMMON, size));
            }
            end = System.nanoTime() + concurrencyDuration().toNanos();
            // Run by the last thread to arrive, before any is let go: every thread sees the same decision.
            phase = new CyclicBarrier(threads, () ->
            {
                done = rounds == MAX_ROUNDS || rounds >= MIN_ROUNDS && System.nanoTime() - end >= 0;
                if (!done)
                {
                    rounds++;
                }
            });
        }

        private int first(final int thread, final int round)
        {
            return COMMON + (round * threads + thread) * perRound;
        }

        private List<PageKey> common()
        {
            return keys.subList(0, COMMON);
        }

        /**
         * One thread's rounds. Each starts in every thread at once and writes the round's keys batch after
         * batch, probing every key written so far and reading the batch back after each write, so one
         * thread's writes meet the others' reads; then writes the common keys and reads them back; then
         * removes half of the round's keys and probes them all.
         */
        void rounds(final int thread) throws Exception
        {
            final PageArena arena = arenas.get(thread);
            final List<MemorySegment> sources = arena.slices(perBatch, size);
            final List<MemorySegment> destinations = arena.slices(perBatch, size);
            final List<MemorySegment> commonSources = arena.slices(COMMON, size);
            final List<MemorySegment> commonDestinations = arena.slices(COMMON, size);
            for (int k = 0; k < COMMON; k++)
            {
                PageBytes.fill(commonSources.get(k), commonSeeds[thread][k]);
            }
            final List<PageKey> strangers = newKeys(2);
            while (true)
            {
                phase.await(completionDeadline().toMillis(), TimeUnit.MILLISECONDS);
                if (done)
                {
                    return;
                }
                final int round = rounds - 1;
                final String who = "thread " + thread + " round " + round;
                final int first = first(thread, round);
                final List<PageKey> mine = keys.subList(first, first + perRound);
                for (int b = 0; b < batches; b++)
                {
                    final List<PageKey> batchKeys = mine.subList(b * perBatch, (b + 1) * perBatch);
                    for (int i = 0; i < perBatch; i++)
                    {
                        PageBytes.fill(sources.get(i), seeds.get(first + b * perBatch + i));
                    }
                    assertAll(await(direct(TierOperation.WRITE, batch(who + " write batch " + b, batchKeys, sources))), TierStatus.OK);
                    final List<PageKey> probe = new ArrayList<>(strangers);
                    probe.addAll(mine.subList(0, (b + 1) * perBatch));
                    final RecordingTierBatch present = await(direct(TierOperation.EXISTS, keyBatch(who + " exists after batch " + b, probe)));
                    for (int i = 0; i < probe.size(); i++)
                    {
                        assertThat(present.status(i)).as("%s exists key %s after writing batch %d while the other threads wrote", who, probe.get(i), b)
                            .isEqualTo(i < strangers.size() ? TierStatus.NOT_FOUND : TierStatus.OK);
                    }
                    final RecordingTierBatch readBack = await(direct(TierOperation.READ, batch(who + " read batch " + b, batchKeys, destinations)));
                    assertAll(readBack, TierStatus.OK);
                    for (int i = 0; i < perBatch; i++)
                    {
                        PageBytes.assertContent(readBack.slice(i), seeds.get(first + b * perBatch + i),
                            who + "'s key " + batchKeys.get(i) + ", read back while the other threads wrote");
                    }
                }
                assertAll(await(direct(TierOperation.WRITE, batch(who + " write common keys", common(), commonSources))), TierStatus.OK);
                final RecordingTierBatch commonRead = await(direct(TierOperation.READ, batch(who + " read common keys", common(), commonDestinations)));
                assertAll(commonRead, TierStatus.OK);
                for (int k = 0; k < COMMON; k++)
                {
                    assertOneOf(commonRead.slice(k), commonSeeds, k, who + " common key " + common().get(k));
                }
                final Set<PageKey> gone = new HashSet<>();
                for (int b = 0; b < batches; b++)
                {
                    final List<PageKey> half = mine.subList(b * perBatch, b * perBatch + perBatch / 2);
                    assertAll(await(direct(TierOperation.REMOVE, keyBatch(who + " remove half of batch " + b, half))), TierStatus.OK);
                    gone.addAll(half);
                }
                removed.addAll(gone);
                final RecordingTierBatch left = await(direct(TierOperation.EXISTS, keyBatch(who + " exists after removing half", mine)));
                for (int i = 0; i < mine.size(); i++)
                {
                    assertThat(left.status(i)).as("%s exists key %s after removing half", who, mine.get(i))
                        .isEqualTo(gone.contains(mine.get(i)) ? TierStatus.NOT_FOUND : TierStatus.OK);
                }
            }
        }

        /**
         * Hands a batch to the shared tier from this thread itself: a call on another thread (as
         * {@link #submit} makes to bound it) would pause every thread between batches at the same
         * points and keep their calls from interleaving. A call that never returns still fails the
         * test, at the deadline of the threads' join.
         */
        private RecordingTierBatch direct(final TierOperation operation, final RecordingTierBatch batch)
        {
            operation.submit(shared, batch);
            return batch;
        }

        /** Every object written, once the threads are done: removed ones gone, the others whole. */
        void checkEveryObject()
        {
            final PageArena check = newArena(perRound + COMMON, size);
            final List<MemorySegment> destinations = check.slices(perRound, size);
            for (int round = 0; round < rounds; round++)
            {
                for (int t = 0; t < threads; t++)
                {
                    final String who = "thread " + t + " round " + round;
                    final int first = first(t, round);
                    final List<PageKey> mine = keys.subList(first, first + perRound);
                    for (final MemorySegment destination : destinations)
                    {
                        PageBytes.fill(destination, newSeed());
                    }
                    final RecordingTierBatch readBack = await(submit(shared, TierOperation.READ, batch(who + " keys after the run", mine, destinations)));
                    for (int i = 0; i < perRound; i++)
                    {
                        if (removed.contains(mine.get(i)))
                        {
                            assertThat(readBack.status(i)).as("read of %s's key %s after the run, removed", who, mine.get(i)).isEqualTo(TierStatus.NOT_FOUND);
                        }
                        else
                        {
                            assertThat(readBack.status(i)).as("read of %s's key %s after the run", who, mine.get(i)).isEqualTo(TierStatus.OK);
                            PageBytes.assertContent(readBack.slice(i), seeds.get(first + i), who + "'s key " + mine.get(i) + " after the run");
                        }
                    }
                }
            }
            final RecordingTierBatch commonRead = read(shared, "common keys after the run", common(), check);
            assertAll(commonRead, TierStatus.OK);
            for (int k = 0; k < COMMON; k++)
            {
                assertOneOf(commonRead.slice(k), commonSeeds, k, "common key " + common().get(k) + " after the run");
            }
            for (final PageArena arena : arenas)
            {
                arena.assertGuardsIntact();
            }
            check.assertGuardsIntact();
        }
    }

    /** Checks that a segment holds exactly the bytes one of the threads wrote for common key {@code k}. */
    private static void assertOneOf(final MemorySegment segment, final long[][] seeds, final int k, final String what)
    {
        for (final long[] threadSeeds : seeds)
        {
            if (PageBytes.mismatch(segment, threadSeeds[k]) < 0)
            {
                return;
            }
        }
        fail("%s: OK but its %d bytes are none of the %d versions written (a mix of versions, or another key's bytes)",
            what, segment.byteSize(), seeds.length);
    }

    /**
     * Waits for every future; when a thread failed, rethrows the first failure any thread recorded (the
     * others then only broke off, at a barrier the failed thread broke).
     */
    private static void joinAll(final List<Future<?>> futures, final Duration deadline, final AtomicReference<Throwable> firstFailure)
        throws Exception
    {
        final long end = System.nanoTime() + deadline.toNanos();
        try
        {
            for (final Future<?> future : futures)
            {
                future.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }
        catch (final ExecutionException ex)
        {
            final Throwable first = firstFailure.get() != null ? firstFailure.get() : ex.getCause();
            if (first instanceof Error error)
            {
                throw error;
            }
            throw first instanceof Exception exception ? exception : ex;
        }
        catch (final TimeoutException ex)
        {
            throw new AssertionError("threads submitting batches did not finish within " + deadline, ex);
        }
    }

    /** A batch of {@link #largeBatchSize()} keys completes every key, for every operation. */
    @Test
    public void shouldCompleteALargeBatch()
    {
        final int count = largeBatchSize();
        final long size = largeBatchObjectSize();
        final StorageTier large = openTier(validConfig(scratchDir("large")), new ContractTierContext(tierName(), size));
        final PageArena arena = newArena(2 * count, size);
        final List<PageKey> keys = newKeys(count);
        final List<Long> seeds = newSeeds(count);
        assertAll(write(large, "large write", keys, seeds, arena), TierStatus.OK);
        assertAll(exists(large, "large exists", keys), TierStatus.OK);
        final RecordingTierBatch readBack = read(large, "large read", keys, arena);
        assertAll(readBack, TierStatus.OK);
        for (int i = 0; i < count; i++)
        {
            PageBytes.assertContent(readBack.slice(i), seeds.get(i), "key " + i + " of a large batch");
        }
        assertAll(remove(large, "large remove", keys), TierStatus.OK);
        assertAll(exists(large, "large exists after remove", keys), TierStatus.NOT_FOUND);
        arena.assertGuardsIntact();
    }

    /**
     * {@link #collidingKeyCount()} distinct keys that weak hashing cannot tell apart (one
     * {@link PageKey#hashCode()} for nearly all of them, shared halves, swapped halves, halves whose hex
     * or decimal digits concatenate alike, zeros and extremes: see {@link CollidingKeys}) are stored at
     * once in batches of 256; after a quarter of them are removed, each of those reads NOT_FOUND and
     * each of the others reads back its own bytes.
     */
    @Test
    public void shouldTellApartKeysWhoseWeakHashesCollide()
    {
        final int perBatch = 256;
        final long size = largeBatchObjectSize();
        final StorageTier colliding = openTier(validConfig(scratchDir("colliding")), new ContractTierContext(tierName(), size));
        final List<PageKey> keys;
        synchronized (random)
        {
            keys = CollidingKeys.generate(collidingKeyCount(), random);
        }
        final List<Long> seeds = newSeeds(keys.size());
        final PageArena arena = newArena(2 * perBatch, size);
        final List<MemorySegment> sources = arena.slices(perBatch, size);
        final List<MemorySegment> destinations = arena.slices(perBatch, size);
        final String what = " of " + keys.size() + " keys whose hashes collide";
        for (int from = 0; from < keys.size(); from += perBatch)
        {
            final int count = Math.min(perBatch, keys.size() - from);
            for (int i = 0; i < count; i++)
            {
                PageBytes.fill(sources.get(i), seeds.get(from + i));
            }
            final RecordingTierBatch written = batch("write keys " + from + "+" + what, keys.subList(from, from + count), sources.subList(0, count));
            assertAll(await(submit(colliding, TierOperation.WRITE, written)), TierStatus.OK);
        }
        final List<PageKey> removed = new ArrayList<>();
        for (int i = 0; i < keys.size(); i += 4)
        {
            removed.add(keys.get(i));
        }
        for (int from = 0; from < removed.size(); from += perBatch)
        {
            assertAll(remove(colliding, "remove keys " + from + "+ of a quarter" + what, removed.subList(from, Math.min(removed.size(), from + perBatch))),
                TierStatus.OK);
        }
        // Read back last batch first, so what was written last cannot simply be what is read.
        for (int from = (keys.size() - 1) / perBatch * perBatch; from >= 0; from -= perBatch)
        {
            final int count = Math.min(perBatch, keys.size() - from);
            for (int i = 0; i < count; i++)
            {
                PageBytes.fill(destinations.get(i), newSeed());
            }
            final RecordingTierBatch readBack = batch("read keys " + from + "+" + what + " after removing a quarter",
                keys.subList(from, from + count), destinations.subList(0, count));
            await(submit(colliding, TierOperation.READ, readBack));
            for (int i = 0; i < count; i++)
            {
                final PageKey key = keys.get(from + i);
                if ((from + i) % 4 == 0)
                {
                    assertThat(readBack.status(i)).as("read of key %s%s, removed", key, what).isEqualTo(TierStatus.NOT_FOUND);
                }
                else
                {
                    assertThat(readBack.status(i)).as("read of key %s%s, not removed", key, what).isEqualTo(TierStatus.OK);
                    PageBytes.assertContent(readBack.slice(i), seeds.get(from + i), "key " + key + what);
                }
            }
        }
        arena.assertGuardsIntact();
    }

    /**
     * Writing, reading and removing objects does not hold the process's file descriptors: after a pass
     * that warms the tier up (its caches and pools fill), a second pass as large leaves the process with
     * about as many open descriptors as before it, so a tier that leaks one per write, or keeps one per
     * object, is caught long before it runs out. Linux only (it counts {@code /proc/self/fd}).
     */
    @Test
    public void shouldNotHoldAFileDescriptorPerObject()
    {
        final Path descriptors = Path.of("/proc/self/fd");
        Assumptions.assumeTrue(Files.isDirectory(descriptors), "skipped: no " + descriptors + " to count this process's file descriptors");
        final int perPass = 64;
        final int perBatch = 16;
        final PageArena arena = newArena(2 * perBatch, objectSize());
        final List<MemorySegment> sources = arena.slices(perBatch, objectSize());
        final List<MemorySegment> destinations = arena.slices(perBatch, objectSize());
        descriptorPass("warm-up", perPass, perBatch, sources, destinations);
        final long before = openDescriptors(descriptors);
        descriptorPass("measured", perPass, perBatch, sources, destinations);
        final long after = openDescriptors(descriptors);
        assertThat(after - before)
            .as("file descriptors this process gained (%d to %d) over a pass of %d writes, reads and exists and %d removes, after a"
                + " warm-up pass as large: the tier keeps one per operation or per object", before, after, perPass, perPass / 2)
            .isLessThan(perPass / 4);
        arena.assertGuardsIntact();
    }

    private void descriptorPass(final String pass, final int count, final int perBatch, final List<MemorySegment> sources,
                                final List<MemorySegment> destinations)
    {
        for (int from = 0; from < count; from += perBatch)
        {
            final String name = pass + " pass, keys " + from + "+";
            final List<PageKey> keys = newKeys(perBatch);
            final List<Long> seeds = newSeeds(perBatch);
            for (int i = 0; i < perBatch; i++)
            {
                PageBytes.fill(sources.get(i), seeds.get(i));
            }
            assertAll(await(submit(tier, TierOperation.WRITE, batch(name + " write", keys, sources))), TierStatus.OK);
            final RecordingTierBatch readBack = await(submit(tier, TierOperation.READ, batch(name + " read", keys, destinations)));
            assertAll(readBack, TierStatus.OK);
            for (int i = 0; i < perBatch; i++)
            {
                PageBytes.assertContent(readBack.slice(i), seeds.get(i), name + " key " + keys.get(i));
            }
            assertAll(exists(tier, name + " exists", keys), TierStatus.OK);
            assertAll(remove(tier, name + " remove half", keys.subList(0, perBatch / 2)), TierStatus.OK);
        }
    }

    private static long openDescriptors(final Path descriptors)
    {
        try (Stream<Path> open = Files.list(descriptors))
        {
            return open.count();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Operations on an empty batch return without throwing, complete nothing (there is no key 0), and
     * leave the tier working: a round trip right after them succeeds.
     */
    @Test
    public void shouldAcceptAnEmptyBatch()
    {
        final RecordingTierBatch empty = batch("empty", List.of(), List.of());
        assertThatCode(() ->
        {
            submit(tier, TierOperation.EXISTS, empty);
            submit(tier, TierOperation.READ, empty);
            submit(tier, TierOperation.WRITE, empty);
            submit(tier, TierOperation.REMOVE, empty);
        }).as("operations on an empty batch").doesNotThrowAnyException();
        final PageArena arena = newArena(2, objectSize());
        final List<PageKey> keys = newKeys(1);
        final List<Long> seeds = newSeeds(1);
        assertAll(write(tier, "write after empty batches", keys, seeds, arena), TierStatus.OK);
        final RecordingTierBatch back = read(tier, "read after empty batches", keys, arena);
        assertAll(back, TierStatus.OK);
        PageBytes.assertContent(back.slice(0), seeds.get(0), "the key written after the empty batches");
        empty.assertNoViolations();
        assertThat(empty.statuses()).as("statuses of the empty batch").isEmpty();
    }

    /**
     * Many batches of every operation submitted back to back, without waiting in between, complete
     * each key exactly once; the kit checks again after closing the tier, for late duplicates.
     */
    @Test
    public void shouldCompleteEveryKeyExactlyOnce()
    {
        final int perBatch = 4;
        final int rounds = 8;
        final PageArena arena = newArena(rounds * 2 * perBatch, objectSize());
        final List<RecordingTierBatch> submitted = new ArrayList<>();
        for (int round = 0; round < rounds; round++)
        {
            final List<PageKey> keys = newKeys(perBatch);
            final List<MemorySegment> sources = arena.slices(perBatch, objectSize());
            sources.forEach(source -> PageBytes.fill(source, newSeed()));
            final RecordingTierBatch written = batch("burst write " + round, keys, sources);
            final RecordingTierBatch read = batch("burst read " + round, keys, arena.slices(perBatch, objectSize()));
            final RecordingTierBatch present = keyBatch("burst exists " + round, keys);
            final RecordingTierBatch removed = keyBatch("burst remove " + round, keys);
            submit(tier, TierOperation.WRITE, written);
            submit(tier, TierOperation.READ, read);
            submit(tier, TierOperation.EXISTS, present);
            submit(tier, TierOperation.REMOVE, removed);
            submitted.addAll(List.of(written, read, present, removed));
        }
        for (final RecordingTierBatch batch : submitted)
        {
            await(batch);
            assertThat(batch.statuses()).as("statuses of '%s'", batch.label()).doesNotContainNull();
        }
        closeTier(tier);
        for (final RecordingTierBatch batch : submitted)
        {
            batch.assertNoViolations();
        }
        arena.assertGuardsIntact();
    }

    /**
     * A random sequence of operations over a small key space agrees with a map: reads return the
     * last write, exists and remove see what the map holds.
     */
    @Test
    public void shouldMatchAModelUnderRandomOperations()
    {
        final int steps = 150;
        final int maxBatch = 4;
        final List<PageKey> space = newKeys(10);
        final PageArena arena = newArena(2 * maxBatch, objectSize());
        final List<MemorySegment> sources = arena.slices(maxBatch, objectSize());
        final List<MemorySegment> destinations = arena.slices(maxBatch, objectSize());
        final Map<PageKey, Long> model = new HashMap<>();
        final long seed = newSeed();
        final SplittableRandom steer = new SplittableRandom(seed);
        for (int step = 0; step < steps; step++)
        {
            final int count = 1 + steer.nextInt(maxBatch);
            final Set<PageKey> chosen = new LinkedHashSet<>();
            while (chosen.size() < count)
            {
                chosen.add(space.get(steer.nextInt(space.size())));
            }
            final List<PageKey> keys = List.copyOf(chosen);
            final String name = "step " + step + " (model seed " + seed + ")";
            switch (steer.nextInt(4))
            {
                case 0 ->
                {
                    final List<Long> seeds = seeds(keys, steer);
                    for (int i = 0; i < count; i++)
                    {
                        PageBytes.fill(sources.get(i), seeds.get(i));
                    }
                    final RecordingTierBatch written = batch(name + " write", keys, sources.subList(0, count));
                    submit(tier, TierOperation.WRITE, written);
                    assertAll(await(written), TierStatus.OK);
                    for (int i = 0; i < count; i++)
                    {
                        model.put(keys.get(i), seeds.get(i));
                    }
                }
                case 1 ->
                {
                    final RecordingTierBatch readBack = batch(name + " read", keys, destinations.subList(0, count));
                    submit(tier, TierOperation.READ, readBack);
                    await(readBack);
                    for (int i = 0; i < count; i++)
                    {
                        final Long expected = model.get(keys.get(i));
                        assertThat(readBack.status(i)).as("%s key %s", name, keys.get(i)).isEqualTo(expected == null ? TierStatus.NOT_FOUND : TierStatus.OK);
                        if (expected != null)
                        {
                            PageBytes.assertContent(readBack.slice(i), expected, name + " key " + keys.get(i));
                        }
                    }
                }
                case 2 ->
                {
                    final RecordingTierBatch present = exists(tier, name + " exists", keys);
                    for (int i = 0; i < count; i++)
                    {
                        assertThat(present.status(i)).as("%s key %s", name, keys.get(i))
                            .isEqualTo(model.containsKey(keys.get(i)) ? TierStatus.OK : TierStatus.NOT_FOUND);
                    }
                }
                default ->
                {
                    final RecordingTierBatch removed = remove(tier, name + " remove", keys);
                    for (int i = 0; i < count; i++)
                    {
                        assertThat(removed.status(i)).as("%s key %s", name, keys.get(i))
                            .isEqualTo(model.remove(keys.get(i)) != null ? TierStatus.OK : TierStatus.NOT_FOUND);
                    }
                }
            }
        }
        arena.assertGuardsIntact();
    }

    // ------------------------------------------------------------------------------------------------
    // Close
    // ------------------------------------------------------------------------------------------------

    /**
     * close is idempotent, and afterwards every key of every operation completes CLOSED without its
     * segment being touched; with PERSISTENT, nothing submitted after close reached storage.
     */
    @Test
    public void shouldCompleteEveryKeyWithClosedAfterClose()
    {
        final PageArena arena = newArena(OBJECTS + 3 * OBJECTS, objectSize());
        final List<PageKey> stored = newKeys(OBJECTS);
        assertAll(write(tier, "write before close", stored, newSeeds(OBJECTS), arena), TierStatus.OK);
        closeTier(tier);
        closeTier(tier);

        final List<MemorySegment> destinations = arena.slices(OBJECTS, objectSize());
        final List<Long> poison = newSeeds(OBJECTS);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.fill(destinations.get(i), poison.get(i));
        }
        final RecordingTierBatch readAfter = batch("read after close", stored, destinations);
        submit(tier, TierOperation.READ, readAfter);
        assertAll(await(readAfter), TierStatus.CLOSED);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(destinations.get(i), poison.get(i), "read destination " + i + " after close (must stay untouched)");
        }

        final List<PageKey> fresh = newKeys(OBJECTS);
        final List<Long> freshSeeds = newSeeds(OBJECTS);
        final RecordingTierBatch writeAfter = write(tier, "write after close", fresh, freshSeeds, arena);
        assertAll(writeAfter, TierStatus.CLOSED);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(writeAfter.slice(i), freshSeeds.get(i), "write source " + i + " after close (must stay untouched)");
        }
        assertAll(exists(tier, "exists after close", stored), TierStatus.CLOSED);
        assertAll(remove(tier, "remove after close", stored), TierStatus.CLOSED);
        arena.assertGuardsIntact();

        if (capabilities(tier).contains(TierCapability.PERSISTENT))
        {
            final StorageTier reopened = openTier(validConfig(tierDir), new ContractTierContext(tierName(), objectSize()));
            assertAll(exists(reopened, "exists of keys written after close", fresh), TierStatus.NOT_FOUND);
            assertAll(exists(reopened, "exists of keys removed after close", stored), TierStatus.OK);
        }
    }

    /**
     * close finishes or fails in-flight keys before it returns: every key of every batch submitted
     * earlier is complete when close returns, writes OK or CLOSED, reads OK (with the right bytes),
     * NOT_FOUND or CLOSED; with PERSISTENT, every write that completed OK is readable afterwards.
     */
    @Test
    public void shouldFinishOrFailInFlightKeysOnClose()
    {
        final int perBatch = 8;
        final int batchCount = 4;
        final PageArena arena = newArena(2 * perBatch * batchCount + perBatch * batchCount, objectSize());
        final List<RecordingTierBatch> writes = new ArrayList<>();
        final List<RecordingTierBatch> reads = new ArrayList<>();
        final Map<PageKey, Long> contents = new LinkedHashMap<>();
        for (int b = 0; b < batchCount; b++)
        {
            final List<PageKey> keys = newKeys(perBatch);
            final List<MemorySegment> sources = arena.slices(perBatch, objectSize());
            for (int i = 0; i < perBatch; i++)
            {
                final long seed = newSeed();
                PageBytes.fill(sources.get(i), seed);
                contents.put(keys.get(i), seed);
            }
            final RecordingTierBatch written = batch("in-flight write " + b, keys, sources);
            final RecordingTierBatch readBack = batch("in-flight read " + b, keys, arena.slices(perBatch, objectSize()));
            submit(tier, TierOperation.WRITE, written);
            submit(tier, TierOperation.READ, readBack);
            writes.add(written);
            reads.add(readBack);
        }
        closeTier(tier);

        for (final RecordingTierBatch batch : writes)
        {
            assertThat(batch.isComplete()).as("'%s' complete when close() returned: %s", batch.label(), batch.statuses()).isTrue();
            assertThat(batch.statuses()).as("statuses of '%s'", batch.label()).allMatch(s -> s == TierStatus.OK || s == TierStatus.CLOSED);
        }
        for (final RecordingTierBatch batch : reads)
        {
            assertThat(batch.isComplete()).as("'%s' complete when close() returned: %s", batch.label(), batch.statuses()).isTrue();
            for (int i = 0; i < batch.keyCount(); i++)
            {
                final TierStatus status = batch.status(i);
                assertThat(status).as("'%s' key %d", batch.label(), i).isIn(TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.CLOSED);
                if (status == TierStatus.OK)
                {
                    PageBytes.assertContent(batch.slice(i), contents.get(batch.pageKey(i)), batch.label() + " key " + i);
                }
            }
        }
        arena.assertGuardsIntact();

        if (capabilities(tier).contains(TierCapability.PERSISTENT))
        {
            final StorageTier reopened = openTier(validConfig(tierDir), new ContractTierContext(tierName(), objectSize()));
            final PageArena readArena = newArena(perBatch * batchCount, objectSize());
            for (final RecordingTierBatch written : writes)
            {
                final List<PageKey> keys = new ArrayList<>();
                for (int i = 0; i < written.keyCount(); i++)
                {
                    keys.add(written.pageKey(i));
                }
                final RecordingTierBatch readBack = read(reopened, "reopened read of " + written.label(), keys, readArena);
                for (int i = 0; i < keys.size(); i++)
                {
                    if (written.status(i) == TierStatus.OK)
                    {
                        assertThat(readBack.status(i)).as("key %d of '%s', which completed OK before close", i, written.label()).isEqualTo(TierStatus.OK);
                    }
                    else
                    {
                        assertThat(readBack.status(i)).as("key %d of '%s', closed before it was written", i, written.label())
                            .isIn(TierStatus.OK, TierStatus.NOT_FOUND);
                    }
                    if (readBack.status(i) == TierStatus.OK)
                    {
                        PageBytes.assertContent(readBack.slice(i), contents.get(keys.get(i)), "reopened key " + i + " of " + written.label());
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Usage
    // ------------------------------------------------------------------------------------------------

    /** usage() counts written objects once (an overwrite adds nothing) and drops removed ones. */
    @Test
    public void shouldReflectWritesAndRemovalsInUsage()
    {
        final long size = objectSize();
        final PageArena arena = newArena(6, size);
        final TierUsage before = tier.usage();
        assertThat(before).as("usage()").isNotNull();
        assertThat(before.capacityBytes()).as("capacityBytes").isPositive();
        assertThat(before.usedBytes()).as("usedBytes").isNotNegative();
        assertThat(before.objects()).as("objects (-1 when unknown)").isGreaterThanOrEqualTo(-1);

        final List<PageKey> keys = newKeys(4);
        assertAll(write(tier, "write 4", keys, newSeeds(4), arena), TierStatus.OK);
        assertUsage(before, 4, "after writing 4 objects");
        assertAll(write(tier, "overwrite 1", keys.subList(0, 1), newSeeds(1), arena), TierStatus.OK);
        assertUsage(before, 4, "after overwriting 1 of them");
        assertStatuses(remove(tier, "remove 2 and a missing key", List.of(keys.get(0), keys.get(1), newKeys(1).getFirst())),
            TierStatus.OK, TierStatus.OK, TierStatus.NOT_FOUND);
        assertUsage(before, 2, "after removing 2 of them");
        assertAll(remove(tier, "remove the rest", keys.subList(2, 4)), TierStatus.OK);
        assertUsage(before, 0, "after removing all of them");
    }

    private void assertUsage(final TierUsage before, final int added, final String when)
    {
        final TierUsage now = tier.usage();
        assertThat(now.usedBytes()).as("usedBytes %s (started at %d)", when, before.usedBytes())
            .isEqualTo(before.usedBytes() + added * objectSize());
        if (before.objects() >= 0 && now.objects() >= 0)
        {
            assertThat(now.objects()).as("objects %s (started at %d)", when, before.objects()).isEqualTo(before.objects() + added);
        }
        assertThat(now.capacityBytes()).as("capacityBytes %s", when).isEqualTo(before.capacityBytes());
    }

    // ------------------------------------------------------------------------------------------------
    // Configuration
    // ------------------------------------------------------------------------------------------------

    /** Each of {@link #invalidConfigs(Path)} is refused with a TierConfigException naming its key. */
    @TestFactory
    public Stream<DynamicTest> shouldRejectEachInvalidConfig()
    {
        final Path dir = scratchDir("invalid");
        return invalidConfigs(dir).stream()
            .map(invalid -> DynamicTest.dynamicTest(invalid.description(), () -> assertRejected(invalid.config(), invalid.expectedKey())));
    }

    /** A setting the tier does not know is refused, naming it, so a typo fails the start. */
    @Test
    public void shouldRejectAnUnknownSetting()
    {
        final Map<String, String> config = new HashMap<>(validConfig(scratchDir("unknown")));
        config.put(unknownSettingKey(), "1");
        assertRejected(config, qualifiedKey(unknownSettingKey()));
    }

    private void assertRejected(final Map<String, String> config, final String expectedKey)
    {
        final ContractTierContext rejectedContext = new ContractTierContext(tierName(), objectSize());
        final StorageTierProvider provider = provider();
        final StorageTier accepted;
        try
        {
            accepted = calls.call("provider().create(" + config + ")", completionDeadline(),
                () -> provider.create(new TierConfig(tierName(), config), rejectedContext));
        }
        catch (final RuntimeException ex)
        {
            assertThat(ex)
                .as("create(%s) must throw a TierConfigException naming %s", config, expectedKey)
                .isInstanceOf(TierConfigException.class)
                .hasMessageContaining(expectedKey)
                .satisfies(thrown -> assertThat(((TierConfigException)thrown).key()).as("TierConfigException.key()").isEqualTo(expectedKey));
            return;
        }
        closeTier(accepted);
        fail("create(%s) accepted the settings; it must throw a TierConfigException naming %s", config, expectedKey);
    }

    // ------------------------------------------------------------------------------------------------
    // Capabilities
    // ------------------------------------------------------------------------------------------------

    /** PERSISTENT: objects written by one instance are readable, whole, by a new instance on the same config. */
    @TestFactory
    public Stream<DynamicTest> shouldKeepObjectsAcrossInstances()
    {
        return ifDeclared(TierCapability.PERSISTENT, "objects outlive the instance that wrote them", this::keepObjectsAcrossInstances);
    }

    private void keepObjectsAcrossInstances()
    {
        final PageArena arena = newArena(2 * OBJECTS, objectSize());
        final List<PageKey> keys = newKeys(OBJECTS);
        final List<Long> seeds = newSeeds(OBJECTS);
        assertAll(write(tier, "write before restart", keys, seeds, arena), TierStatus.OK);
        assertAll(remove(tier, "remove before restart", keys.subList(0, 1)), TierStatus.OK);
        closeTier(tier);

        final StorageTier restarted = openTier(validConfig(tierDir), new ContractTierContext(tierName(), objectSize()));
        final RecordingTierBatch present = exists(restarted, "exists after restart", keys);
        assertThat(present.status(0)).as("key removed before the restart").isEqualTo(TierStatus.NOT_FOUND);
        final RecordingTierBatch readBack = read(restarted, "read after restart", keys.subList(1, OBJECTS), arena);
        assertAll(readBack, TierStatus.OK);
        for (int i = 1; i < OBJECTS; i++)
        {
            assertThat(present.status(i)).as("exists key %d after restart", i).isEqualTo(TierStatus.OK);
            PageBytes.assertContent(readBack.slice(i - 1), seeds.get(i), "key " + i + " after restart");
        }
    }

    /** SHARED: two instances on the same config at once see each other's writes and removes. */
    @TestFactory
    public Stream<DynamicTest> shouldShareObjectsBetweenInstances()
    {
        return ifDeclared(TierCapability.SHARED, "two instances see each other's writes and removes", this::shareObjectsBetweenInstances);
    }

    private void shareObjectsBetweenInstances()
    {
        final StorageTier other = openTier(validConfig(tierDir), new ContractTierContext(tierName(), objectSize()));
        final PageArena arena = newArena(4 * OBJECTS, objectSize());
        final List<PageKey> keys = newKeys(OBJECTS);
        final List<Long> seeds = newSeeds(OBJECTS);
        assertAll(write(tier, "write on the first instance", keys, seeds, arena), TierStatus.OK);
        assertAll(exists(other, "exists on the second", keys), TierStatus.OK);
        final RecordingTierBatch readBack = read(other, "read on the second", keys, arena);
        assertAll(readBack, TierStatus.OK);
        for (int i = 0; i < OBJECTS; i++)
        {
            PageBytes.assertContent(readBack.slice(i), seeds.get(i), "key " + i + " read by the second instance");
        }
        assertAll(remove(other, "remove on the second", keys.subList(0, 2)), TierStatus.OK);
        assertStatuses(exists(tier, "exists on the first after remove", keys.subList(0, 3)), TierStatus.NOT_FOUND, TierStatus.NOT_FOUND, TierStatus.OK);
        final long rewritten = newSeed();
        assertAll(write(other, "overwrite on the second", keys.subList(2, 3), List.of(rewritten), arena), TierStatus.OK);
        final RecordingTierBatch reread = read(tier, "read the overwrite on the first", keys.subList(2, 3), arena);
        assertAll(reread, TierStatus.OK);
        PageBytes.assertContent(reread.slice(0), rewritten, "key overwritten by the other instance");
    }

    /**
     * PERSISTENT, across processes: another JVM that creates the tier from the same provider and settings
     * after this one closed it finds what this one wrote (and not what it removed), byte for byte; what
     * that process writes and removes before it closes is what a new instance here finds. Objects kept
     * in memory of this JVM (a static map) fail it, however well they survive a reopen in the same JVM.
     */
    @TestFactory
    public Stream<DynamicTest> shouldKeepObjectsForAnotherProcess()
    {
        return ifDeclared(TierCapability.PERSISTENT, "another process finds the objects after this one closed the tier", () ->
        {
            final HandOver handOver = handOver();
            closeTier(tier);
            handOver.runSecondProcess("PERSISTENT: a second process opening the tier after the first closed it");
            handOver.checkHandedBack(openTier(tierConfig, new ContractTierContext(tierName(), objectSize())), "after the second process closed it");
        });
    }

    /**
     * SHARED, across processes: while this instance stays open, another JVM that creates the tier from the
     * same provider and settings sees what this one wrote and removed, byte for byte, and this same
     * instance then sees what that process wrote, overwrote and removed, while that process still has
     * the tier open (in a store whose clients each contribute memory, its objects may live there).
     */
    @TestFactory
    public Stream<DynamicTest> shouldShareObjectsWithAnotherProcess()
    {
        return ifDeclared(TierCapability.SHARED, "another process sees this one's objects while both are open, and the other way round", () ->
        {
            final HandOver handOver = handOver();
            handOver.runSecondProcessHoldingOpen("SHARED: a second process opening the tier while the first has it open",
                "on the instance that stayed open, while the second process has the tier open too");
        });
    }

    /**
     * PERSISTENT, across a crash: a second JVM overwrites objects of the largest of {@link #frameSizes()},
     * one thread per key, each key with its two contents in turn, and is killed (SIGKILL) while it does.
     * A tier opened afterwards on the same settings finds each object whole, as one of its two versions,
     * or not at all; never part of one, nor CORRUPT (writes are atomic "even across a crash"). A tier
     * that writes in place passes every check in one process as long as it makes its readers wait for
     * its writers, and fails this one.
     */
    @TestFactory
    public Stream<DynamicTest> shouldKeepWholeObjectsWhenTheirWriterIsKilled()
    {
        return ifDeclared(TierCapability.PERSISTENT, "objects are whole after their writer was killed mid-write", () ->
        {
            final long size = Collections.max(frameSizes());
            final Map<String, String> config = validConfig(scratchDir("killed-writer"));
            final List<PageKey> keys = newKeys(8);
            final List<Long> first = newSeeds(keys.size());
            final List<Long> second = newSeeds(keys.size());
            final String what = "PERSISTENT: a writer killed mid-write";
            new SecondProcess.Plan(getClass(), tierName(), size, config, completionDeadline())
                .overwrite(keys, first, second)
                .killWhileWriting(what, scratchDir("killed-writer-process"), completionDeadline().plusSeconds(60),
                    List.of(getClass(), provider().getClass()));
            final StorageTier after = openTier(config, new ContractTierContext(tierName(), size));
            final PageArena arena = newArena(keys.size(), size);
            final RecordingTierBatch readBack = read(after, "read after " + what, keys, arena);
            for (int i = 0; i < keys.size(); i++)
            {
                final TierStatus status = readBack.status(i);
                assertThat(status).as("read of key %s after %s (a whole version or NOT_FOUND)", keys.get(i), what)
                    .isIn(TierStatus.OK, TierStatus.NOT_FOUND);
                if (status == TierStatus.OK && PageBytes.mismatch(readBack.slice(i), first.get(i)) >= 0
                    && PageBytes.mismatch(readBack.slice(i), second.get(i)) >= 0)
                {
                    fail("key %s read OK after %s but is neither of its two versions (a torn object)", keys.get(i), what);
                }
            }
            arena.assertGuardsIntact();
        });
    }

    /**
     * Writes objects on {@link #tier()} and removes one, then plans what a second process must find and change.
     *
     * @return the plan and what to expect afterwards
     */
    private HandOver handOver()
    {
        final PageArena arena = newArena(4 * OBJECTS, objectSize());
        final List<PageKey> keys = newKeys(OBJECTS);
        final List<Long> seeds = newSeeds(OBJECTS);
        assertAll(write(tier, "write for the second process", keys, seeds, arena), TierStatus.OK);
        assertAll(remove(tier, "remove before the second process", keys.subList(0, 1)), TierStatus.OK);
        final List<PageKey> theirs = newKeys(2);
        final List<Long> theirSeeds = newSeeds(2);
        final long rewritten = newSeed();
        final List<PageKey> written = new ArrayList<>(theirs);
        written.add(keys.get(2));
        final List<Long> writtenSeeds = new ArrayList<>(theirSeeds);
        writtenSeeds.add(rewritten);
        final SecondProcess.Plan plan = new SecondProcess.Plan(getClass(), tierName(), objectSize(), tierConfig, completionDeadline())
            .present(keys.subList(1, OBJECTS), seeds.subList(1, OBJECTS))
            .absent(keys.subList(0, 1))
            .write(written, writtenSeeds)
            .remove(keys.subList(1, 2));
        return new HandOver(plan, arena, keys, seeds, written, writtenSeeds);
    }

    /** What the first process handed a second one, and what it must find when it gets the tier back. */
    private final class HandOver
    {
        private final SecondProcess.Plan plan;
        private final PageArena arena;
        private final List<PageKey> keys;
        private final List<Long> seeds;
        private final List<PageKey> written;
        private final List<Long> writtenSeeds;

        HandOver(final SecondProcess.Plan plan, final PageArena arena, final List<PageKey> keys, final List<Long> seeds,
                 final List<PageKey> written, final List<Long> writtenSeeds)
        {
            this.plan = plan;
            this.arena = arena;
            this.keys = keys;
            this.seeds = seeds;
            this.written = written;
            this.writtenSeeds = writtenSeeds;
        }

        void runSecondProcess(final String what)
        {
            plan.runIn(what, scratchDir("second-process"), deadline(), code());
        }

        void runSecondProcessHoldingOpen(final String what, final String when)
        {
            plan.runHoldingOpen(what, scratchDir("second-process"), deadline(), code(), () -> checkHandedBack(tier, when));
        }

        private Duration deadline()
        {
            // Generous: the second JVM starts, loads the tier and may create its directories; only a hang reaches it.
            return completionDeadline().multipliedBy(4).plusSeconds(60);
        }

        private List<Class<?>> code()
        {
            return List.of(AbstractStorageTierContractTest.this.getClass(), provider().getClass());
        }

        /**
         * @param target a tier on the same settings
         * @param when   names the tier in failures
         */
        void checkHandedBack(final StorageTier target, final String when)
        {
            final List<PageKey> all = new ArrayList<>(keys);
            all.addAll(written.subList(0, written.size() - 1));
            final RecordingTierBatch present = exists(target, "exists " + when, all);
            for (int i = 0; i < all.size(); i++)
            {
                final boolean gone = i < 2;
                assertThat(present.status(i)).as("exists of key %s %s, %s", all.get(i), when,
                        i == 0 ? "removed by the first process" : i == 1 ? "removed by the second process" : "written by either")
                    .isEqualTo(gone ? TierStatus.NOT_FOUND : TierStatus.OK);
            }
            final List<PageKey> readKeys = all.subList(2, all.size());
            final RecordingTierBatch readBack = read(target, "read " + when, readKeys, arena);
            assertAll(readBack, TierStatus.OK);
            for (int i = 0; i < readKeys.size(); i++)
            {
                final PageKey key = readKeys.get(i);
                final int byThem = written.indexOf(key);
                PageBytes.assertContent(readBack.slice(i), byThem >= 0 ? writtenSeeds.get(byThem) : seeds.get(keys.indexOf(key)),
                    "key " + key + " " + when + (byThem >= 0 ? ", written by the second process" : ", written by the first"));
            }
            arena.assertGuardsIntact();
        }
    }

    /**
     * SELF_EVICTING (of the tier {@link #boundedConfig(Path, long)} creates): writing three times the capacity keeps usage within it, and every object the
     * tier dropped is reported through objectRemoved: the keys still present are exactly those
     * written and not reported.
     */
    @TestFactory
    public Stream<DynamicTest> shouldEvictWithinCapacityAndReportEachRemoval()
    {
        final long size = objectSize();
        final long capacity = BOUNDED_OBJECTS * size;
        final Map<String, String> config = boundedConfig(scratchDir("bounded"), capacity);
        if (config == null)
        {
            // A tier the plugin never bounds (its store owns capacity, as Mooncake's master does) has no such contract.
            return capabilities(tier).contains(TierCapability.SELF_EVICTING)
                ? Stream.of(DynamicTest.dynamicTest("SELF_EVICTING: a bounded configuration to test it with", () ->
                    fail("the tier declares SELF_EVICTING but the test does not override boundedConfig(Path, long)")))
                : Stream.empty();
        }
        return Stream.of(DynamicTest.dynamicTest("SELF_EVICTING: usage stays within capacity and each eviction is reported",
            () -> evictWithinCapacity(config, capacity)));
    }

    private void evictWithinCapacity(final Map<String, String> config, final long capacity)
    {
        final long size = objectSize();
        final int capacityObjects = BOUNDED_OBJECTS;
        final ContractTierContext boundedContext = new ContractTierContext(tierName(), size);
        final StorageTier bounded = openTier(config, boundedContext);
        assertThat(capabilities(bounded)).as("capabilities of the tier created from boundedConfig").contains(TierCapability.SELF_EVICTING);

        final int total = 3 * capacityObjects;
        final PageArena arena = newArena(total, size);
        final List<PageKey> keys = newKeys(total);
        final Set<PageKey> stored = new HashSet<>();
        for (int i = 0; i < total; i += 2)
        {
            final RecordingTierBatch written = write(bounded, "bounded write " + i, keys.subList(i, i + 2), newSeeds(2), arena);
            for (int k = 0; k < written.keyCount(); k++)
            {
                assertThat(written.status(k)).as("'%s' key %d", written.label(), k).isIn(TierStatus.OK, TierStatus.NO_SPACE);
                if (written.status(k) == TierStatus.OK)
                {
                    stored.add(written.pageKey(k));
                }
            }
        }
        assertThat(stored).as("keys written OK into an empty bounded tier").hasSizeGreaterThan(capacityObjects);

        awaitCondition("usage within capacity and every eviction reported", () ->
        {
            final RecordingTierBatch present = exists(bounded, "exists after filling", keys);
            final Set<PageKey> presentKeys = new HashSet<>();
            for (int i = 0; i < present.keyCount(); i++)
            {
                if (present.status(i) == TierStatus.OK)
                {
                    presentKeys.add(present.pageKey(i));
                }
            }
            final Set<PageKey> expectedPresent = new HashSet<>(stored);
            boundedContext.removedKeys().forEach(expectedPresent::remove);
            return presentKeys.equals(expectedPresent) && bounded.usage().usedBytes() <= capacity;
        });
        final List<PageKey> removed = boundedContext.removedKeys();
        assertThat(removed).as("objects reported removed").isNotEmpty();
        assertThat(stored).as("every key reported removed was written").containsAll(removed);
        assertThat(new HashSet<>(removed)).as("keys reported removed more than once").hasSameSizeAs(removed);
        final TierUsage usage = bounded.usage();
        assertThat(usage.usedBytes()).as("usedBytes of a tier bounded to %d", capacity).isLessThanOrEqualTo(capacity);
        assertThat(usage.capacityBytes()).as("capacityBytes").isLessThanOrEqualTo(capacity);
        if (usage.objects() >= 0)
        {
            assertThat(usage.objects()).as("objects").isEqualTo(stored.size() - removed.size());
        }
    }
}
