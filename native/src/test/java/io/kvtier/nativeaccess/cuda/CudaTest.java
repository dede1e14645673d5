package io.kvtier.nativeaccess.cuda;

import io.kvtier.nativeaccess.cuda.bindings.cudart_h;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calls the real libcudart of this machine. Where the runtime is installed without a driver (the
 * project's build machines) discovery must say "no device" with cudaErrorInsufficientDriver; where a
 * GPU is present it must count it; where no runtime exists the test is skipped.
 */
class CudaTest
{
    private static Cuda.Discovery discoveryWithLibrary()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeTrue(discovery.availability() != Cuda.Availability.LIBRARY_MISSING,
            () -> "skipped: no libcudart here (" + discovery.reason() + ")");
        return discovery;
    }

    @Test
    void shouldReportNoDeviceWithInsufficientDriverWhereOnlyTheRuntimeIsInstalled()
    {
        final Cuda.Discovery discovery = discoveryWithLibrary();
        Assumptions.assumeTrue(discovery.driverVersion() == 0,
            () -> "skipped: this machine has an NVIDIA driver (" + Cuda.version(discovery.driverVersion()) + "), so the no-driver answer cannot be seen");

        assertThat(discovery.availability()).isEqualTo(Cuda.Availability.INSUFFICIENT_DRIVER);
        assertThat(discovery.hasDevices()).isFalse();
        assertThat(discovery.error()).isEqualTo(35).isEqualTo(cudart_h.cudaErrorInsufficientDriver());
        assertThat(discovery.deviceCount()).isZero();
        assertThat(discovery.runtimeVersion()).isGreaterThanOrEqualTo(12000);
        assertThat(discovery.reason()).contains("cudaErrorInsufficientDriver").contains("no NVIDIA driver").contains("install an NVIDIA driver");
        assertThat(Cuda.instance()).isEmpty();
    }

    @Test
    void shouldCountDevicesWhereADriverIsInstalled()
    {
        final Cuda.Discovery discovery = discoveryWithLibrary();
        Assumptions.assumeTrue(discovery.hasDevices(), () -> "skipped: no CUDA device here (" + discovery.reason() + ")");

        assertThat(discovery.deviceCount()).isPositive();
        assertThat(Cuda.instance()).isPresent();
    }

    @Test
    void shouldDescribeErrorsWithTheRuntimesOwnText()
    {
        discoveryWithLibrary();

        assertThat(Cuda.errorString(35)).containsIgnoringCase("driver");
        assertThat(Cuda.errorString(0)).isEqualTo("no error");
    }

    @Test
    void shouldReportAMissingLibraryWithWhatToInstall(@TempDir final Path dir)
    {
        final CudartLibrary.Loaded loaded = CudartLibrary.load(
            CudartLibrary.locate(Optional.of(dir.resolve("libcudart.so.99").toString()), "KVTIER_CUDA_LIB", List.of(dir)));

        final Cuda.Discovery discovery = Cuda.discover(loaded);

        assertThat(discovery.availability()).isEqualTo(Cuda.Availability.LIBRARY_MISSING);
        assertThat(discovery.hasDevices()).isFalse();
        assertThat(discovery.reason()).contains("no CUDA runtime").contains("KVTIER_CUDA_LIB").contains("install the CUDA runtime");
    }

    @Test
    void shouldChooseTheBatchCopySignatureByRuntimeVersion()
    {
        assertThat(Cuda.BatchCopy.forRuntime(12060)).isEqualTo(Cuda.BatchCopy.NONE);
        assertThat(Cuda.BatchCopy.forRuntime(12080)).isEqualTo(Cuda.BatchCopy.WITH_FAIL_INDEX);
        assertThat(Cuda.BatchCopy.forRuntime(12090)).isEqualTo(Cuda.BatchCopy.WITH_FAIL_INDEX);
        assertThat(Cuda.BatchCopy.forRuntime(13000)).isEqualTo(Cuda.BatchCopy.WITHOUT_FAIL_INDEX);
        assertThat(Cuda.BatchCopy.forRuntime(13020)).isEqualTo(Cuda.BatchCopy.WITHOUT_FAIL_INDEX);
    }

    @Test
    void shouldFormatVersionsAsMajorDotMinor()
    {
        assertThat(Cuda.version(13000)).isEqualTo("13.0");
        assertThat(Cuda.version(12080)).isEqualTo("12.8");
        assertThat(Cuda.version(0)).isEqualTo("none");
    }
}
