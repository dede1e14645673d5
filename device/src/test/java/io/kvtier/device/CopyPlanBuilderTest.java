package io.kvtier.device;

import io.kvtier.device.KvFixtures.Kind;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine keeps one {@link CopyPlanBuilder} and one {@link CopyOps} for every request: nothing of
 * one request may leak into the next, a refused request included, and appending plans to one list
 * gives each plan's copies in turn.
 */
class CopyPlanBuilderTest
{
    @Test
    void aReusedBuilderPlansEveryRequestAsAFreshOneWouldRefusalsIncluded()
    {
        final Random random = new Random(42);
        final CopyPlanBuilder reused = new CopyPlanBuilder();
        final CopyOps reusedOps = new CopyOps(1);
        int refusals = 0;
        for (int request = 0; request < 2_000; request++)
        {
            final KvShape shape = new KvShape(1 + random.nextInt(4), 1 + random.nextInt(2), 1 + random.nextInt(8), 1 + random.nextInt(3),
                1 + random.nextInt(8), 1 << random.nextInt(3));
            final int blocks = 1 + random.nextInt(70);
            final LayerFirstLayout layout = KvFixtures.layout(Kind.values()[random.nextInt(Kind.values().length)], shape, blocks, random.nextLong());
            final int count = 1 + random.nextInt(Math.min(blocks, 12));
            final int[] chosen = new int[count];
            final long[] pages = new long[count];
            for (int i = 0; i < count; i++)
            {
                chosen[i] = random.nextInt(blocks);           // repeats happen: refused
                pages[i] = shape.pageBytes() * random.nextInt(3 * count) + (random.nextInt(4) == 0 ? 1 : 0); // and close pages
            }
            final int valid = 1 + random.nextInt(shape.blockTokens());
            final CopyDirection direction = random.nextBoolean() ? CopyDirection.TO_HOST : CopyDirection.TO_DEVICE;
            final CopyOps fresh = new CopyOps(4).clear(direction);
            RuntimeException refused = null;
            try
            {
                new CopyPlanBuilder().append(layout, chosen, pages, count, valid, fresh);
            }
            catch (final IllegalArgumentException ex)
            {
                refused = ex;
            }
            reusedOps.clear(direction);
            if (refused != null)
            {
                final String message = refused.getMessage();
                assertThatThrownBy(() -> reused.append(layout, chosen, pages, count, valid, reusedOps)).hasMessage(message);
                assertThat(reusedOps.size()).isZero();
                refusals++;
                continue;
            }
            reused.append(layout, chosen, pages, count, valid, reusedOps);
            assertThat(reusedOps.toPlan()).as("request %d", request).isEqualTo(fresh.toPlan());
            assertThat(fresh.toPlan()).isEqualTo(CopyPlanner.plan(layout, java.util.Arrays.copyOf(chosen, count), java.util.Arrays.copyOf(pages, count),
                valid, direction));
        }
        assertThat(refusals).as("requests refused among the 2,000").isBetween(200, 1_800);
    }

    @Test
    void plansAppendedToOneListFollowEachOther()
    {
        final KvShape shape = KvShape.keyValue(3, 4, 2, 8, 2);
        final LayerFirstLayout layout = KvFixtures.layout(Kind.SEPARATE_SHUFFLED, shape, 10, 7);
        final CopyPlanBuilder builder = new CopyPlanBuilder();
        final CopyOps both = new CopyOps(1).clear(CopyDirection.TO_DEVICE);
        builder.append(layout, 3, 2, 0, both);
        builder.append(layout, new int[] {5, 6, 7}, new long[] {shape.pageBytes(), 2 * shape.pageBytes(), 3 * shape.pageBytes()}, 3, 4, both);
        final CopyPlan first = CopyPlanner.plan(layout, 3, 2, 0, CopyDirection.TO_DEVICE);
        final CopyPlan second = CopyPlanner.plan(layout, new int[] {5, 6, 7},
            new long[] {shape.pageBytes(), 2 * shape.pageBytes(), 3 * shape.pageBytes()}, 4, CopyDirection.TO_DEVICE);
        assertThat(both.toPlan().ops()).containsExactlyElementsOf(java.util.stream.Stream.concat(first.ops().stream(), second.ops().stream()).toList());
        assertThat(both.totalBytes()).isEqualTo(first.totalBytes() + second.totalBytes());
    }
}
