package io.kvtier.device;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.kvtier.device.KvFixtures.Kind;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random shapes, layouts, blocks, pages and partial fills: every plan moves exactly the block's bytes
 * to disjoint destinations inside the page, never uses more copies than slots, and round-trips every
 * byte through the emulation.
 */
class CopyPlanPropertiesTest
{
    record Case(KvShape shape, Kind kind, int blocks, int block, int target, int valid, int page, long seed)
    {
    }

    @Provide
    Arbitrary<Case> cases()
    {
        final Arbitrary<KvShape> shapes = Combinators.combine(Arbitraries.integers().between(1, 5), Arbitraries.integers().between(1, 2),
            Arbitraries.integers().between(1, 9), Arbitraries.integers().between(1, 5), Arbitraries.integers().between(1, 9),
            Arbitraries.of(1, 2, 4)).as(KvShape::new);
        return Combinators.combine(shapes, Arbitraries.of(Kind.class), Arbitraries.integers().between(1, 4),
                Arbitraries.integers().between(0, 1_000), Arbitraries.integers().between(0, 1_000), Arbitraries.integers().between(0, 1_000),
                Arbitraries.integers().between(0, 2), Arbitraries.longs())
            .as((shape, kind, blocks, block, target, valid, page, seed) ->
                new Case(shape, kind, blocks, block % blocks, target % blocks, 1 + valid % shape.blockTokens(), page, seed));
    }

    @Property(tries = 300)
    void shouldMoveExactlyTheBlockWithFewerCopiesThanSlotsAndRoundTripEveryByte(@ForAll("cases") final Case c)
    {
        final LayerFirstLayout layout = KvFixtures.layout(c.kind(), c.shape(), c.blocks(), c.seed());
        final long pageSize = c.shape().pageBytes() + 7;
        final long pageOffset = c.page() * pageSize;

        final CopyPlan offload = CopyPlanner.plan(layout, c.block(), c.valid(), pageOffset, CopyDirection.TO_HOST);
        final CopyPlan load = CopyPlanner.plan(layout, c.target(), c.valid(), pageOffset, CopyDirection.TO_DEVICE);
        KvFixtures.checkPlan(offload, layout, c.valid(), pageOffset);
        KvFixtures.checkPlan(load, layout, c.valid(), pageOffset);
        assertThat(offload.ops().size()).isLessThanOrEqualTo(c.shape().slots());
        assertThat(offload.rows()).isLessThanOrEqualTo(c.shape().slots());

        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment device = arena.allocate(layout.extent());
            final MemorySegment host = arena.allocate(3 * pageSize);
            host.fill(KvFixtures.HOST_SENTINEL);
            KvFixtures.fillDevice(device, layout);
            final EmulatedCopyExecutor executor = new EmulatedCopyExecutor(device, "property test");

            executor.submit(offload, 0, host).await();
            assertThat(KvFixtures.firstDifference(host, KvFixtures.expectedHost(host.byteSize(), c.shape(), c.block(), c.valid(), pageOffset)))
                .isEqualTo(-1);
            device.fill((byte)0);
            executor.submit(load, 0, host).await();
            assertThat(KvFixtures.firstDifference(device, KvFixtures.expectedDevice(device.byteSize(), layout, c.block(), c.target(), c.valid())))
                .isEqualTo(-1);
        }
    }
}
