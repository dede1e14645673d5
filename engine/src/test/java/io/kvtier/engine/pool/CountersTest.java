package io.kvtier.engine.pool;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The counters region names its counters: a reader lists them with no list of its own. */
class CountersTest
{
    private record Seen(int id, int typeId, String name, String description, long value)
    {
    }

    private static List<Seen> list(final Counters counters)
    {
        final List<Seen> seen = new ArrayList<>();
        counters.forEach((id, typeId, name, description, value) -> seen.add(new Seen(id, typeId, name, description, value)));
        return seen;
    }

    @Test
    void shouldListOnlyAllocatedCountersWithTheirNamesTypesAndValues()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final Counters counters = new Counters(arena.allocate(CountersDescriptor.REGION_LENGTH, 8));
            assertThat(list(counters)).isEmpty();
            counters.allocate(7, CountersDescriptor.TYPE_COUNTER, "pages_committed", "Pages committed.");
            counters.allocate(3, CountersDescriptor.TYPE_GAUGE, "pages_in_use", "Pages currently in use.");
            counters.addOpaque(7, 5);
            counters.addOpaque(7, 2);
            counters.valueOpaque(3, 11);
            counters.valueOpaque(4, 99); // a value without a record is nobody's counter
            assertThat(list(counters)).containsExactly(
                new Seen(3, CountersDescriptor.TYPE_GAUGE, "pages_in_use", "Pages currently in use.", 11),
                new Seen(7, CountersDescriptor.TYPE_COUNTER, "pages_committed", "Pages committed.", 7));
        }
    }

    @Test
    void shouldPutRecordsWhereTheDiagramSaysInLittleEndian()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(CountersDescriptor.REGION_LENGTH, 8);
            final Counters counters = new Counters(region);
            counters.allocate(2, CountersDescriptor.TYPE_GAUGE, "queue_depth", "Jobs waiting.");
            counters.valueOpaque(2, 0x0102030405060708L);
            final ValueLayout.OfInt le = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
            assertThat(region.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 16)).isEqualTo(0x0102030405060708L);
            final long record = 4096 + 2 * 256;
            assertThat(region.get(le, record)).as("record state").isEqualTo(1);
            assertThat(region.get(le, record + 4)).as("type id").isEqualTo(2);
            assertThat(region.get(le, record + 8)).as("name length").isEqualTo(11);
            assertThat(new String(region.asSlice(record + 12, 11).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)).isEqualTo("queue_depth");
            assertThat(region.get(le, record + 64)).as("description length").isEqualTo(13);
            assertThat(new String(region.asSlice(record + 68, 13).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)).isEqualTo("Jobs waiting.");
        }
    }

    @Test
    void shouldRefuseALongNameAndCutALongDescriptionOnACharacterBoundary()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final Counters counters = new Counters(arena.allocate(CountersDescriptor.REGION_LENGTH, 8));
            assertThatThrownBy(() -> counters.allocate(0, CountersDescriptor.TYPE_COUNTER, "n".repeat(CountersDescriptor.MAX_NAME_LENGTH + 1), "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than 52 bytes");
            // 187 ASCII bytes then a 2-byte character: 189 bytes, one over; the cut must not split the character.
            final String description = "d".repeat(CountersDescriptor.MAX_DESCRIPTION_LENGTH - 1) + "é";
            counters.allocate(0, CountersDescriptor.TYPE_COUNTER, "n", description);
            assertThat(list(counters).getFirst().description()).isEqualTo("d".repeat(CountersDescriptor.MAX_DESCRIPTION_LENGTH - 1));
            assertThatThrownBy(() -> counters.allocate(CountersDescriptor.MAX_COUNTERS, CountersDescriptor.TYPE_COUNTER, "n", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("counter id=512");
        }
    }

    @Test
    void shouldNameEveryEngineCounterOnceTheEngineAllocatesThem()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(CountersDescriptor.REGION_LENGTH, 8);
            final EngineCounters engine = new EngineCounters(region);
            engine.allocateAll();
            engine.add(EngineCounter.L3_HIT_PAGES, 4);
            final List<Seen> seen = list(new Counters(region));
            engine.countRequest(io.kvtier.client.protocol.MessageType.LOOKUP);
            // The engine's counters: the first block, and the second between the tier blocks and the threads.
            assertThat(seen.stream().filter(s -> s.id() < CountersDescriptor.FIRST_REQUEST_TYPE_ID
                || s.id() >= CountersDescriptor.SECOND_ENGINE_BLOCK_ID && s.id() < CountersDescriptor.FIRST_THREAD_ID)).hasSize(EngineCounter.values().length);
            assertThat(list(new Counters(region))).contains(new Seen(CountersDescriptor.FIRST_REQUEST_TYPE_ID + io.kvtier.client.protocol.MessageType.LOOKUP,
                CountersDescriptor.TYPE_COUNTER, "requests_lookup", "Requests of type LOOKUP the engine took.", 1));
            for (final EngineCounter counter : EngineCounter.values())
            {
                assertThat(seen).as(counter.label()).contains(new Seen(counter.id(), counter.type().typeId(), counter.label(),
                    counter.description(), counter == EngineCounter.L3_HIT_PAGES ? 4 : 0));
            }
        }
    }
}
