package io.kvtier.nativeaccess.libc;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;

class FileDescriptorsTest
{
    @TempDir
    Path directory;

    private FileDescriptors files;

    @BeforeEach
    void front()
    {
        Assumptions.assumeTrue(FileDescriptors.instance().isPresent(), "the FileDescriptors front needs native access");
        files = FileDescriptors.instance().orElseThrow();
    }

    @Test
    void shouldOpenNoPathThatHasASymbolicLinkAnywhereOnIt() throws Exception
    {
        final Path real = Files.createDirectories(directory.resolve("real"));
        Files.writeString(real.resolve("f"), "x".repeat(100));
        Files.createSymbolicLink(directory.resolve("linked"), real);
        Files.createSymbolicLink(real.resolve("g"), real.resolve("f"));

        final int fd = files.openWithoutSymlinks(real.resolve("f").toString(), LibC.O_RDONLY);
        assertThat(fd).isNotNegative();
        final FileDescriptors.Status status = files.status(fd);
        assertThat(status.isRegularFile()).isTrue();
        assertThat(status.size()).isEqualTo(100);
        assertThat(status.uid()).isEqualTo((Integer)Files.getAttribute(real.resolve("f"), "unix:uid"));
        files.close(fd);

        assertThat(files.openWithoutSymlinks(directory.resolve("linked").resolve("f").toString(), LibC.O_RDONLY)).as("a linked directory")
            .isNegative();
        assertThat(files.openWithoutSymlinks(real.resolve("g").toString(), LibC.O_RDONLY)).as("a linked file").isNegative();
        assertThat(files.openWithoutSymlinks("relative/path", LibC.O_RDONLY)).isEqualTo(-LibC.EINVAL);

        // The walk the front falls back to on kernels without openat2 refuses the same.
        final int walked = files.openByComponents(real.resolve("f").toString(), LibC.O_RDONLY);
        assertThat(walked).isNotNegative();
        assertThat(files.status(walked).sameFile(files.status(walked))).isTrue();
        files.close(walked);
        assertThat(files.openByComponents(directory.resolve("linked").resolve("f").toString(), LibC.O_RDONLY)).isNegative();
        assertThat(files.openByComponents(real.resolve("g").toString(), LibC.O_RDONLY)).isEqualTo(-40);
    }

    @Test
    void shouldSealAMemoryFileAgainstResizingAndMapADescriptor() throws Exception
    {
        final int fd = files.memoryFile("kvtier-test", 8192);
        assertThat(fd).isNotNegative();
        try (Arena arena = Arena.ofConfined())
        {
            assertThat(files.status(fd).size()).isEqualTo(8192);
            assertThat(files.addSeals(fd, FileDescriptors.F_SEAL_SHRINK | FileDescriptors.F_SEAL_GROW | FileDescriptors.F_SEAL_SEAL)).isZero();
            assertThat(LibC.instance().orElseThrow().ftruncate(fd, 4096)).as("shrinking a sealed file").isNegative();
            final MemorySegment one = files.map(fd, 8192, arena);
            final MemorySegment two = files.map(fd, 8192, arena);
            one.set(ValueLayout.JAVA_INT, 4100, 77);
            assertThat(two.get(ValueLayout.JAVA_INT, 4100)).isEqualTo(77);
            assertThat(files.accessMode(fd)).isEqualTo(LibC.O_RDWR);
        }
        files.close(fd);
    }

    @Test
    void shouldRefuseToMapReadWriteADescriptorOpenedReadOnly() throws Exception
    {
        final Path file = directory.resolve("ro");
        Files.write(file, new byte[4096]);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        final int fd = files.openWithoutSymlinks(file.toString(), LibC.O_RDONLY);
        assertThat(files.accessMode(fd)).isEqualTo(LibC.O_RDONLY);
        try (Arena arena = Arena.ofConfined())
        {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> files.map(fd, 4096, arena)).hasMessageContaining("errno 13");
        }
        files.close(fd);
    }
}
