package io.kvtier.engine.config;

import io.kvtier.engine.Engine;
import io.kvtier.spi.TierConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

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
        assertThat(rejected(Map.of("pool.size", "256KiB")).getMessage()).contains("at least 2 pages");
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
    void shouldDocumentEverySettingInConfigMd() throws Exception
    {
        final String doc = Files.readString(Path.of("..", "docs", "config.md"));
        for (final EngineConfig.Setting setting : EngineConfig.SETTINGS)
        {
            assertThat(doc).as("docs/config.md documents %s", setting.key()).contains("`" + setting.key() + "`");
        }
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
}
