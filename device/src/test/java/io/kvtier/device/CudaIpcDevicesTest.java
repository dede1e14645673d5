package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Opening another process's CUDA IPC handles: what the devices say and refuse when this machine has none. */
class CudaIpcDevicesTest
{
    @Test
    void shouldRefuseToOpenHandlesSayingWhyWhenThereIsNoDevice()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeFalse(discovery.hasDevices(), "skipped: this machine has a CUDA device");
        try (CudaIpcDevices devices = CudaIpcDevices.discover())
        {
            assertThat(devices.isPresent()).isFalse();
            assertThat(devices.deviceCount()).isZero();
            assertThat(devices.reason()).isEqualTo(discovery.reason());
            assertThatThrownBy(() -> devices.open(0, new byte[][] {new byte[CudaIpcDevices.HANDLE_LENGTH]}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no CUDA device")
                .hasMessageContaining(discovery.reason());
        }
    }
}
