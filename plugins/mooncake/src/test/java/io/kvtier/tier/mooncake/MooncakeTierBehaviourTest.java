package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Mooncake behaviours the tier bridges, each shown first at the store (through the raw C ABI, so
 * a Mooncake that changes is noticed) and then handled by the tier: a put keeps a key's first value,
 * a removal right after a read meets a lease, a read may outlive its lease, a full store refuses puts,
 * an unreachable master makes setup retry. Against a real master on loopback; skips naming what to
 * install where the store cannot run.
 */
class MooncakeTierBehaviourTest
{
    private static final long OBJECT_SIZE = 64 * 1024 + 4096;
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static MooncakeMaster master;

    private final List<StorageTier> tiers = new ArrayList<>();
    private final List<MooncakeStore> rawClients = new ArrayList<>();
    private final PageArena arena = new PageArena(PageArena.bytesFor(16, OBJECT_SIZE));
    private final SplittableRandom random = new SplittableRandom();

    @BeforeAll
    static void startMaster()
    {
        if (MooncakeTestSupport.missing() == null)
        {
            master = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("behaviour"));
        }
    }

    @BeforeEach
    void assumeStore()
    {
        MooncakeTestSupport.assumeStoreAvailable();
    }

    @AfterAll
    static void stopMaster()
    {
        if (master != null)
        {
            master.close();
        }
    }

    @AfterEach
    void closeTiers()
    {
        tiers.forEach(StorageTier::close);
        rawClients.forEach(MooncakeStore::destroyInBackground);
        // As a tier's close does: unmounted before the master can be stopped.
        rawClients.forEach(client -> client.awaitDestroyed(TimeUnit.SECONDS.toNanos(5)));
        arena.close();
    }

    @Test
    void shouldReplaceAKeyAlthoughMooncakeKeepsTheFirstValue()
    {
        final MooncakeTier tier = open(Map.of());
        final PageKey key = newKey();
        final long first = random.nextLong();
        final long second = random.nextLong();
        assertThat(write(tier, key, first)).isEqualTo(TierStatus.OK);

        // At the store: a second put of the key returns 0 and changes nothing.
        final MooncakeStore raw = rawClient();
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment other = arena.slice(OBJECT_SIZE);
            PageBytes.fill(other, second);
            assertThat(store_c_h.mooncake_store_put(raw.handle(), scratch.allocateFrom(key.toHex()), other, OBJECT_SIZE, MemorySegment.NULL))
                .as("a plain put on an existing key").isZero();
        }
        PageBytes.assertContent(read(tier, key).slice(0), first, "the key after a second raw put (Mooncake keeps the first value)");

        // Through the tier: the write removes the key first, so the new bytes are what a read sees.
        assertThat(write(tier, key, second)).isEqualTo(TierStatus.OK);
        final RecordingTierBatch back = read(tier, key);
        assertThat(back.status(0)).isEqualTo(TierStatus.OK);
        PageBytes.assertContent(back.slice(0), second, "the key after the tier rewrote it");
        assertThat(tier.stats().replacedBeforeWrite).hasValue(1);
        assertThat(tier.usage().objects()).as("objects after a replacement").isEqualTo(1);
    }

    @Test
    void shouldStoreAnEngineFrameWithoutTheZerosOfItsTrailerBlockAndGiveThemBack()
    {
        final MooncakeTier tier = open(Map.of());
        final MooncakeStore raw = rawClient();
        final long blockStart = OBJECT_SIZE - TrailerBlock.BYTES;
        final long compact = OBJECT_SIZE - TrailerBlock.BYTES + TrailerBlock.TRAILER_BYTES;

        // An engine frame: its payload, then a trailer and zeros. The store holds the payload and the trailer alone.
        final PageKey frameKey = newKey();
        final MemorySegment frame = arena.slice(OBJECT_SIZE);
        PageBytes.fill(frame, random.nextLong());
        frame.asSlice(blockStart + TrailerBlock.TRAILER_BYTES).fill((byte)0);
        final byte[] frameBytes = frame.toArray(ValueLayout.JAVA_BYTE);
        final RecordingTierBatch written = new RecordingTierBatch("write", List.of(frameKey), List.of(frame));
        tier.write(written);
        assertThat(written.awaitCompletion(DEADLINE).status(0)).isEqualTo(TierStatus.OK);
        assertThat(storedBytes(raw, frameKey)).as("bytes the store holds for a frame of %d bytes (its payload is %d)", OBJECT_SIZE, blockStart)
            .isEqualTo(compact);
        assertReadsBack(tier, frameKey, frameBytes, "the frame read into noise, zeros given back");

        // A frame stored whole, as an engine before compact objects wrote it, still reads.
        final PageKey oldKey = newKey();
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment old = arena.slice(OBJECT_SIZE);
            MemorySegment.copy(MemorySegment.ofArray(frameBytes), 0, old, 0, OBJECT_SIZE);
            assertThat(store_c_h.mooncake_store_put(raw.handle(), scratch.allocateFrom(oldKey.toHex()), old, OBJECT_SIZE, MemorySegment.NULL))
                .isZero();
        }
        assertReadsBack(tier, oldKey, frameBytes, "a frame stored whole, read back");

        // An object of any other size is never served: one byte more than a compact frame is CORRUPT.
        final PageKey oddKey = newKey();
        try (Arena scratch = Arena.ofConfined())
        {
            assertThat(store_c_h.mooncake_store_put(raw.handle(), scratch.allocateFrom(oddKey.toHex()), arena.slice(OBJECT_SIZE), compact + 1,
                MemorySegment.NULL)).isZero();
        }
        assertThat(read(tier, oddKey).status(0)).as("an object one byte longer than a compact frame").isEqualTo(TierStatus.CORRUPT);

        // Noise in the trailer block past the trailer: stored whole.
        final PageKey noiseKey = newKey();
        assertThat(write(tier, noiseKey, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(storedBytes(raw, noiseKey)).as("an object whose last block is not a trailer and zeros").isEqualTo(OBJECT_SIZE);
    }

    @Test
    void shouldStoreAFrameCompactlyWhereItsBatchDeclaresThePaddingWhateverThePaddingHolds()
    {
        final MooncakeTier tier = open(Map.of());
        final MooncakeStore raw = rawClient();
        final long paddingStart = OBJECT_SIZE - TrailerBlock.BYTES + TrailerBlock.TRAILER_BYTES;

        // Noise to the last byte, written by a batch that says the block past the trailer is padding (SPI 1.3),
        // as the engine's writes do: the store holds the payload and the trailer, and a read gives zeros for the rest.
        final PageKey key = newKey();
        final MemorySegment frame = arena.slice(OBJECT_SIZE);
        PageBytes.fill(frame, random.nextLong());
        final byte[] expected = frame.toArray(ValueLayout.JAVA_BYTE);
        java.util.Arrays.fill(expected, (int)paddingStart, (int)OBJECT_SIZE, (byte)0);
        final RecordingTierBatch written = new RecordingTierBatch("write, padding declared", List.of(key), List.of(frame)).withTrailerBlockPadding();
        tier.write(written);
        assertThat(written.awaitCompletion(DEADLINE).status(0)).isEqualTo(TierStatus.OK);
        assertThat(storedBytes(raw, key)).as("bytes the store holds for a frame whose padding was declared").isEqualTo(paddingStart);
        assertReadsBack(tier, key, expected, "the frame read into noise, its padding given back as zeros");
    }

    @Test
    void shouldLeaveAStoredKeyAloneWhenToldNotToReplace()
    {
        final MooncakeTier tier = open(Map.of("replace-existing", "false"));
        final PageKey key = newKey();
        final long first = random.nextLong();
        assertThat(write(tier, key, first)).isEqualTo(TierStatus.OK);
        assertThat(write(tier, key, random.nextLong())).as("a second write of a stored key").isEqualTo(TierStatus.OK);
        PageBytes.assertContent(read(tier, key).slice(0), first, "the key after a second write with replace-existing = false");
        assertThat(tier.stats().keptExisting).hasValue(1);
        assertThat(tier.stats().replacedBeforeWrite).hasValue(0);
    }

    @Test
    void shouldForceARemovalRefusedByTheLeaseOfARead()
    {
        final MooncakeTier tier = open(Map.of());
        final MooncakeStore raw = rawClient();
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(read(tier, key).status(0)).isEqualTo(TierStatus.OK);

        // At the store: the read leased the object, so a plain removal is refused.
        try (Arena scratch = Arena.ofConfined())
        {
            assertThat(store_c_h.mooncake_store_remove(raw.handle(), scratch.allocateFrom(key.toHex()), 0))
                .as("remove without force right after a read").isEqualTo(MooncakeErrors.OBJECT_HAS_LEASE);
        }

        // Through the tier (lease-wait = 0), right after another read renewed the lease: forced at once, and gone.
        assertThat(read(tier, key).status(0)).isEqualTo(TierStatus.OK);
        assertThat(remove(tier, key)).isEqualTo(TierStatus.OK);
        assertThat(exists(tier, key)).isEqualTo(TierStatus.NOT_FOUND);
        assertThat(tier.stats().leaseRefusals).hasValue(1);
        assertThat(tier.stats().forcedRemovals).hasValue(1);
    }

    @Test
    void shouldRetryARemovalUntilTheLeaseEndsWhenToldToWait()
    {
        // The tests' master leases for 5 s (LEASE_TTL); waiting up to 20 s, the removal succeeds unforced once it ends.
        final MooncakeTier tier = open(Map.of("lease-wait", "20s", "write-backoff", "100ms"));
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(read(tier, key).status(0)).isEqualTo(TierStatus.OK);

        assertThat(remove(tier, key)).isEqualTo(TierStatus.OK);
        assertThat(exists(tier, key)).isEqualTo(TierStatus.NOT_FOUND);
        assertThat(tier.stats().leaseRefusals.get()).as("refusals while the lease lasted").isPositive();
        assertThat(tier.stats().forcedRemovals).as("forced removals").hasValue(0);
    }

    @Test
    void shouldForcePendingLeasedRemovalsOnClose()
    {
        final MooncakeTier tier = open(Map.of("lease-wait", "1h"));
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(read(tier, key).status(0)).isEqualTo(TierStatus.OK);
        final RecordingTierBatch removal = RecordingTierBatch.ofKeys("remove under lease", List.of(key));
        tier.remove(removal);
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (tier.stats().leaseRefusals.get() == 0 && System.nanoTime() - deadline < 0)
        {
            Thread.onSpinWait();
        }
        assertThat(removal.isComplete()).as("a removal waiting out its lease (lease-wait = 1h)").isFalse();
        tier.close();

        assertThat(removal.isComplete()).as("the removal is complete when close returns").isTrue();
        assertThat(removal.status(0)).isEqualTo(TierStatus.OK);
        final MooncakeTier other = open(Map.of());
        assertThat(exists(other, key)).as("the key after close forced its removal").isEqualTo(TierStatus.NOT_FOUND);
    }

    @Test
    void shouldTreatAReadThatOutlivedTheLeaseAsAMiss()
    {
        // A lease-ttl shorter than any get: every read has outlived it, so none may be trusted.
        final MooncakeTier tier = open(Map.of("lease-ttl", "1ns"));
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(read(tier, key).status(0)).isEqualTo(TierStatus.NOT_FOUND);
        assertThat(tier.stats().leaseExpiredReads).hasValue(1);
        assertThat(exists(tier, key)).as("the object itself stays").isEqualTo(TierStatus.OK);
    }

    @Test
    void shouldRetryAPutRefusedByAFullStoreThenReportNoSpace()
    {
        // A master of its own with no segment at all: every put is refused (NO_AVAILABLE_HANDLE).
        try (MooncakeMaster empty = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("full")))
        {
            final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(empty, "0"));
            config.put("write-retries", "2");
            config.put("write-backoff", "10ms");
            final MooncakeTier tier = (MooncakeTier)openTier(config);

            final MooncakeStore raw = rawClient(config);
            try (Arena scratch = Arena.ofConfined())
            {
                final MemorySegment value = arena.slice(OBJECT_SIZE);
                assertThat(store_c_h.mooncake_store_put(raw.handle(), scratch.allocateFrom("probe"), value, OBJECT_SIZE, MemorySegment.NULL))
                    .as("a put into a store without room").isEqualTo(MooncakeErrors.NO_AVAILABLE_HANDLE);
            }

            final PageKey key = newKey();
            assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.NO_SPACE);
            assertThat(tier.stats().fullRefusals).as("attempts refused: the first and two retries").hasValue(3);
            assertThat(tier.stats().noSpace).hasValue(1);
            assertThat(tier.usage().objects()).isZero();
            tier.close();
        }
    }

    @Test
    void shouldFailStartWithinTheSetupBoundWhenTheMasterIsUnreachable() throws Exception
    {
        final String nobody = "127.0.0.1:" + unusedPort();
        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(master, "0"));
        config.put("master", nobody);
        config.put("setup-retries", "1");
        assertThatThrownBy(() -> openTier(config))
            .isInstanceOf(MooncakeUnavailableException.class)
            .hasMessageContaining(nobody)
            .hasMessageContaining("tier.behaviour.setup-retries")
            .hasMessageContaining("is mooncake_master running");

        config.put("setup-retries", "3");
        config.put("setup-timeout", "300ms");
        assertThatThrownBy(() -> openTier(config))
            .isInstanceOf(MooncakeUnavailableException.class)
            .hasMessageContaining("did not finish within tier.behaviour.setup-timeout")
            .hasMessageContaining(nobody);
    }

    @Test
    void shouldPrefixKeysSoTiersWithOtherPrefixesDoNotSeeThem()
    {
        final MooncakeTier prefixed = open(Map.of("key-prefix", "tenant-a/"));
        final MooncakeTier plain = open(Map.of());
        final PageKey key = newKey();
        assertThat(write(prefixed, key, random.nextLong())).isEqualTo(TierStatus.OK);
        assertThat(exists(prefixed, key)).isEqualTo(TierStatus.OK);
        assertThat(exists(plain, key)).isEqualTo(TierStatus.NOT_FOUND);
        try (Arena scratch = Arena.ofConfined())
        {
            assertThat(store_c_h.mooncake_store_is_exist(rawClient().handle(), scratch.allocateFrom("tenant-a/" + key.toHex())))
                .as("the object's name in the store").isEqualTo(1);
        }
    }

    @Test
    void shouldMoveBytesThroughHostMemoryRegisteredOnce()
    {
        final MemorySegment pool = Arena.ofAuto().allocate(8 * OBJECT_SIZE, 4096);
        final ContractTierContext base = new ContractTierContext("behaviour", OBJECT_SIZE);
        final StorageTier tier = MooncakeTestSupport.provider(Map.of()).create(new TierConfig("behaviour", MooncakeTestSupport.config(master, "64MiB")),
            new io.kvtier.spi.TierContext()
            {
                @Override
                public String tierName()
                {
                    return base.tierName();
                }

                @Override
                public long objectSize()
                {
                    return OBJECT_SIZE;
                }

                @Override
                public java.util.Optional<MemorySegment> transferMemory()
                {
                    return java.util.Optional.of(pool);
                }
            });
        tiers.add(tier);
        final List<PageKey> keys = List.of(newKey(), newKey(), newKey(), newKey());
        final List<MemorySegment> sources = new ArrayList<>();
        final List<MemorySegment> destinations = new ArrayList<>();
        final long[] seeds = new long[keys.size()];
        for (int i = 0; i < keys.size(); i++)
        {
            sources.add(pool.asSlice(i * OBJECT_SIZE, OBJECT_SIZE));
            destinations.add(pool.asSlice((i + 4) * OBJECT_SIZE, OBJECT_SIZE));
            seeds[i] = random.nextLong();
            PageBytes.fill(sources.get(i), seeds[i]);
        }
        final RecordingTierBatch written = new RecordingTierBatch("write from the pool", keys, sources);
        tier.write(written);
        assertThat(written.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = new RecordingTierBatch("read into the pool", keys, destinations);
        tier.read(readBack);
        assertThat(readBack.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < keys.size(); i++)
        {
            PageBytes.assertContent(destinations.get(i), seeds[i], "key " + i + " read into the registered pool");
        }
    }

    @Test
    void shouldNameWhatIsMissingWhenTheLibraryIsNotConfigured()
    {
        final MooncakeLibrary.Location nothing = MooncakeLibrary.locate(null, "tier.l3.lib", Map.of());
        assertThat(nothing.found()).isFalse();
        assertThat(nothing.missing()).contains("tier.l3.lib", MooncakeLibrary.LIBRARY_ENV_NAME, MooncakeLibrary.HOME_ENV_NAME);

        final MooncakeLibrary.Location home = MooncakeLibrary.locate(null, "tier.l3.lib",
            Map.of(MooncakeLibrary.HOME_ENV_NAME, MooncakeTestSupport.home().toString()));
        assertThat(home.library()).isEqualTo(MooncakeTestSupport.library());

        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(master, "0"));
        config.remove("lib");
        assertThatThrownBy(() -> MooncakeTestSupport.provider(Map.of()).create(new TierConfig("l3", config), new ContractTierContext("l3", OBJECT_SIZE)))
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.l3.lib")
            .hasMessageContaining(MooncakeLibrary.HOME_ENV_NAME)
            .satisfies(ex -> assertThat(((TierConfigException)ex).key()).isEqualTo("tier.l3.lib"));
    }

    @Test
    void shouldListTheMissingFunctionsOfALibraryOfAnotherAbi()
    {
        final java.nio.file.Path libc = List.of("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6").stream()
            .map(java.nio.file.Path::of).filter(java.nio.file.Files::isRegularFile).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(libc != null, "no libc.so.6 at a known path to stand in for a wrong library");
        assertThatThrownBy(() -> MooncakeLibrary.bind(MooncakeLibrary.locate(libc.toString(), "tier.l3.lib", Map.of())))
            .isInstanceOf(MooncakeUnavailableException.class)
            .hasMessageContaining("lacks 19 of the 19 functions")
            .hasMessageContaining("mooncake_store_batch_put_from");
    }

    private MooncakeTier open(final Map<String, String> overrides)
    {
        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(master, "64MiB"));
        config.putAll(overrides);
        return (MooncakeTier)openTier(config);
    }

    private StorageTier openTier(final Map<String, String> config)
    {
        final StorageTier tier = MooncakeTestSupport.provider(Map.of()).create(new TierConfig("behaviour", config),
            new ContractTierContext("behaviour", OBJECT_SIZE));
        tiers.add(tier);
        return tier;
    }

    /** A client of its own on the tests' master, for showing what the store itself does. */
    private MooncakeStore rawClient()
    {
        return rawClient(MooncakeTestSupport.config(master, "0"));
    }

    private MooncakeStore rawClient(final Map<String, String> config)
    {
        final MooncakeStore store = MooncakeStore.connect(MooncakeSettings.parse(new TierConfig("raw", config)), System.getLogger("raw"));
        rawClients.add(store);
        return store;
    }

    private PageKey newKey()
    {
        return new PageKey(random.nextLong(), random.nextLong());
    }

    private TierStatus write(final StorageTier tier, final PageKey key, final long seed)
    {
        final MemorySegment source = arena.slice(OBJECT_SIZE);
        PageBytes.fill(source, seed);
        final RecordingTierBatch batch = new RecordingTierBatch("write", List.of(key), List.of(source));
        tier.write(batch);
        return batch.awaitCompletion(DEADLINE).status(0);
    }

    private RecordingTierBatch read(final StorageTier tier, final PageKey key)
    {
        final RecordingTierBatch batch = new RecordingTierBatch("read", List.of(key), List.of(arena.slice(OBJECT_SIZE)));
        tier.read(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    /** Reads the key into a slice of noise and checks every byte of it. */
    private void assertReadsBack(final StorageTier tier, final PageKey key, final byte[] expected, final String what)
    {
        final MemorySegment destination = arena.slice(OBJECT_SIZE);
        PageBytes.fill(destination, random.nextLong());
        final RecordingTierBatch batch = new RecordingTierBatch("read", List.of(key), List.of(destination));
        tier.read(batch);
        assertThat(batch.awaitCompletion(DEADLINE).status(0)).as(what).isEqualTo(TierStatus.OK);
        assertThat(MemorySegment.mismatch(destination, 0, OBJECT_SIZE, MemorySegment.ofArray(expected), 0, OBJECT_SIZE))
            .as("%s: first byte that differs", what).isEqualTo(-1L);
    }

    /** @return the bytes the store holds for the key, as its own client reports them */
    private static long storedBytes(final MooncakeStore raw, final PageKey key)
    {
        try (Arena scratch = Arena.ofConfined())
        {
            return store_c_h.mooncake_store_get_size(raw.handle(), scratch.allocateFrom(key.toHex()));
        }
    }

    private static TierStatus exists(final StorageTier tier, final PageKey key)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("exists", List.of(key));
        tier.exists(batch);
        return batch.awaitCompletion(DEADLINE).status(0);
    }

    private static TierStatus remove(final StorageTier tier, final PageKey key)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("remove", List.of(key));
        tier.remove(batch);
        return batch.awaitCompletion(DEADLINE).status(0);
    }

    private static int unusedPort() throws java.io.IOException
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }
}
