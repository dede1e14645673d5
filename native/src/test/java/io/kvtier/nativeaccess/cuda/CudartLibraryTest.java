package io.kvtier.nativeaccess.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class CudartLibraryTest
{
    private static Path touch(final Path path) throws Exception
    {
        Files.createDirectories(path.getParent());
        return Files.writeString(path, "");
    }

    @Test
    void shouldTakeAnExplicitPathThatExists(@TempDir final Path dir) throws Exception
    {
        final Path library = touch(dir.resolve("custom/libcudart.so.13"));
        touch(dir.resolve("cuda-13.0/lib64/libcudart.so.13"));

        final CudartLibrary.Location location = CudartLibrary.locate(Optional.of(library.toString()), "KVTIER_CUDA_LIB", List.of(dir));

        assertThat(location.found()).isTrue();
        assertThat(location.library()).isEqualTo(library.toString());
        assertThat(location.source()).isEqualTo("KVTIER_CUDA_LIB");
    }

    @Test
    void shouldReportAMissingExplicitPathInsteadOfFallingBackToTheInstall(@TempDir final Path dir) throws Exception
    {
        touch(dir.resolve("cuda-13.0/lib64/libcudart.so.13"));

        final CudartLibrary.Location location = CudartLibrary.locate(Optional.of(dir.resolve("nope.so").toString()), "KVTIER_CUDA_LIB", List.of(dir));

        assertThat(location.found()).isFalse();
        assertThat(location.missingReason()).contains("KVTIER_CUDA_LIB").contains("nope.so").contains("does not exist");
        assertThat(CudartLibrary.load(location).symbols()).isEmpty();
        assertThat(CudartLibrary.load(location).description()).contains("install the CUDA runtime");
    }

    @Test
    void shouldPreferTheCudaSymlinkThenTheNewestVersionedInstall(@TempDir final Path dir) throws Exception
    {
        touch(dir.resolve("cuda-12.8/lib64/libcudart.so.12"));
        touch(dir.resolve("cuda-9.2/lib64/libcudart.so.9"));
        final Path newest = touch(dir.resolve("cuda-13.0/lib64/libcudart.so.13"));

        assertThat(CudartLibrary.locate(Optional.empty(), "KVTIER_CUDA_LIB", List.of(dir)).library()).isEqualTo(newest.toString());

        final Path symlinked = touch(dir.resolve("cuda/lib64/libcudart.so.12"));
        assertThat(CudartLibrary.locate(Optional.empty(), "KVTIER_CUDA_LIB", List.of(dir)).library()).isEqualTo(symlinked.toString());
    }

    @Test
    void shouldTakeTheNewestSonameInADirectoryAndTheUnversionedNameWithoutOne(@TempDir final Path dir) throws Exception
    {
        touch(dir.resolve("cuda-12.9/lib64/libcudart.so.11"));
        final Path twelve = touch(dir.resolve("cuda-12.9/lib64/libcudart.so.12"));
        assertThat(CudartLibrary.locate(Optional.empty(), "x", List.of(dir)).library()).isEqualTo(twelve.toString());

        final Path other = dir.resolve("other");
        final Path plain = touch(other.resolve("cuda-12.0/lib64/libcudart.so"));
        assertThat(CudartLibrary.locate(Optional.empty(), "x", List.of(other)).library()).isEqualTo(plain.toString());
    }

    @Test
    void shouldLeaveItToTheDynamicLoaderWithoutAnInstall(@TempDir final Path dir)
    {
        final CudartLibrary.Location location = CudartLibrary.locate(Optional.empty(), "x", List.of(dir));

        assertThat(location.found()).isTrue();
        assertThat(location.source()).isEqualTo("dynamic loader search");
        assertThat(location.library().split(",")).containsExactlyElementsOf(CudartLibrary.SONAMES);
    }

    @Test
    void shouldSayWhatToInstallWhenNoCandidateLoads(@TempDir final Path dir)
    {
        // A path that vanished between locate and load (a file that is not ELF would also fail, but makes
        // the JVM print an executable-stack warning).
        final Path notALibrary = dir.resolve("gone/libcudart.so.13");

        final CudartLibrary.Loaded loaded = CudartLibrary.load(new CudartLibrary.Location(notALibrary.toString(), "test", null));

        assertThat(loaded.symbols()).isEmpty();
        assertThat(loaded.description()).contains(notALibrary.toString()).contains("install the CUDA runtime");
    }
}
