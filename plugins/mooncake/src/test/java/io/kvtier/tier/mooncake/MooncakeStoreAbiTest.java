package io.kvtier.tier.mooncake;

import io.kvtier.spi.TierConfig;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Store's C ABI called raw, as a real build was observed to answer (docs/plugins/mooncake.md): the
 * calls the tier makes rarely or not at all (sizes, removal by pattern and of everything, the segment's
 * name, health, argument checks), so that the project's test double is held to the same answers as a
 * real install, and a Mooncake that changes is noticed. Runs against whichever the tests use; the last
 * test covers what only the double answers for certain (it checks more strictly, or a real build's
 * answer was not observed) and runs against it alone.
 */
class MooncakeStoreAbiTest
{
    private static final long SIZE = 64 * 1024;

    private static MooncakeMaster master;

    private final List<MooncakeStore> clients = new ArrayList<>();
    private final Arena arena = Arena.ofConfined();

    @BeforeAll
    static void startMaster()
    {
        if (MooncakeTestSupport.missing() == null)
        {
            master = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("abi"));
        }
    }

    @AfterAll
    static void stopMaster()
    {
        if (master != null)
        {
            master.close();
        }
    }

    @BeforeEach
    void assumeStore()
    {
        MooncakeTestSupport.assumeStoreAvailable();
    }

    @AfterEach
    void destroyClients()
    {
        clients.forEach(MooncakeStore::destroyInBackground);
        // As a tier's close does: unmounted before the master can be stopped.
        clients.forEach(client -> client.awaitDestroyed(TimeUnit.SECONDS.toNanos(5)));
        arena.close();
    }

    @Test
    void shouldAnswerSizesAndRefuseDestinationsTooSmallAndPutsLargerThanTheLocalBuffer()
    {
        final MemorySegment store = client("64MiB").handle();
        final MemorySegment key = arena.allocateFrom("abi-size-" + System.nanoTime());
        final MemorySegment value = value(SIZE, (byte)7);
        assertThat(store_c_h.mooncake_store_get_size(store, key)).as("get_size of a missing key").isEqualTo(MooncakeErrors.OBJECT_NOT_FOUND);
        assertThat(store_c_h.mooncake_store_is_exist(store, key)).as("is_exist of a missing key").isZero();
        assertThat(store_c_h.mooncake_store_get_into(store, key, arena.allocate(SIZE), SIZE)).as("get_into of a missing key")
            .isEqualTo(MooncakeErrors.OBJECT_NOT_FOUND);

        assertThat(store_c_h.mooncake_store_put(store, key, value, SIZE, MemorySegment.NULL)).isZero();
        assertThat(store_c_h.mooncake_store_is_exist(store, key)).isEqualTo(1);
        assertThat(store_c_h.mooncake_store_get_size(store, key)).isEqualTo(SIZE);
        assertThat(store_c_h.mooncake_store_get_into(store, key, arena.allocate(SIZE / 2), SIZE / 2)).as("get_into a buffer too small")
            .isEqualTo(MooncakeErrors.INVALID_PARAMS);
        final MemorySegment back = arena.allocate(SIZE);
        assertThat(store_c_h.mooncake_store_get_into(store, key, back, SIZE)).isEqualTo(SIZE);
        assertThat(back.mismatch(value)).as("first differing byte of the value read back").isEqualTo(-1);

        final long large = 5L << 20; // the tests' local buffer is 4 MiB
        assertThat(store_c_h.mooncake_store_put(store, arena.allocateFrom("abi-large-" + System.nanoTime()), arena.allocate(large), large,
            MemorySegment.NULL)).as("a copying put larger than local-buffer-size").isEqualTo(MooncakeErrors.INVALID_PARAMS);
    }

    @Test
    void shouldRemoveByPatternAndAll()
    {
        final MemorySegment store = client("64MiB").handle();
        final String prefix = "abi-regex-" + System.nanoTime() + "-";
        for (int i = 0; i < 3; i++)
        {
            assertThat(store_c_h.mooncake_store_put(store, arena.allocateFrom(prefix + i), value(SIZE, (byte)i), SIZE, MemorySegment.NULL)).isZero();
        }
        assertThat(store_c_h.mooncake_store_put(store, arena.allocateFrom("other-" + prefix), value(SIZE, (byte)5), SIZE, MemorySegment.NULL)).isZero();

        assertThat(store_c_h.mooncake_store_remove_by_regex(store, arena.allocateFrom("^" + prefix), 1)).as("objects the pattern removed").isEqualTo(3);
        assertThat(store_c_h.mooncake_store_is_exist(store, arena.allocateFrom(prefix + 0))).isZero();
        assertThat(store_c_h.mooncake_store_is_exist(store, arena.allocateFrom("other-" + prefix))).as("a key the pattern does not match").isEqualTo(1);

        assertThat(store_c_h.mooncake_store_put(store, arena.allocateFrom(prefix + "all"), value(SIZE, (byte)9), SIZE, MemorySegment.NULL)).isZero();
        assertThat(store_c_h.mooncake_store_remove_all(store, 1)).as("remove_all with force").isPositive();
        assertThat(store_c_h.mooncake_store_is_exist(store, arena.allocateFrom(prefix + "all"))).isZero();
    }

    @Test
    void shouldNameTheSegmentAnswerHealthAndRefuseNullArguments()
    {
        final MooncakeStore client = client("64MiB");
        final MemorySegment store = client.handle();
        assertThat(client.segmentName()).as("the segment's name: host and a port").matches("127\\.0\\.0\\.1:\\d+");
        assertThat(store_c_h.mooncake_store_health_check(store)).isZero();

        final MemorySegment key = arena.allocateFrom("abi-null");
        assertThat(store_c_h.mooncake_store_put(store, MemorySegment.NULL, value(SIZE, (byte)1), SIZE, MemorySegment.NULL))
            .as("put with a NULL key").isEqualTo(MooncakeErrors.INTERNAL_ERROR);
        assertThat(store_c_h.mooncake_store_is_exist(MemorySegment.NULL, key)).as("is_exist without a client").isEqualTo(MooncakeErrors.INTERNAL_ERROR);
        assertThat(store_c_h.mooncake_store_batch_is_exist(store, MemorySegment.NULL, 1, arena.allocate(ValueLayout.JAVA_INT)))
            .as("batch_is_exist without keys").isEqualTo(MooncakeErrors.INTERNAL_ERROR);
    }

    @Test
    void shouldRefuseOverlappingRegistrationsAndAnswerBatchesPerKey()
    {
        final MemorySegment store = client("64MiB").handle();
        final MemorySegment buffer = arena.allocate(4 * SIZE, 4096);
        assertThat(store_c_h.mooncake_store_register_buffer(store, buffer, buffer.byteSize())).isZero();
        assertThat(store_c_h.mooncake_store_register_buffer(store, buffer.asSlice(SIZE), SIZE)).as("a registration overlapping another")
            .isEqualTo(MooncakeErrors.INVALID_PARAMS);

        final String prefix = "abi-batch-" + System.nanoTime() + "-";
        final MemorySegment keys = arena.allocate(ValueLayout.ADDRESS, 2);
        final MemorySegment buffers = arena.allocate(ValueLayout.ADDRESS, 2);
        final MemorySegment sizes = arena.allocate(ValueLayout.JAVA_LONG, 2);
        for (int i = 0; i < 2; i++)
        {
            keys.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(prefix + i));
            buffers.setAtIndex(ValueLayout.ADDRESS, i, buffer.asSlice(i * SIZE, SIZE).fill((byte)(i + 1)));
            sizes.setAtIndex(ValueLayout.JAVA_LONG, i, SIZE);
        }
        final MemorySegment putResults = arena.allocate(ValueLayout.JAVA_INT, 2);
        assertThat(store_c_h.mooncake_store_batch_put_from(store, keys, buffers, sizes, 2, MemorySegment.NULL, putResults)).isZero();
        assertThat(putResults.toArray(ValueLayout.JAVA_INT)).containsExactly(0, 0);

        keys.setAtIndex(ValueLayout.ADDRESS, 1, arena.allocateFrom(prefix + "missing"));
        for (int i = 0; i < 2; i++)
        {
            buffers.setAtIndex(ValueLayout.ADDRESS, i, buffer.asSlice((i + 2) * SIZE, SIZE));
        }
        final MemorySegment getResults = arena.allocate(ValueLayout.JAVA_LONG, 2);
        assertThat(store_c_h.mooncake_store_batch_get_into(store, keys, buffers, sizes, 2, getResults)).as("a batch with a missing key").isZero();
        assertThat(getResults.toArray(ValueLayout.JAVA_LONG)).containsExactly(SIZE, MooncakeErrors.OBJECT_NOT_FOUND);
        assertThat(buffer.asSlice(2 * SIZE, SIZE).mismatch(buffer.asSlice(0, SIZE))).as("the first key read back").isEqualTo(-1);
        assertThat(store_c_h.mooncake_store_unregister_buffer(store, buffer)).isZero();
    }

    @Test
    void shouldHaveTheDoubleRefuseWhatItChecksMoreStrictly() throws Exception
    {
        MooncakeTestSupport.assumeDouble("what the double checks more strictly than a real TCP build");
        final MemorySegment store = client("64MiB").handle();
        assertThat(store_c_h.mooncake_store_put_from(store, arena.allocateFrom("abi-unregistered"), value(SIZE, (byte)3), SIZE, MemorySegment.NULL))
            .as("put_from unregistered memory").isEqualTo(MooncakeErrors.INVALID_PARAMS);
        assertThat(store_c_h.mooncake_store_init_all(store, arena.allocateFrom("tcp"), arena.allocateFrom(""), 0)).as("init_all").isEqualTo(-1);
        assertThat(store_c_h.mooncake_store_get_hostname(store, arena.allocate(4), 4)).as("get_hostname into 4 bytes").isNegative();
        final MemorySegment leased = arena.allocateFrom("abi-leased-" + System.nanoTime());
        assertThat(store_c_h.mooncake_store_put(store, leased, value(SIZE, (byte)4), SIZE, MemorySegment.NULL)).isZero();
        assertThat(store_c_h.mooncake_store_get_into(store, leased, arena.allocate(SIZE), SIZE)).isEqualTo(SIZE);
        assertThat(store_c_h.mooncake_store_remove_by_regex(store, leased, 0)).as("a pattern removal without force skips a leased object").isZero();
        assertThat(store_c_h.mooncake_store_remove_by_regex(store, arena.allocateFrom("(unclosed"), 1)).as("a pattern that is no regex")
            .isEqualTo(MooncakeErrors.INVALID_PARAMS);

        final Path log = MooncakeTestSupport.logDir("abi").resolve("unknown-flag.log");
        final Process bad = new ProcessBuilder(MooncakeTestSupport.home().resolve(MooncakeMaster.BINARY).toString(), "--no_such_flag=1")
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(bad.waitFor(10, TimeUnit.SECONDS)).as("the master exits on an unknown flag").isTrue();
        assertThat(bad.exitValue()).isEqualTo(2);
        assertThat(Files.readString(log)).contains("unknown flag --no_such_flag=1");
    }

    private MooncakeStore client(final String segment)
    {
        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(master, segment));
        MooncakeLibrary.bind(MooncakeLibrary.locate(config.get("lib"), "tier.abi.lib", Map.of()));
        final MooncakeStore store = MooncakeStore.connect(MooncakeSettings.parse(new TierConfig("abi", config)), System.getLogger("abi"));
        clients.add(store);
        return store;
    }

    private MemorySegment value(final long size, final byte fill)
    {
        return arena.allocate(size).fill(fill);
    }
}
