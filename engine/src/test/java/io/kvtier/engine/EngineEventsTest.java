package io.kvtier.engine;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.events.EventRing;
import io.kvtier.engine.events.EventRingDescriptor;
import io.kvtier.engine.events.EventSource;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/** The engine records KV events where pages enter and leave the pool and an L3 tier (docs/kv-events.md). */
class EngineEventsTest
{
    /** One record read from the ring. */
    private record Event(int type, int medium, long high, long low, long tag)
    {
    }

    private static Map<String, String> settings(final Path l3, final boolean events)
    {
        final Map<String, String> settings = EngineFixture.settings(null, 32);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", l3.toString());
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put(EngineSettings.EVENTS_ENABLED.key(), String.valueOf(events));
        return settings;
    }

    private static List<Event> drain(final EventRing ring)
    {
        final List<Event> events = new ArrayList<>();
        while (ring.poll((t, m, h, l, g) -> events.add(new Event(t, m, h, l, g)), 1000) > 0)
        {
            // until the ring is empty
        }
        return events;
    }

    @Test
    void shouldRecordNothingAndOfferNoSourceWhenEventsAreOff(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = EngineFixture.start(settings(l3, false));
             Session session = engine.openSession())
        {
            keys(session, 70, 2);
            write(session, 0, 2);
            session.flush();
            assertThat(engine.events()).isEmpty();
            assertThat(engine.snapshot().get(EngineCounter.EVENTS_RECORDED)).isZero();
        }
    }

    @Test
    void shouldRecordStoredInThePoolThenTheTierThenRemovedFromThePoolThenStoredAgainOnALoad(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = EngineFixture.start(settings(l3, true));
             Session session = engine.openSession())
        {
            final EventSource source = engine.events().orElseThrow();
            assertThat(source.mediums()).containsExactly(EventSource.POOL_MEDIUM, "disk");
            keys(session, 71, 3);
            write(session, 0, 3);
            session.flush();
            session.evict(0, 3);
            assertThat(session.acquire(0, 3)).isEqualTo(3);
            session.release();
            // The operator takes key 0 out of the tier: its copy there is gone, the pool's stays.
            final io.kvtier.engine.operations.EvictReport evicted = engine.operations().evict(new io.kvtier.engine.operations.EvictRequest("disk",
                List.of(new io.kvtier.spi.PageKey(session.keys().high(0), session.keys().low(0))), 0, 1, false));
            assertThat(evicted.removed()).as("refusals: %s", evicted.refusals()).isEqualTo(1);
            final List<Event> events = drain(source.ring());
            assertThat(events).isNotEmpty();
            assertThat(events.get(0).type()).as("the first record says the engine started empty").isEqualTo(EventRingDescriptor.TYPE_CLEARED);
            final int disk = PageEvents.tierMedium(0);
            for (int k = 0; k < 3; k++)
            {
                final long high = session.keys().high(k);
                final long low = session.keys().low(k);
                final List<String> ofKey = events.stream().filter(e -> e.high() == high && e.low() == low)
                    .map(e -> (e.type() == EventRingDescriptor.TYPE_STORED ? "stored " : "removed ") + e.medium()).toList();
                final List<String> expected = new ArrayList<>(List.of("stored " + PageEvents.POOL, "stored " + disk,
                    "removed " + PageEvents.POOL, "stored " + PageEvents.POOL));
                if (k == 0)
                {
                    expected.add("removed " + disk);
                }
                assertThat(ofKey).as("key %d's events", k).isEqualTo(expected);
            }
            assertThat(engine.snapshot().get(EngineCounter.EVENTS_DROPPED)).isZero();
        }
    }
}
