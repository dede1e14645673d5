package io.kvtier.tier.mooncake;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Settings and return-code mapping, which need no store: they run everywhere, also where the
 * store-backed tests skip.
 */
class MooncakeSettingsTest
{
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
