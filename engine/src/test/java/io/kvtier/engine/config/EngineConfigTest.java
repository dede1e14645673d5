package io.kvtier.engine.config;

import io.kvtier.engine.Engine;
import io.kvtier.spi.TierConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineConfigTest
{
    private static ConfigException rejected(final Map<String, String> settings)
    {
        try
        {
            EngineConfig.from(settings);
        }
        catch (final ConfigException ex)
        {
            return ex;
        }
        throw new AssertionError("settings were accepted: " + settings);
    }

    @Test
    void shouldStartFromDefaults()
    {
        final EngineConfig config = EngineConfig.from(Map.of());
        assertThat(config.pageSize()).isEqualTo(256 << 10);
        assertThat(config.pageCount()).isEqualTo(4096);
        assertThat(config.writePolicy()).isEqualTo(WritePolicy.WRITE_THROUGH);
        assertThat(config.prefetchMode()).isEqualTo(PrefetchMode.BEST_EFFORT);
        assertThat(config.tiers()).isEmpty();
    }

    @Test
    void shouldNameAnUnknownKey()
    {
        final ConfigException ex = rejected(Map.of("pool.sise", "1GiB"));
        assertThat(ex.key()).isEqualTo("pool.sise");
        assertThat(ex.getMessage()).contains("unknown setting pool.sise").contains("pool.size");
    }

    @Test
    void shouldNameTheKeyTheValueAndWhatIsAllowed()
    {
        assertThat(rejected(Map.of("pool.size", "12XB")).getMessage())
            .contains("pool.size").contains("12XB").contains("KiB");
        assertThat(rejected(Map.of("pool.page-size", "5000")).getMessage())
            .contains("pool.page-size").contains("5000").contains("multiple of 4KiB");
        assertThat(rejected(Map.of("policy.write", "sometimes")).getMessage())
            .contains("policy.write").contains("sometimes").contains("write-back");
        assertThat(rejected(Map.of("pool.evict-low", "0.99")).getMessage())
            .contains("pool.evict-low").contains("below pool.evict-high");
        assertThat(rejected(Map.of("pipeline.ring-size", "1000")).getMessage())
            .contains("pipeline.ring-size").contains("power of two");
        assertThat(rejected(Map.of("lease.session-timeout", "5")).getMessage())
            .contains("lease.session-timeout").contains("unit");
    }

    @Test
    void shouldRefuseAPoolTooSmallOrTooBigForItsFilesystem()
    {
        assertThat(rejected(Map.of("pool.size", "256KiB")).getMessage()).contains("pool.size").contains("256KiB").contains("from 2 pages (512KiB)");
        assertThat(rejected(Map.of("pool.size", "300TiB", "pool.page-size", "4KiB")).getMessage()).contains("to 2^30 pages (4TiB)");
        assertThat(rejected(Map.of("pool.page-size", "1GiB")).getMessage()).as("a default that the other settings rule out")
            .startsWith("invalid pool.size = \"1GiB\" (the default): expected a size from 2 pages (2GiB)");
        final ConfigException big = rejected(Map.of("pool.size", "64TiB"));
        assertThat(big.key()).isEqualTo("pool.size");
        assertThat(big.getMessage()).contains("does not fit").contains("/dev/shm");
        assertThat(rejected(Map.of("pool.path", "/no/such/dir/pool")).getMessage()).contains("pool.path").contains("does not exist");
    }

    @Test
    void shouldCollectTiersInOrderAndRequireATypeEach()
    {
        final EngineConfig config = EngineConfig.from(new java.util.LinkedHashMap<>(Map.of(
            "tier.nvme.type", "posix", "tier.nvme.dir", "/tmp/x")));
        assertThat(config.tiers()).hasSize(1);
        assertThat(config.tiers().get(0).settings()).containsEntry("dir", "/tmp/x").doesNotContainKey("type");
        assertThat(rejected(Map.of("tier.nvme.dir", "/tmp/x")).getMessage()).contains("tier.nvme.type");
        assertThat(rejected(Map.of("tier.nvme", "x")).getMessage()).contains("tier.<name>.<setting>");
    }

    @Test
    void shouldRejectAnUnknownTierTypeListingTheKnownOnes()
    {
        final Map<String, String> settings = Map.of("tier.far.type", "tape", "pool.path", "/dev/shm/kvtier-config-test-" + ProcessHandle.current().pid(),
            "pool.size", "1MiB", "pool.page-size", "64KiB");
        assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings)))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("tier.far.type")
            .hasMessageContaining("tape")
            .hasMessageContaining("available types");
        assertThat(Path.of(settings.get("pool.path"))).doesNotExist();
    }

    @Test
    void shouldPassTierErrorsThroughNamingTheTierKey()
    {
        final Map<String, String> settings = Map.of("tier.s.type", "scripted", "tier.s.colour", "blue",
            "pool.path", "/dev/shm/kvtier-config-test2-" + ProcessHandle.current().pid(), "pool.size", "1MiB", "pool.page-size", "64KiB");
        assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings)))
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.s.colour");
    }

    @Test
    void shouldReadTheFileFormatWithLineNumbers(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve("kvtier.conf");
        Files.write(file, List.of("# comment", "", "pool.size = 8MiB", "pool.page-size=64KiB", "tier.a.type = scripted"));
        final EngineConfig config = EngineConfig.load(file, Map.of("pool.size", "16MiB"));
        assertThat(config.pageCount()).isEqualTo(256);
        assertThat(config.tiers()).extracting(EngineConfig.TierSettings::name).containsExactly("a");

        Files.write(file, List.of("pool.size = 8MiB", "pool.size = 9MiB"));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of()))
            .isInstanceOf(ConfigException.class).hasMessageContaining("line 2").hasMessageContaining("already set on line 1");
        Files.write(file, List.of("pool.size 8MiB"));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of()))
            .hasMessageContaining("line 1").hasMessageContaining("key = value");
        Files.write(file, List.of("pool.size = lots"));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of()))
            .hasMessageContaining(file.toString()).hasMessageContaining("pool.size").hasMessageContaining("lots");
        assertThatThrownBy(() -> EngineConfig.load(dir.resolve("missing.conf"), Map.of()))
            .hasMessageContaining("does not exist");
    }

    @Test
    void shouldNameTheFileAndTheFirstByteThatIsNotTextInABinaryFile(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve("kvtier.conf");
        // A compressed copy of a config, say: a NUL on line 2, at offset 17.
        Files.write(file, concat("pool.size = 8MiB\n".getBytes(StandardCharsets.UTF_8), new byte[] {0, 1, 2, (byte) 0x8b}));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of())).isInstanceOf(ConfigException.class)
            .hasMessage("config file " + file + " is not a text file: byte 0x00 at offset 17 (line 2); a config file is UTF-8 text,"
                + " one key = value per line");

        Files.write(file, concat("pool.size = 8MiB\npool.path = /dev/shm/caf".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xe9, '\n'}));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of())).isInstanceOf(ConfigException.class)
            .hasMessage("config file " + file + " is not valid UTF-8 at byte offset 41 (line 2): byte 0xe9; a config file is UTF-8 text,"
                + " one key = value per line");

        // A truncated sequence at the very end is named too, at the byte it starts at.
        Files.write(file, concat("pool.size = 8MiB\n".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xe2, (byte) 0x82}));
        assertThatThrownBy(() -> EngineConfig.load(file, Map.of())).hasMessageContaining("is not valid UTF-8 at byte offset 17 (line 2): byte 0xe2");
    }

    @Test
    void shouldReadUtf8TextWithOrWithoutAByteOrderMark(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve("kvtier.conf");
        Files.write(file, concat(new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf},
            "pool.size = 8MiB\r\n# caf\u00e9\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(ConfigFile.read(file)).containsExactly(Map.entry("pool.size", "8MiB"));
    }

    private static byte[] concat(final byte[] first, final byte[] second)
    {
        final byte[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    @Test
    void shouldDeclareEverySettingOnceAndListItInAll() throws Exception
    {
        final List<Setting<?>> declared = new ArrayList<>();
        for (final Field field : EngineSettings.class.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == Setting.class)
            {
                declared.add((Setting<?>)field.get(null));
            }
        }
        final List<Setting<?>> perTier = EngineSettings.PER_TIER;
        assertThat(declared).containsAll(perTier);
        declared.removeAll(perTier);
        assertThat(EngineSettings.ALL).containsExactlyInAnyOrderElementsOf(declared);
        assertThat(perTier).extracting(Setting::key).doesNotHaveDuplicates()
            .allMatch(key -> key.matches("(tier\\.<name>|migration\\.<source>)\\.[a-z0-9-]+"), "settings declared once for many tiers");
        assertThat(EngineSettings.ALL).extracting(Setting::key).doesNotHaveDuplicates()
            .allMatch(key -> key.matches("[a-z0-9]+(\\.[a-z0-9-]+)+"), "lowercase dotted keys");
        assertThat(EngineSettings.ALL).allSatisfy(setting -> assertThat(setting.meaning()).isNotBlank().doesNotContain("\n"));
    }

    @Test
    void shouldKeepTheKeyConstantsOtherCodeUses()
    {
        assertThat(EngineConfig.POOL_PATH).isEqualTo("pool.path");
        assertThat(EngineConfig.POOL_PAGE_SIZE).isEqualTo("pool.page-size");
        assertThat(EngineConfig.L3_MAX_BACKUP_PAGES).isEqualTo("l3.max-backup-pages");
        assertThat(EngineConfig.PIPELINE_TICK).isEqualTo("pipeline.tick-interval");
        assertThat(EngineConfig.L3_MAX_INFLIGHT).isEqualTo("l3.max-inflight-batches");
    }

    @Test
    void shouldMentionOnlyDeclaredSettingsInTheDocumentation()
    {
        final Set<String> keys = new HashSet<>();
        EngineSettings.ALL.forEach(setting -> keys.add(setting.key()));
        final Pattern mention = Pattern.compile("\\b(?:pool|index|lease|policy|l3|pipeline|session)\\.[a-z0-9.-]*[a-z0-9]");
        for (final Setting<?> setting : EngineSettings.ALL)
        {
            final Matcher matcher = mention.matcher(setting.defaultText() + " " + setting.allowed() + " " + setting.meaning());
            while (matcher.find())
            {
                assertThat(keys).as("%s mentions %s", setting.key(), matcher.group()).contains(matcher.group());
            }
        }
    }

    @Test
    void shouldTakeEveryFixedDefaultFromItsDeclaration()
    {
        final EngineConfig defaults = EngineConfig.from(Map.of());
        for (final Setting<?> setting : EngineSettings.ALL)
        {
            if (!setting.isDerived())
            {
                assertThat(defaults.get(setting)).as(setting.key()).isEqualTo(setting.type().parse(setting.defaultText()));
            }
        }
        assertThat(defaults.pageSize()).isEqualTo(256 << 10);
        assertThat(defaults.poolPath()).isEqualTo(Path.of("/dev/shm/kvtier-pool"));
        assertThat(defaults.evictHigh()).isEqualTo(0.95);
        assertThat(defaults.sessionTimeout()).hasSeconds(60);
        assertThat(defaults.tickInterval()).hasMillis(10);
        assertThat(defaults.waitStrategy()).isEqualTo(WaitStrategyKind.PARK);
        assertThat(defaults.ringSize()).isEqualTo(4096);
        assertThat(defaults.clientSlots()).isEqualTo(32);
        assertThat(defaults.negativeProbeTtl()).hasSeconds(2);
    }

    @Test
    void shouldDeriveDefaultsFromOtherSettings()
    {
        final EngineConfig defaults = EngineConfig.from(Map.of());
        assertThat(defaults.indexEntries()).as("max(4 x 4096 pages, 65536)").isEqualTo(65_536);
        assertThat(defaults.quarantine()).isEqualTo(defaults.reservationTimeout());
        assertThat(defaults.maxBackupPages(defaults.pageCount())).isEqualTo(1024);
        assertThat(defaults.probePages()).isEqualTo(64);

        final EngineConfig derived = EngineConfig.from(Map.of("pool.size", "64MiB", "pool.page-size", "4KiB",
            "lease.reservation-timeout", "5s", "session.max-keys", "10"));
        assertThat(derived.pageCount()).isEqualTo(16_384);
        assertThat(derived.indexEntries()).isEqualTo(65_536);
        assertThat(derived.quarantine()).hasSeconds(5);
        assertThat(derived.maxBackupPages(derived.pageCount())).isEqualTo(4096);
        assertThat(derived.probePages()).isEqualTo(10);
        assertThat(EngineConfig.from(Map.of("pool.size", "1GiB", "pool.page-size", "4KiB")).indexEntries()).isEqualTo(4L * 262_144);
        assertThat(EngineConfig.from(Map.of("l3.max-backup-pages", "100000")).maxBackupPages(4096)).as("at most the pool's pages").isEqualTo(4096);
    }

    @Test
    void shouldRejectAnInvalidValueOfEveryTypeNamingTheKeyAndTheValue()
    {
        final Map<SettingType<?>, String> invalid = Map.of(SettingType.SIZE, "12XB", SettingType.DURATION, "5",
            SettingType.FRACTION, "1.5", SettingType.INT, "seven", SettingType.LONG, "1e6", SettingType.PATH, "bad\0path");
        for (final Setting<?> setting : EngineSettings.ALL)
        {
            // Free text refuses only what no text setting may hold: control characters.
            final String value = setting == EngineSettings.L3_KEY_SALT || setting == EngineSettings.EVENTS_TOPIC_PREFIX ? "a\tsalt"
                : invalid.getOrDefault(setting.type(), "sometimes");
            final ConfigException ex = rejected(Map.of(setting.key(), value));
            assertThat(ex.key()).as(setting.key()).isEqualTo(setting.key());
            assertThat(ex.getMessage()).as(setting.key()).contains("invalid " + setting.key() + " = \"" + value + "\": expected ");
        }
    }

    @Test
    void shouldRejectAValueOutOfRangeSayingWhatIsAllowed()
    {
        assertThat(rejected(Map.of("pool.client-slots", "1025")).getMessage())
            .isEqualTo("invalid pool.client-slots = \"1025\": expected a whole number from 0 to 1024");
        assertThat(rejected(Map.of("pool.page-size", "2GiB")).getMessage())
            .isEqualTo("invalid pool.page-size = \"2GiB\": expected a multiple of 4KiB from 4KiB to 1GiB");
        assertThat(rejected(Map.of("pool.evict-high", "0")).getMessage())
            .isEqualTo("invalid pool.evict-high = \"0\": expected a fraction in (0, 1], above pool.evict-low");
        assertThat(rejected(Map.of("pipeline.tick-interval", "2s")).getMessage())
            .isEqualTo("invalid pipeline.tick-interval = \"2s\": expected a duration from 1ms to 1s");
        assertThat(rejected(Map.of("l3.io-timeout", "99ms")).getMessage())
            .isEqualTo("invalid l3.io-timeout = \"99ms\": expected a duration of at least 100ms");
        assertThat(rejected(Map.of("l3.probe-pages", "20", "session.max-keys", "10")).getMessage())
            .as("a bound derived from another setting shows its value")
            .isEqualTo("invalid l3.probe-pages = \"20\": expected a whole number from 0 to session.max-keys (10)");
        assertThat(rejected(Map.of("pool.allocate-first", "16KiB")).getMessage())
            .as("the first share of the pool is at least a page")
            .isEqualTo("invalid pool.allocate-first = \"16KiB\": expected a size of at least 1 page (256KiB),"
                + " pool.size or more allocates the whole pool before the engine serves");
        assertThat(rejected(Map.of("pool.allocate-chunk", "1MiB")).getMessage())
            .isEqualTo("invalid pool.allocate-chunk = \"1MiB\": expected a size from 2MiB to 64GiB, rounded down to a multiple of 2 MiB (a huge page)");
        assertThat(rejected(Map.of("index.entries", "1000")).getMessage())
            .isEqualTo("invalid index.entries = \"1000\": expected a whole number from the page count (4096) to 1073741824");
    }

    @Test
    void shouldRenderDefaultsAndRangesForTheDocumentation()
    {
        assertThat(EngineSettings.POOL_PAGE_SIZE.defaultText()).isEqualTo("256KiB");
        assertThat(EngineSettings.LEASE_SESSION_TIMEOUT.defaultText()).isEqualTo("60s");
        assertThat(EngineSettings.INDEX_ENTRIES.defaultText()).isEqualTo("max(4 x pages, 65536)");
        assertThat(EngineSettings.LEASE_QUARANTINE.defaultText()).isEqualTo("lease.reservation-timeout");
        assertThat(EngineSettings.POLICY_WRITE.allowed()).isEqualTo("one of none, write-through, write-through-selective, write-back");
        assertThat(EngineSettings.POOL_EVICT_LOW.allowed()).isEqualTo("a fraction in [0, 1), below pool.evict-high");
        assertThat(EngineSettings.PIPELINE_RING_SIZE.allowed()).isEqualTo("a power of two from 64 to 1048576");
        assertThat(EngineSettings.POOL_SIZE.allowed()).isEqualTo("a size from 2 pages to 2^30 pages, fitting the pool filesystem's free space");
    }

    @Test
    void shouldRefuseADeclarationWhoseDefaultItDoesNotAllow()
    {
        assertThatThrownBy(() -> Setting.integer("x.y").byDefault(0).range(1, 10).documented("z"))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("x.y").hasMessageContaining("the default 0");
        assertThatThrownBy(() -> Setting.integer("x.y").range(1, 10).documented("z"))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("no default");
    }

    @Test
    void shouldRejectASessionTimeoutShorterThanTheReservationTimeout()
    {
        assertThatThrownBy(() -> EngineConfig.from(Map.of(EngineConfig.LEASE_SESSION_TIMEOUT, "10s", EngineConfig.LEASE_RESERVATION_TIMEOUT, "30s")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("lease.session-timeout")
            .hasMessageContaining("lease.reservation-timeout")
            .satisfies(ex -> assertThat(((ConfigException)ex).key()).isEqualTo(EngineConfig.LEASE_SESSION_TIMEOUT));
        assertThatThrownBy(() -> EngineConfig.from(Map.of(EngineConfig.LEASE_RESERVATION_TIMEOUT, "2m")))
            .isInstanceOf(ConfigException.class)
            .satisfies(ex -> assertThat(((ConfigException)ex).key()).isEqualTo(EngineConfig.LEASE_RESERVATION_TIMEOUT));
        assertThat(EngineConfig.from(Map.of(EngineConfig.LEASE_SESSION_TIMEOUT, "30s", EngineConfig.LEASE_RESERVATION_TIMEOUT, "30s"))
            .sessionTimeout()).hasSeconds(30);
    }

    @Test
    void shouldReadTheDeprecatedWaitAndIdleKeysAsAliasesOfTheEngineIdleStrategy()
    {
        assertThat(EngineConfig.from(Map.of()).get(EngineSettings.ENGINE_IDLE_STRATEGY)).as("the default of an embedded engine").isEqualTo(IdleStrategyKind.BACKOFF);
        assertThat(EngineConfig.from(Map.of(EngineSettings.IPC_ENABLED.key(), "true")).get(EngineSettings.ENGINE_IDLE_STRATEGY))
            .as("the default with IPC clients").isEqualTo(IdleStrategyKind.ADAPTIVE);
        assertThat(EngineConfig.from(Map.of(EngineConfig.ENGINE_IDLE_STRATEGY, "yield")).get(EngineSettings.ENGINE_IDLE_STRATEGY))
            .isEqualTo(IdleStrategyKind.YIELD);
        assertThat(EngineConfig.from(Map.of(EngineConfig.PIPELINE_WAIT_STRATEGY, "busy-spin")).get(EngineSettings.ENGINE_IDLE_STRATEGY))
            .as("pipeline.wait-strategy alone").isEqualTo(IdleStrategyKind.SPIN);
        assertThat(EngineConfig.from(Map.of(EngineConfig.PIPELINE_WAIT_STRATEGY, "blocking")).get(EngineSettings.ENGINE_IDLE_STRATEGY))
            .isEqualTo(IdleStrategyKind.SLEEP);
        assertThat(EngineConfig.from(Map.of(EngineConfig.IPC_IDLE_STRATEGY, "sleep")).get(EngineSettings.ENGINE_IDLE_STRATEGY))
            .as("ipc.idle-strategy alone").isEqualTo(IdleStrategyKind.SLEEP);
        // Both old keys: each governed the engine thread in its own case, and still does.
        assertThat(EngineConfig.from(Map.of(EngineConfig.PIPELINE_WAIT_STRATEGY, "yielding", EngineConfig.IPC_IDLE_STRATEGY, "spin"))
            .get(EngineSettings.ENGINE_IDLE_STRATEGY)).as("without ipc.enabled").isEqualTo(IdleStrategyKind.YIELD);
        assertThat(EngineConfig.from(Map.of(EngineConfig.PIPELINE_WAIT_STRATEGY, "yielding", EngineConfig.IPC_IDLE_STRATEGY, "spin",
            EngineSettings.IPC_ENABLED.key(), "true")).get(EngineSettings.ENGINE_IDLE_STRATEGY)).as("with ipc.enabled").isEqualTo(IdleStrategyKind.SPIN);
        assertThat(EngineConfig.from(Map.of(EngineConfig.ENGINE_IDLE_STRATEGY, "spin", EngineConfig.PIPELINE_WAIT_STRATEGY, "busy-spin"))
            .get(EngineSettings.ENGINE_IDLE_STRATEGY)).as("an alias that agrees").isEqualTo(IdleStrategyKind.SPIN);
    }

    @Test
    void shouldRejectADeprecatedAliasThatDisagreesWithTheEngineIdleStrategy()
    {
        assertThat(rejected(Map.of(EngineConfig.ENGINE_IDLE_STRATEGY, "spin", EngineConfig.PIPELINE_WAIT_STRATEGY, "park")))
            .hasMessageContaining("engine.idle-strategy = \"spin\"")
            .hasMessageContaining("pipeline.wait-strategy = \"park\"")
            .hasMessageContaining("read as backoff")
            .satisfies(ex -> assertThat(ex.key()).isEqualTo(EngineConfig.ENGINE_IDLE_STRATEGY));
        assertThat(rejected(Map.of(EngineConfig.ENGINE_IDLE_STRATEGY, "backoff", EngineConfig.IPC_IDLE_STRATEGY, "sleep")))
            .hasMessageContaining("ipc.idle-strategy = \"sleep\"");
    }
}
