package io.kvtier.device;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KvLayoutTest
{
    @Test
    void shouldSizeTokensBlocksAndPages()
    {
        final KvShape shape = KvShape.keyValue(32, 16, 8, 128, 2);

        assertThat(shape.tokenBytes()).isEqualTo(8 * 128 * 2);
        assertThat(shape.blockBytes()).isEqualTo(16 * 8 * 128 * 2);
        assertThat(shape.slots()).isEqualTo(64);
        assertThat(shape.pageBytes()).isEqualTo(64L * 16 * 8 * 128 * 2).isEqualTo(KvPageDescriptor.pageLength(shape));
    }

    @Test
    void shouldPlaceSlotsLayerByLayerKBeforeVAndTokensInOrder()
    {
        final KvShape shape = KvShape.keyValue(3, 4, 3, 5, 2);
        final long s = shape.blockBytes();

        assertThat(KvPageDescriptor.slotOffset(shape, 0, KvShape.K)).isZero();
        assertThat(KvPageDescriptor.slotOffset(shape, 0, KvShape.V)).isEqualTo(s);
        assertThat(KvPageDescriptor.slotOffset(shape, 2, KvShape.V)).isEqualTo(5 * s);
        assertThat(KvPageDescriptor.tokenOffset(shape, 1, KvShape.K, 3)).isEqualTo(2 * s + 3 * 30);
    }

    @Test
    void shouldRefuseAPageTooSmallForABlock()
    {
        final KvShape shape = KvShape.latent(2, 2, 4, 2);

        KvPageDescriptor.checkPageSize(shape, 32);
        assertThatThrownBy(() -> KvPageDescriptor.checkPageSize(shape, 31)).hasMessageContaining("pageSize=31").hasMessageContaining("pageLength=32");
    }

    @Test
    void shouldRefuseImpossibleShapesNamingTheField()
    {
        assertThatThrownBy(() -> KvShape.keyValue(0, 16, 8, 128, 2)).hasMessageContaining("layers=0");
        assertThatThrownBy(() -> new KvShape(2, 3, 16, 8, 128, 2)).hasMessageContaining("tensorsPerLayer=3");
        assertThatThrownBy(() -> KvShape.keyValue(2, 16, -1, 128, 2)).hasMessageContaining("heads=-1");
        assertThatThrownBy(() -> KvShape.keyValue(Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE, 128, 2))
            .hasMessageContaining("overflows");
    }

    @Test
    void shouldAddressBlocksOfEachLayerFirstKind()
    {
        final KvShape shape = KvShape.keyValue(2, 4, 2, 8, 2);
        final long s = shape.blockBytes();

        final LayerFirstLayout contiguous = LayerFirstLayout.contiguous(shape, 5, 1000);
        assertThat(contiguous.blockAddress(1, KvShape.V, 2)).isEqualTo(1000 + 3 * 5 * s + 2 * s);
        assertThat(contiguous.extent()).isEqualTo(1000 + 4 * 5 * s);

        final LayerFirstLayout interleaved = LayerFirstLayout.interleaved(shape, 5, 0, 4096);
        assertThat(interleaved.blockStride()).isEqualTo(2 * s);
        assertThat(interleaved.blockAddress(1, KvShape.V, 3)).isEqualTo(4096 + 3 * 2 * s + s);
        assertThat(interleaved.tokenAddress(0, KvShape.K, 1, 2)).isEqualTo(2 * s + 2 * shape.tokenBytes());

        final LayerFirstLayout separate = LayerFirstLayout.separate(shape, 5, 40, 30, 20, 10);
        assertThat(separate.tensorBase(1, KvShape.K)).isEqualTo(20);
        assertThat(separate.blockAddress(0, KvShape.V, 4)).isEqualTo(30 + 4 * s);
    }

    @Test
    void shouldRefuseLayoutsThatDoNotMatchTheirShape()
    {
        final KvShape shape = KvShape.keyValue(2, 4, 2, 8, 2);

        assertThatThrownBy(() -> LayerFirstLayout.separate(shape, 5, 0, 1, 2)).hasMessageContaining("tensorBase.length=3");
        assertThatThrownBy(() -> LayerFirstLayout.interleaved(shape, 5, 0)).hasMessageContaining("layerBase.length=1");
        assertThatThrownBy(() -> LayerFirstLayout.contiguous(shape, 0, 0)).hasMessageContaining("blocks=0");
        assertThatThrownBy(() -> LayerFirstLayout.separate(shape, 5, 0, 1, -2, 3)).hasMessageContaining("negative");
    }

    @Test
    void shouldRefuseOverlappingRowsInAStridedCopy()
    {
        assertThatThrownBy(() -> new CopyOp(0, 8, 0, 16, 16, 2)).hasMessageContaining("devicePitch=8");
        assertThatThrownBy(() -> new CopyOp(0, 16, 0, 16, 0, 2)).hasMessageContaining("width=0");
        assertThat(new CopyOp(0, 0, 0, 0, 16, 1).bytes()).isEqualTo(16);
    }
}
