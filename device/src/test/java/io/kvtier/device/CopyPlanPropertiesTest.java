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

    record Blocks(KvShape shape, Kind kind, int blocks, int[] from, int[] to, long[] pages, int valid, long seed)
    {
    }

    @Provide
    Arbitrary<Blocks> blockRuns()
    {
        final Arbitrary<KvShape> shapes = Combinators.combine(Arbitraries.integers().between(1, 4), Arbitraries.integers().between(1, 2),
            Arbitraries.integers().between(1, 6), Arbitraries.integers().between(1, 4), Arbitraries.integers().between(1, 6),
            Arbitraries.of(1, 2)).as(KvShape::new);
        return Combinators.combine(shapes, Arbitraries.of(Kind.class), Arbitraries.integers().between(1, 6),
                Arbitraries.integers().between(0, 1_000), Arbitraries.integers().between(0, 1_000), Arbitraries.longs(),
                Arbitraries.integers().between(0, 2))
            .as((shape, kind, blocks, count, valid, seed, gap) ->
            {
                // A random run of distinct blocks, loaded back into a shuffled choice of distinct blocks, to pages
                // in a random order with an even or uneven spacing.
                final java.util.Random random = new java.util.Random(seed);
                final int k = 1 + count % blocks;
                final int[] from = shuffledPrefix(random, blocks, k);
                final int[] to = shuffledPrefix(random, blocks, k);
                final int[] pageOrder = shuffledPrefix(random, k + 2, k);
                final long[] slots = new long[k + 2];
                for (int j = 1; j < slots.length; j++)
                {
                    slots[j] = slots[j - 1] + shape.pageBytes() + gap * random.nextInt(3);
                }
                final long[] pages = new long[k];
                for (int i = 0; i < k; i++)
                {
                    pages[i] = slots[pageOrder[i]];
                }
                return new Blocks(shape, kind, blocks, from, to, pages, 1 + valid % shape.blockTokens(), seed);
            });
    }

    private static int[] shuffledPrefix(final java.util.Random random, final int n, final int k)
    {
        final int[] all = new int[n];
        for (int i = 0; i < n; i++)
        {
            all[i] = i;
        }
        for (int i = n - 1; i > 0; i--)
        {
            final int j = random.nextInt(i + 1);
            final int swap = all[i];
            all[i] = all[j];
            all[j] = swap;
        }
        return java.util.Arrays.copyOf(all, k);
    }

    @Property(tries = 200)
    void shouldMoveRunsOfBlocksToTheirPagesAndBackEveryByte(@ForAll("blockRuns") final Blocks c)
    {
        final LayerFirstLayout layout = KvFixtures.layout(c.kind(), c.shape(), c.blocks(), c.seed());
        long hostBytes = 0;
        for (final long page : c.pages())
        {
            hostBytes = Math.max(hostBytes, page + c.shape().pageBytes());
        }

        final CopyPlan offload = CopyPlanner.plan(layout, c.from(), c.pages(), c.valid(), CopyDirection.TO_HOST);
        final CopyPlan load = CopyPlanner.plan(layout, c.to(), c.pages(), c.valid(), CopyDirection.TO_DEVICE);
        KvFixtures.checkPlan(offload, layout, c.pages(), c.valid());
        KvFixtures.checkPlan(load, layout, c.pages(), c.valid());
        assertThat(offload.ops().size()).isLessThanOrEqualTo(c.from().length * c.shape().slots());

        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment device = arena.allocate(layout.extent());
            final MemorySegment host = arena.allocate(hostBytes);
            host.fill(KvFixtures.HOST_SENTINEL);
            KvFixtures.fillDevice(device, layout);
            final EmulatedCopyExecutor executor = new EmulatedCopyExecutor(device, "property test");

            executor.submit(offload, 0, host).await();
            assertThat(KvFixtures.firstDifference(host, KvFixtures.expectedHost(hostBytes, c.shape(), c.from(), c.pages(), c.valid())))
                .isEqualTo(-1);
            device.fill((byte)0);
            executor.submit(load, 0, host).await();
            assertThat(KvFixtures.firstDifference(device, KvFixtures.expectedDevice(device.byteSize(), layout, c.from(), c.to(), c.valid())))
                .isEqualTo(-1);
        }
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
