package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;

class CopyExecutorSelectionTest
{
    @Test
    void shouldFallBackToTheEmulationSayingWhyWhenThereIsNoDevice()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeFalse(discovery.hasDevices(), "skipped: this machine has a CUDA device, so the CUDA executor is chosen");
        try (Arena arena = Arena.ofConfined(); CopyExecutor executor = CopyExecutor.open(0, arena.allocate(64)))
        {
            assertThat(executor).isInstanceOf(EmulatedCopyExecutor.class);
            assertThat(executor.isDevice()).isFalse();
            assertThat(executor.description()).contains("emulation").contains(discovery.reason());
        }
    }

    @Test
    void shouldChooseCudaWhenADeviceIsPresent()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeTrue(discovery.hasDevices(), () -> "skipped: no CUDA device here (" + discovery.reason() + ")");
        try (Arena arena = Arena.ofConfined(); CopyExecutor executor = CopyExecutor.open(0, arena.allocate(64)))
        {
            assertThat(executor).isInstanceOf(CudaCopyExecutor.class);
            assertThat(executor.isDevice()).isTrue();
        }
    }
}
