package io.kvtier.device;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.kvtier.device.KvFixtures.Kind;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Layer-first to page-first and back through the emulation, every byte of device and host memory
 * checked: the bytes of the block land at their page-first place, nothing else on the host changes,
 * and loading the page into another block restores exactly the block's bytes and nothing more.
 */
class EmulatedRoundTripTest
{
    private static final int BLOCKS = 3;
    private static final int PAGES = 3;

    static Stream<Arguments> cases()
    {
        final List<KvShape> shapes = List.of(
            KvShape.keyValue(4, 16, 8, 64, 2),      // a GQA model's rank, fp16
            KvShape.keyValue(3, 7, 3, 5, 2),        // odd head count, odd sizes everywhere
            KvShape.keyValue(2, 4, 1, 3, 1),        // fp8, one head of three elements: 3-byte tokens
            KvShape.latent(5, 8, 576, 2),           // MLA: one latent of 512 + 64 per token
            KvShape.latent(1, 1, 1, 1));            // the smallest page there is
        final List<Arguments> cases = new ArrayList<>();
        for (final KvShape shape : shapes)
        {
            for (final Kind kind : Kind.values())
            {
                cases.add(Arguments.of(shape, kind, shape.blockTokens()));
                if (shape.blockTokens() > 1)
                {
                    // A partial last block: only its first tokens are filled.
                    cases.add(Arguments.of(shape, kind, shape.blockTokens() / 2 + 1));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{1} {0} valid={2}")
    @MethodSource("cases")
    void shouldMoveEveryByteOfABlockToItsPageAndBack(final KvShape shape, final Kind kind, final int valid)
    {
        final LayerFirstLayout layout = KvFixtures.layout(kind, shape, BLOCKS, shape.hashCode() ^ kind.ordinal());
        // A pool page is larger than the KV it holds (4 KiB multiple); pages after the first exercise the offset.
        final long pageSize = (shape.pageBytes() + 4095) / 4096 * 4096;
        final long pageOffset = 2 * pageSize;
        final int block = BLOCKS - 1;
        final int target = 0;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment device = arena.allocate(layout.extent());
            final MemorySegment host = arena.allocate(PAGES * pageSize);
            host.fill(KvFixtures.HOST_SENTINEL);
            KvFixtures.fillDevice(device, layout);
            final EmulatedCopyExecutor executor = new EmulatedCopyExecutor(device, "test");

            final CopyPlan offload = CopyPlanner.plan(layout, block, valid, pageOffset, CopyDirection.TO_HOST);
            KvFixtures.checkPlan(offload, layout, valid, pageOffset);
            try (CopyCompletion done = executor.submit(offload, 0, host))
            {
                assertThat(done.isDone()).isTrue();
            }
            assertThat(KvFixtures.firstDifference(host, KvFixtures.expectedHost(host.byteSize(), shape, block, valid, pageOffset)))
                .as("first wrong host byte after the offload of %s", offload).isEqualTo(-1);

            device.fill((byte)0);
            final CopyPlan load = CopyPlanner.plan(layout, target, valid, pageOffset, CopyDirection.TO_DEVICE);
            KvFixtures.checkPlan(load, layout, valid, pageOffset);
            executor.submit(load, 0, host).await();
            assertThat(KvFixtures.firstDifference(device, KvFixtures.expectedDevice(device.byteSize(), layout, block, target, valid)))
                .as("first wrong device byte after the load of %s", load).isEqualTo(-1);
        }
    }
}
