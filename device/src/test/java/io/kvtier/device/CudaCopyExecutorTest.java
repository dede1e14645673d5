package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;
import io.kvtier.nativeaccess.cuda.CudaStream;
import io.kvtier.nativeaccess.cuda.bindings.cudart_h;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.kvtier.device.KvFixtures.Kind;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same round trip as {@link EmulatedRoundTripTest}, on a real device: device memory from
 * cudaMalloc, the pool page in registered host memory, copies on the executor's stream. Skipped with
 * the discovery's reason where there is no device (on this project's build machines: a CUDA runtime
 * without a driver).
 */
class CudaCopyExecutorTest
{
    private static final int BLOCKS = 3;

    private static Cuda needsADevice()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeTrue(discovery.hasDevices(), () -> "skipped: no CUDA device here (" + discovery.reason() + ")");
        return Cuda.instance().orElseThrow();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void shouldRoundTripEveryByteThroughTheDevice(final Kind kind)
    {
        final Cuda cuda = needsADevice();
        final KvShape shape = KvShape.keyValue(4, 16, 3, 64, 2);
        final int valid = 11;
        final int block = 2;
        final int target = 0;
        final LayerFirstLayout layout = KvFixtures.layout(kind, shape, BLOCKS, 1);
        final long deviceBase = cuda.malloc(layout.extent());
        // Closed in reverse: the stream, then the executor (which unregisters the host memory), then the memory.
        try (Arena arena = Arena.ofShared();
             CudaCopyExecutor executor = new CudaCopyExecutor(cuda, 0);
             CudaStream setup = cuda.createStream(cudart_h.cudaStreamNonBlocking()))
        {
            final long pageOffset = 4096;
            final MemorySegment staging = arena.allocate(layout.extent(), 4096);
            final MemorySegment host = arena.allocate(pageOffset + shape.pageBytes(), 4096);
            executor.registerHost(staging);
            executor.registerHost(host);
            host.fill(KvFixtures.HOST_SENTINEL);
            KvFixtures.fillDevice(staging, layout);
            cuda.memcpyAsync(deviceBase, staging.address(), staging.byteSize(), cudart_h.cudaMemcpyHostToDevice(), setup);
            setup.synchronize();

            try (CopyCompletion done = executor.submit(CopyPlanner.plan(layout, block, valid, pageOffset, CopyDirection.TO_HOST), deviceBase, host))
            {
                done.await();
                assertThat(done.isDone()).isTrue();
            }
            assertThat(KvFixtures.firstDifference(host, KvFixtures.expectedHost(host.byteSize(), shape, block, valid, pageOffset))).isEqualTo(-1);

            staging.fill((byte)0);
            cuda.memcpyAsync(deviceBase, staging.address(), staging.byteSize(), cudart_h.cudaMemcpyHostToDevice(), setup);
            setup.synchronize();
            try (CopyCompletion done = executor.submit(CopyPlanner.plan(layout, target, valid, pageOffset, CopyDirection.TO_DEVICE), deviceBase, host))
            {
                done.await();
            }
            cuda.memcpyAsync(staging.address(), deviceBase, staging.byteSize(), cudart_h.cudaMemcpyDeviceToHost(), setup);
            setup.synchronize();
            assertThat(KvFixtures.firstDifference(staging, KvFixtures.expectedDevice(staging.byteSize(), layout, block, target, valid)))
                .isEqualTo(-1);
        }
        finally
        {
            cuda.free(deviceBase);
        }
    }
}
