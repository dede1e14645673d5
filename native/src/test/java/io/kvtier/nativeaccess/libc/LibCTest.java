package io.kvtier.nativeaccess.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LibCTest
{
    private static MemorySegment path(final Arena arena, final Path path)
    {
        final byte[] text = path.toString().getBytes(StandardCharsets.UTF_8);
        final MemorySegment segment = arena.allocate(text.length + 1);
        LibC.putCString(segment, 0, text, text.length);
        return segment;
    }

    @Test
    void shouldBeAvailableWithNativeAccessEnabled()
    {
        assertThat(LibC.instance()).isPresent();
    }

    @Test
    void shouldWriteReadRenameAndUnlinkAFile(@TempDir final Path dir)
    {
        final LibC libc = LibC.instance().orElseThrow();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment data = arena.allocate(10_000);
            for (int i = 0; i < 10_000; i++)
            {
                data.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7));
            }
            final MemorySegment tmp = path(arena, dir.resolve("a.tmp"));
            final MemorySegment dst = path(arena, dir.resolve("a"));
            final int fd = libc.open(tmp, LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, 0644);
            assertThat(fd).isNotNegative();
            assertThat(libc.pwriteFully(fd, data, 0)).isEqualTo(10_000);
            assertThat(libc.fdatasync(fd)).isZero();
            assertThat(libc.size(fd)).isEqualTo(10_000);
            assertThat(libc.close(fd)).isZero();
            assertThat(libc.rename(tmp, dst)).isZero();

            final MemorySegment back = arena.allocate(10_000);
            final int rd = libc.open(dst, LibC.O_RDONLY | LibC.O_CLOEXEC, 0);
            assertThat(libc.preadFully(rd, back, 0)).isEqualTo(10_000);
            assertThat(back.mismatch(data)).isEqualTo(-1);
            // Past the end a read is short, not an error.
            assertThat(libc.preadFully(rd, back, 9_000)).isEqualTo(1_000);
            libc.close(rd);
            assertThat(libc.unlink(dst)).isZero();
            assertThat(Files.exists(dir.resolve("a"))).isFalse();
        }
    }

    @Test
    void shouldWriteAndReadAPartOfASegmentAndRefuseOneBeyondIt(@TempDir final Path dir)
    {
        final LibC libc = LibC.instance().orElseThrow();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment data = arena.allocate(8_192);
            for (int i = 0; i < 8_192; i++)
            {
                data.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 13 + 1));
            }
            final int fd = libc.open(path(arena, dir.resolve("part")), LibC.O_RDWR | LibC.O_CREAT | LibC.O_CLOEXEC, 0644);
            assertThat(fd).isNotNegative();
            // Bytes 1,000 to 4,999 of the segment at file offset 100.
            assertThat(libc.pwriteFully(fd, data, 1_000, 4_000, 100)).isEqualTo(4_000);
            assertThat(libc.size(fd)).isEqualTo(4_100);
            final MemorySegment back = arena.allocate(8_192);
            assertThat(libc.preadFully(fd, back, 2_000, 4_000, 100)).isEqualTo(4_000);
            assertThat(back.asSlice(2_000, 4_000).mismatch(data.asSlice(1_000, 4_000))).isEqualTo(-1);
            assertThat(back.asSlice(0, 2_000).mismatch(MemorySegment.ofArray(new byte[2_000]))).as("nothing before the part").isEqualTo(-1);
            assertThat(back.asSlice(6_000).mismatch(MemorySegment.ofArray(new byte[2_192]))).as("nothing after it").isEqualTo(-1);
            assertThat(libc.preadFully(fd, back, 0, 8_192, 4_000)).as("short only at the end of the file").isEqualTo(100);
            assertThatThrownBy(() -> libc.pwriteFully(fd, data, 4_096, 4_097, 0)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> libc.preadFully(fd, back, -1, 10, 0)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> libc.preadFully(fd, MemorySegment.ofArray(new byte[16]), 0, 16, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap segment");
            libc.close(fd);
        }
    }

    @Test
    void shouldCopyBytesWithMemcpyAndRefuseLengthsBeyondEitherSegment()
    {
        final LibC libc = LibC.instance().orElseThrow();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment src = arena.allocate(70_000);
            for (int i = 0; i < 70_000; i++)
            {
                src.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31 + 7));
            }
            final MemorySegment dst = arena.allocate(70_001);
            libc.memcpy(dst.asSlice(1), src, 70_000);
            assertThat(dst.asSlice(1).mismatch(src)).isEqualTo(-1);
            assertThat(dst.get(ValueLayout.JAVA_BYTE, 0)).isZero();
            assertThatThrownBy(() -> libc.memcpy(src, dst, 70_001))
                .isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> libc.memcpy(dst, src, -1))
                .isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void shouldReturnNegativeErrnoWithItsMeaning(@TempDir final Path dir)
    {
        final LibC libc = LibC.instance().orElseThrow();
        try (Arena arena = Arena.ofConfined())
        {
            final int fd = libc.open(path(arena, dir.resolve("missing")), LibC.O_RDONLY, 0);
            assertThat(fd).isEqualTo(-LibC.ENOENT);
            assertThat(libc.strerror(fd)).containsIgnoringCase("no such file");
            assertThat(libc.mkdir(path(arena, dir), 0755)).isEqualTo(-LibC.EEXIST);
            assertThat(libc.close(-1)).isNegative();
        }
    }

    @Test
    void shouldKeepAnOpenFileDescriptionLockWhenAnotherDescriptorOfTheFileCloses(@TempDir final Path dir) throws Exception
    {
        final LibC libc = LibC.instance().orElseThrow();
        final Path file = dir.resolve("locked");
        Files.write(file, new byte[4096]);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment name = path(arena, file);
            final int owner = libc.open(name, LibC.O_RDWR | LibC.O_CLOEXEC, 0);
            final int other = libc.open(name, LibC.O_RDWR | LibC.O_CLOEXEC, 0);
            assertThat(libc.ofdLock(owner, LibC.F_WRLCK, 0, 1)).isZero();
            // A classic POSIX lock would be gone after this close; an OFD lock is not.
            try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ))
            {
                assertThat(channel.size()).isEqualTo(4096);
            }
            assertThat(libc.ofdLock(other, LibC.F_WRLCK, 0, 1)).isIn(-LibC.EAGAIN, -LibC.EACCES);
            assertThat(libc.ofdLockHolder(other, 0, 1)).isEqualTo(LibC.F_WRLCK);
            assertThat(libc.ofdLockHolder(owner, 0, 1)).as("a description's own lock never blocks it").isEqualTo(LibC.F_UNLCK);
            assertThat(libc.ofdLockHolder(other, 1, 1)).as("another byte is free").isEqualTo(LibC.F_UNLCK);
            assertThat(libc.close(owner)).isZero();
            assertThat(libc.ofdLockHolder(other, 0, 1)).as("closing the holder drops the lock").isEqualTo(LibC.F_UNLCK);
            assertThat(libc.ofdLock(other, LibC.F_WRLCK, 0, 1)).isZero();
            libc.close(other);
        }
    }

    @Test
    void shouldAllocateBlocksAndReportWhyItCannot(@TempDir final Path dir) throws Exception
    {
        final LibC libc = LibC.instance().orElseThrow();
        try (Arena arena = Arena.ofConfined())
        {
            final int fd = libc.open(path(arena, dir.resolve("allocated")), LibC.O_RDWR | LibC.O_CREAT | LibC.O_CLOEXEC, 0600);
            assertThat(libc.posixFallocate(fd, 0, 1 << 20)).isZero();
            assertThat(libc.size(fd)).isEqualTo(1 << 20);
            assertThat(libc.ftruncate(fd, 4096)).isZero();
            assertThat(libc.size(fd)).isEqualTo(4096);
            assertThat(libc.posixFallocate(fd, 0, -1)).isEqualTo(-LibC.EINVAL);
            libc.close(fd);
            assertThat(libc.posixFallocate(fd, 0, 4096)).as("a closed descriptor").isNegative();
        }
    }

    @Test
    void shouldTellWhetherAProcessExists()
    {
        final LibC libc = LibC.instance().orElseThrow();
        assertThat(libc.kill((int)ProcessHandle.current().pid(), 0)).isZero();
        int unused = 4_000_000;
        while (ProcessHandle.of(unused).isPresent())
        {
            unused--;
        }
        assertThat(libc.kill(unused, 0)).isEqualTo(-LibC.ESRCH);
    }
}
