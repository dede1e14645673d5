package io.kvtier.tier.mooncake;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.tier.support.SettingsTable;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Settings and return-code mapping, which need no store: they run everywhere, also where the
 * store-backed tests skip. The settings table of {@code docs/plugins/mooncake.md} is rendered from
 * {@link MooncakeSettings#ALL}, and fails here, with the difference and the command that rewrites it,
 * when the file says anything else.
 */
class MooncakeSettingsTest
{
    static final Path DOC = Path.of("..", "..", "docs", "plugins", "mooncake.md");
    static final String REWRITE_COMMAND = "./mvnw -q -pl plugins/mooncake -am test -Dtest=MooncakeSettingsTest"
        + " -Dsurefire.failIfNoSpecifiedTests=false -D" + SettingsTable.REWRITE_PROPERTY + "=true";

    @Test
    void shouldListEverySettingInTheDocsAsDeclared() throws IOException
    {
        assertThat(SettingsTable.check(DOC, MooncakeSettings.ALL, REWRITE_COMMAND)).as("docs/plugins/mooncake.md").isEmpty();
    }

    @Test
    void shouldRejectAnUnknownKeyListingTheDeclaredOnes()
    {
        assertThat(MooncakeSettings.KNOWN).hasSize(23).contains("master", "lib", "key-prefix", "batch-keys");
        assertThatThrownBy(() -> MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "m:1", "replica", "2"))))
            .isInstanceOf(TierConfigException.class).hasMessageStartingWith("unknown setting tier.l3.replica: this tier accepts [")
            .hasMessageContaining("replicas");
    }

    @Test
    void shouldKeepWhatTheOperatorWrote()
    {
        final MooncakeSettings settings = MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "10.0.0.5:50051",
            "protocol", "RDMA", "device-name", "mlx5_0", "key-prefix", "", "preferred-segments", " a:1, b:2 ", "lease-wait", "2s",
            "write-backoff", "5ms", "local-hostname", "10.0.0.9")));
        assertThat(settings.protocol).as("Mooncake is handed the protocol in lower case").isEqualTo("rdma");
        assertThat(settings.deviceName).isEqualTo("mlx5_0");
        assertThat(settings.keyPrefix).as("an empty prefix is a prefix, not a missing setting").isEmpty();
        assertThat(settings.preferredSegments).containsExactly("a:1", "b:2");
        assertThat(settings.leaseWait).isEqualTo(Duration.ofSeconds(2));
        assertThat(settings.writeBackoff).isEqualTo(Duration.ofMillis(5));
        assertThat(settings.localHostname).isEqualTo("10.0.0.9");
    }

    @Test
    void shouldSayWhatIsAllowedForEachKindOfBadValue()
    {
        assertThatThrownBy(() -> parse("master", "m:70000"))
            .hasMessage("invalid tier.l3.master = \"m:70000\": expected host:port with a port from 1 to 65535, e.g. 10.0.0.5:50051");
        assertThatThrownBy(() -> parse("master", "m")).hasMessageContaining("\"m\"").hasMessageContaining("host:port");
        assertThatThrownBy(() -> parse("protocol", "udp")).hasMessage("invalid tier.l3.protocol = \"udp\": expected tcp or rdma");
        assertThatThrownBy(() -> parse("key-prefix", " a")).as("a prefix is not trimmed: the space is refused")
            .hasMessageContaining("invalid tier.l3.key-prefix = \" a\"").hasMessageContaining("letters, digits");
        assertThatThrownBy(() -> parse("key-prefix", "k".repeat(257))).hasMessageContaining("at most 256 bytes");
        assertThatThrownBy(() -> parse("preferred-segments", "a:1,,b:2")).hasMessageContaining("without empty entries");
        assertThatThrownBy(() -> parse("local-buffer-size", "512KiB"))
            .hasMessage("invalid tier.l3.local-buffer-size = \"512KiB\": expected a size from 1MiB to 1TiB");
        assertThatThrownBy(() -> parse("lease-ttl", "-1s")).hasMessageContaining("tier.l3.lease-ttl");
        assertThatThrownBy(() -> parse("batch-keys", "0")).hasMessage("invalid tier.l3.batch-keys = \"0\": expected a whole number from 1 to 4096");
        assertThatThrownBy(() -> MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "m:1", "global-segment-size", "0",
            "prefer-local-segment", "true")))).hasMessageContaining("tier.l3.prefer-local-segment").hasMessageContaining("is 0");
    }

    private static MooncakeSettings parse(final String key, final String value)
    {
        return MooncakeSettings.parse(new TierConfig("l3", key.equals("master") ? Map.of(key, value) : Map.of("master", "m:1", key, value)));
    }
    @Test
    void shouldApplyDefaultsAroundTheRequiredMaster()
    {
        final MooncakeSettings settings = MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "127.0.0.1:50051")));
        assertThat(settings.metadataServer).isEqualTo("P2PHANDSHAKE");
        assertThat(settings.protocol).isEqualTo("tcp");
        assertThat(settings.localHostname).as("local hostname for a loopback master").isEqualTo("127.0.0.1");
        assertThat(settings.globalSegmentSize).isEqualTo(1L << 30);
        assertThat(settings.preferLocalSegment).as("prefer-local-segment when contributing a segment").isTrue();
        assertThat(settings.replicas).isEqualTo(1);
        assertThat(settings.keyPrefix).isEmpty();
        assertThat(settings.leaseTtl).isEqualTo(Duration.ofSeconds(10));
        assertThat(settings.leaseWait).isEqualTo(Duration.ZERO);
        assertThat(settings.lib).isNull();
    }

    @Test
    void shouldNotPreferALocalSegmentThatDoesNotExist()
    {
        final MooncakeSettings settings = MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "10.0.0.5:50051", "global-segment-size", "0")));
        assertThat(settings.preferLocalSegment).isFalse();
    }

    @Test
    void shouldNameTheQualifiedKeyOfABadSetting()
    {
        assertThatThrownBy(() -> MooncakeSettings.parse(new TierConfig("l3", Map.of())))
            .isInstanceOf(TierConfigException.class).hasMessageContaining("tier.l3.master");
        assertThatThrownBy(() -> MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "m:1", "key-prefix", "a*b"))))
            .isInstanceOf(TierConfigException.class).hasMessageContaining("tier.l3.key-prefix").hasMessageContaining("a*b");
        assertThatThrownBy(() -> MooncakeSettings.parse(new TierConfig("l3", Map.of("master", "m:1", "setup-timeout", "0s"))))
            .isInstanceOf(TierConfigException.class).hasMessageContaining("tier.l3.setup-timeout");
    }

    @Test
    void shouldMapEveryReturnCodeToAKeyStatus()
    {
        assertThat(MooncakeErrors.isMiss(MooncakeErrors.OBJECT_NOT_FOUND)).isTrue();
        assertThat(MooncakeErrors.isMiss(MooncakeErrors.LEASE_EXPIRED)).as("a lease that ran out mid-transfer is a miss").isTrue();
        assertThat(MooncakeErrors.isMiss(MooncakeErrors.REPLICA_IS_NOT_READY)).as("an object still being written").isTrue();
        assertThat(MooncakeErrors.isFull(MooncakeErrors.NO_AVAILABLE_HANDLE)).isTrue();
        assertThat(MooncakeErrors.isFull(MooncakeErrors.SEGMENT_NOT_FOUND)).isTrue();
        assertThat(MooncakeErrors.isFull(MooncakeErrors.INTERNAL_ERROR)).isFalse();
        assertThat(MooncakeErrors.failure(MooncakeErrors.INVALID_PARAMS)).isEqualTo(TierStatus.REJECTED);
        assertThat(MooncakeErrors.failure(MooncakeErrors.INVALID_KEY)).isEqualTo(TierStatus.REJECTED);
        assertThat(MooncakeErrors.failure(MooncakeErrors.CHECKSUM_MISMATCH)).isEqualTo(TierStatus.CORRUPT);
        assertThat(MooncakeErrors.failure(MooncakeErrors.RPC_TIMEOUT)).isEqualTo(TierStatus.TIMEOUT);
        assertThat(MooncakeErrors.failure(MooncakeErrors.INTERNAL_ERROR)).isEqualTo(TierStatus.IO_ERROR);
        assertThat(MooncakeErrors.failure(MooncakeErrors.RPC_FAIL)).isEqualTo(TierStatus.IO_ERROR);
        assertThat(MooncakeErrors.failure(-12345)).as("a code this build does not know").isEqualTo(TierStatus.IO_ERROR);
        assertThat(MooncakeErrors.name(MooncakeErrors.OBJECT_HAS_LEASE)).isEqualTo("OBJECT_HAS_LEASE (-706)");
    }

    @Test
    void shouldDescribeTheReplicateConfigLikeGcc()
    {
        // store_c.h's struct on LP64: size_t, int, int, pointer, size_t.
        assertThat(io.kvtier.tier.mooncake.bindings.mooncake_replicate_config.sizeof()).isEqualTo(32);
        assertThat(io.kvtier.tier.mooncake.bindings.mooncake_replicate_config.with_hard_pin$offset()).isEqualTo(12);
        assertThat(io.kvtier.tier.mooncake.bindings.mooncake_replicate_config.preferred_segments_count$offset()).isEqualTo(24);
        assertThat(io.kvtier.tier.mooncake.bindings.store_c_h.Symbols.NAMES).hasSize(19).doesNotHaveDuplicates();
    }
}
