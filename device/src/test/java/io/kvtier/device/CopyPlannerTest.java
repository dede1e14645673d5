package io.kvtier.device;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CopyPlannerTest
{
    private static final KvShape SHAPE = KvShape.keyValue(4, 16, 8, 128, 2);
    private static final long S = SHAPE.blockBytes();

    @Test
    void shouldCopyAContiguousAllocationsBlockWithOneStridedCopy()
    {
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 10, 0);

        final CopyPlan plan = CopyPlanner.plan(layout, 3, 4096, CopyDirection.TO_HOST);

        assertThat(plan.ops()).containsExactly(new CopyOp(3 * S, 10 * S, 4096, S, S, 8));
        assertThat(plan.totalBytes()).isEqualTo(SHAPE.pageBytes());
    }

    @Test
    void shouldCopyALayoutThatIsAlreadyPageFirstAsOneRun()
    {
        // One block per tensor, tensors back to back: the block is laid out exactly as the page.
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 1, 1 << 20);

        final CopyPlan plan = CopyPlanner.plan(layout, 0, 0, CopyDirection.TO_DEVICE);

        assertThat(plan.ops()).containsExactly(CopyOp.contiguous(1 << 20, 0, SHAPE.pageBytes()));
    }

    @Test
    void shouldJoinKAndVOfAnInterleavedLayerAndStrideAcrossRegularlySpacedLayers()
    {
        final long layerBytes = 10 * 2 * S;
        final LayerFirstLayout layout = LayerFirstLayout.interleaved(SHAPE, 10, 0, layerBytes, 2 * layerBytes, 3 * layerBytes);

        final CopyPlan plan = CopyPlanner.plan(layout, 5, 0, CopyDirection.TO_HOST);

        assertThat(plan.ops()).containsExactly(new CopyOp(5 * 2 * S, layerBytes, 0, 2 * S, 2 * S, 4));
    }

    @Test
    void shouldCopyIrregularlySpacedLayersAsOneJoinedRunPerLayerAtMost()
    {
        final LayerFirstLayout layout = LayerFirstLayout.interleaved(SHAPE, 10, 0, 100 * S, 170 * S, 1000 * S);

        final CopyPlan plan = CopyPlanner.plan(layout, 1, 0, CopyDirection.TO_HOST);

        assertThat(plan.rows()).isEqualTo(4);
        assertThat(plan.ops()).allSatisfy(op -> assertThat(op.width()).isEqualTo(2 * S));
        assertThat(plan.ops().size()).isLessThanOrEqualTo(4);
        assertThat(plan.totalBytes()).isEqualTo(SHAPE.pageBytes());
    }

    @Test
    void shouldCopyUnrelatedAllocationsOneSlotEach()
    {
        // Descending addresses: no run continues another and no pitch is positive, so nothing folds.
        final long[] bases = new long[SHAPE.slots()];
        for (int i = 0; i < bases.length; i++)
        {
            bases[i] = (bases.length - i) * 1_000_000L;
        }
        final LayerFirstLayout layout = LayerFirstLayout.separate(SHAPE, 10, bases);

        final CopyPlan plan = CopyPlanner.plan(layout, 2, 0, CopyDirection.TO_HOST);

        assertThat(plan.ops()).hasSize(SHAPE.slots()).allSatisfy(op -> assertThat(op.isContiguous()).isTrue());
        assertThat(plan.ops().get(0)).isEqualTo(CopyOp.contiguous(bases[0] + 2 * S, 0, S));
    }

    @Test
    void shouldCopyOnlyTheValidTokensOfAPartialBlockAsStridedRows()
    {
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 1, 0);
        final int valid = 5;

        final CopyPlan plan = CopyPlanner.plan(layout, 0, valid, 0, CopyDirection.TO_HOST);

        // The page-first slots no longer touch, so the one contiguous run of a full block becomes rows.
        assertThat(plan.ops()).containsExactly(new CopyOp(0, S, 0, S, valid * SHAPE.tokenBytes(), SHAPE.slots()));
        assertThat(plan.totalBytes()).isEqualTo(SHAPE.slots() * valid * SHAPE.tokenBytes());
    }

    @Test
    void shouldPlanAnMlaBlockAsOneRowPerLayer()
    {
        final KvShape mla = KvShape.latent(61, 64, 576, 2);
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(mla, 100, 0);

        final CopyPlan plan = CopyPlanner.plan(layout, 99, 0, CopyDirection.TO_HOST);

        assertThat(plan.ops()).containsExactly(new CopyOp(99 * mla.blockBytes(), 100 * mla.blockBytes(), 0, mla.blockBytes(), mla.blockBytes(), 61));
        assertThat(plan.totalBytes()).isEqualTo(mla.pageBytes()).isEqualTo(61L * 64 * 576 * 2);
    }

    @Test
    void shouldFoldConsecutiveBlocksOfUnrelatedAllocationsIntoOneStridedCopyPerSlot()
    {
        final long[] bases = new long[SHAPE.slots()];
        for (int i = 0; i < bases.length; i++)
        {
            bases[i] = (bases.length - i) * 1_000_000L;
        }
        final LayerFirstLayout layout = LayerFirstLayout.separate(SHAPE, 10, bases);
        final long page = SHAPE.pageBytes() + 4096;

        final CopyPlan plan = CopyPlanner.plan(layout, new int[] {3, 4, 5}, new long[] {0, page, 2 * page}, 16, CopyDirection.TO_HOST);

        // Slot by slot, block b+1 is S further on the device and a page further on the host.
        assertThat(plan.ops()).hasSize(SHAPE.slots()).allSatisfy(op -> assertThat(op.height()).isEqualTo(3));
        assertThat(plan.ops().get(0)).isEqualTo(new CopyOp(bases[0] + 3 * S, S, 0, page, S, 3));
        assertThat(plan.totalBytes()).isEqualTo(3 * SHAPE.pageBytes());
    }

    @Test
    void shouldKeepBlockByBlockCopiesWhenThatIsFewer()
    {
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 10, 0);
        final long page = SHAPE.pageBytes();

        final CopyPlan plan = CopyPlanner.plan(layout, new int[] {7, 2}, new long[] {5 * page, page}, 3, CopyDirection.TO_DEVICE);

        assertThat(plan.ops()).containsExactly(
            new CopyOp(7 * S, 10 * S, 5 * page, S, S, 8),
            new CopyOp(2 * S, 10 * S, page, S, 3 * SHAPE.tokenBytes(), 8));
    }

    @Test
    void shouldRefuseTwoCopiesIntoOneBlockOrOverlappingPages()
    {
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 10, 0);
        final long page = SHAPE.pageBytes();

        assertThatThrownBy(() -> CopyPlanner.plan(layout, new int[] {1, 1}, new long[] {0, page}, 16, CopyDirection.TO_DEVICE))
            .hasMessageContaining("block=1 appears twice");
        assertThatThrownBy(() -> CopyPlanner.plan(layout, new int[] {1, 2}, new long[] {page, 2 * page - 1}, 16, CopyDirection.TO_HOST))
            .hasMessageContaining("closer than pageLength");
        assertThatThrownBy(() -> CopyPlanner.plan(layout, new int[] {1, 2}, new long[] {0}, 16, CopyDirection.TO_HOST))
            .hasMessageContaining("must be equal");
    }

    @Test
    void shouldRefuseABlockOrTokenCountOutsideTheLayout()
    {
        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 2, 0);

        assertThatThrownBy(() -> CopyPlanner.plan(layout, 2, 0, CopyDirection.TO_HOST)).isInstanceOf(IndexOutOfBoundsException.class)
            .hasMessageContaining("block=2");
        assertThatThrownBy(() -> CopyPlanner.plan(layout, 0, 17, 0, CopyDirection.TO_HOST)).hasMessageContaining("validTokens=17");
        assertThatThrownBy(() -> CopyPlanner.plan(layout, 0, 0, 0, CopyDirection.TO_HOST)).hasMessageContaining("validTokens=0");
        assertThatThrownBy(() -> CopyPlanner.plan(layout, 0, -1, CopyDirection.TO_HOST)).hasMessageContaining("pageOffset=-1");
    }
}
