package io.kvtier.tier.support;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CapacityTest
{
    private static final long OBJECT = 16 * 1024;

    @Test
    void shouldBeUnboundedWithTheDefaultWaterLevelsWhenNothingIsSet()
    {
        assertThat(parse(Map.of())).isEqualTo(new Capacity(TierUsage.UNBOUNDED, 0.9, 0.8));
        assertThat(parse(Map.of("capacity", "UNBOUNDED")).isBounded()).isFalse();
    }

    @Test
    void shouldReadASizeAndTheWaterLevels()
    {
        final Capacity capacity = parse(Map.of("capacity", "1MiB", "evict-high", "50%", "evict-low", "0.25"));
        assertThat(capacity).isEqualTo(new Capacity(1L << 20, 0.5, 0.25));
        assertThat(capacity.highWaterBytes()).isEqualTo(1L << 19);
        assertThat(capacity.lowWaterBytes()).isEqualTo(1L << 18);
    }

    @Test
    void shouldNameWhatIsWrong()
    {
        assertThatThrownBy(() -> parse(Map.of("capacity", "8KiB"))).isInstanceOf(TierConfigException.class)
            .hasMessage("invalid tier.t.capacity = \"8KiB\": expected at least one object, 16KiB (the engine's page frame), or unbounded");
        assertThatThrownBy(() -> parse(Map.of("capacity", "0B")))
            .hasMessage("invalid tier.t.capacity = \"0B\": expected a size from 1B to unbounded");
        assertThatThrownBy(() -> parse(Map.of("capacity", "lots"))).hasMessageContaining("\"lots\"").hasMessageContaining("or unbounded");
        assertThatThrownBy(() -> parse(Map.of("evict-high", "0")))
            .hasMessage("invalid tier.t.evict-high = \"0\": expected a fraction above 0 and at most 1, such as 0.9");
        assertThatThrownBy(() -> parse(Map.of("evict-low", "0.95")))
            .hasMessage("invalid tier.t.evict-low = \"0.95\": expected a fraction below tier.t.evict-high (0.9)");
        assertThatThrownBy(() -> parse(Map.of("evict-high", "0.5")))
            .hasMessageStartingWith("invalid tier.t.evict-high = \"0.5\": expected a fraction above tier.t.evict-low (default 0.8)");
    }

    private static Capacity parse(final Map<String, String> values)
    {
        return Capacity.parse(new TierConfig("t", values), OBJECT);
    }
}
