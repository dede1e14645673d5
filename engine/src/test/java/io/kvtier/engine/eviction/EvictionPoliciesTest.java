package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EvictionPoliciesTest
{
    @Test
    void shouldBuildEveryNamedPolicyUnderItsName()
    {
        assertThat(EvictionPolicies.names()).containsExactly("lru", "chain", "probation", "admission", "frequency", "adaptive");
        for (final String name : EvictionPolicies.names())
        {
            assertThat(EvictionPolicies.forName(name, 16).name()).isEqualTo(name);
            assertThat(EvictionPolicies.isName(name)).isTrue();
        }
    }

    @Test
    void shouldDefaultToTheAdaptivePolicy()
    {
        assertThat(EvictionPolicies.DEFAULT).isEqualTo("adaptive");
        assertThat(EvictionPolicies.forName(EvictionPolicies.DEFAULT, 16)).isInstanceOf(AdaptivePolicy.class);
        assertThat(EvictionPolicies.forName("lru", 16)).isInstanceOf(LruPolicy.class);
        assertThat(EvictionPolicies.forName("frequency", 16)).isInstanceOf(SegmentedPolicy.class);
    }

    @Test
    void shouldAcceptNamesInAnyCase()
    {
        assertThat(EvictionPolicies.forName("LRU", 4).name()).isEqualTo("lru");
        assertThat(EvictionPolicies.forName("Adaptive", 4).name()).isEqualTo("adaptive");
        assertThat(EvictionPolicies.isName("Chain")).isTrue();
    }

    @Test
    void shouldNameTheAllowedPoliciesWhenTheNameIsUnknown()
    {
        assertThatThrownBy(() -> EvictionPolicies.forName("arc", 4)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("eviction policy 'arc' is not one of lru, chain, probation, admission, frequency, adaptive");
        assertThatThrownBy(() -> EvictionPolicies.forName(null, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThat(EvictionPolicies.isName(null)).isFalse();
        assertThat(EvictionPolicies.isName("belady")).isFalse();
    }

    @Test
    void shouldRejectANegativeCapacity()
    {
        assertThatThrownBy(() -> EvictionPolicies.forName("lru", -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity=-1");
    }

    @Test
    void shouldAcceptAnEmptyPool()
    {
        for (final String name : EvictionPolicies.names())
        {
            assertThat(EvictionPolicies.forName(name, 0).first()).isEqualTo(EvictionPolicy.NONE);
        }
    }
}
