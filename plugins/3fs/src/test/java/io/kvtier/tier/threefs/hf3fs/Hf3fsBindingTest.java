package io.kvtier.tier.threefs.hf3fs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_cqe;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_ior;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_iov;
import io.kvtier.tier.threefs.hf3fs.bindings.timespec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_dereg_fd;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_extract_mount_point;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iorcreate4;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iordestroy;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovcreate;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovdestroy;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_prep_io;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_reg_fd;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_submit_ios;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_wait_for_ios;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bindings against the fake library (plugins/3fs/hf3fs-fake): the return conventions the tier relies on
 * (a positive errno from hf3fs_reg_fd, -errno from the rest) and a write and read through the rings.
 */
class Hf3fsBindingTest
{
    @Test
    void shouldNameTheLibraryAndTheMissingSymbolsWhenChecking(@TempDir final Path dir)
    {
        assertThat(Hf3fsLibrary.check(dir.resolve("absent.so").toString())).get().asString()
            .contains("absent.so").contains("does not exist");
        final Path incomplete = FakeLibrary.PATH.resolveSibling("libhf3fs_fake_incomplete.so");
        if (Files.exists(incomplete))
        {
            assertThat(Hf3fsLibrary.check(incomplete.toString())).get().asString()
                .contains(incomplete.toString()).contains("lacks hf3fs_wait_for_ios").doesNotContain("hf3fs_prep_io");
        }
        if (Files.exists(FakeLibrary.PATH))
        {
            assertThat(Hf3fsLibrary.check(FakeLibrary.PATH.toString())).isEmpty();
        }
    }

    @Test
    void shouldFollowTheHeadersReturnConventions(@TempDir final Path dir) throws Exception
    {
        FakeLibrary.bind();
        final LibC libc = LibC.instance().orElseThrow();
        final Path mount = dir.resolve("mnt");
        Files.createDirectories(mount.resolve("3fs-virt"));
        Files.createDirectories(dir.resolve("elsewhere"));
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment out = arena.allocate(4096);
            final String mountText = mount.toRealPath().toString();
            assertThat(hf3fs_extract_mount_point(out, 4096, arena.allocateFrom(mount.resolve("3fs-virt").toString())))
                .isEqualTo(mountText.length() + 1);
            assertThat(out.getString(0)).isEqualTo(mountText);
            assertThat(hf3fs_extract_mount_point(out, 4096, arena.allocateFrom(dir.resolve("elsewhere").toString()))).isEqualTo(-1);

            final int foreign = libc.open(arena.allocateFrom(dir.resolve("elsewhere/f").toString()), LibC.O_RDWR | LibC.O_CREAT, 0644);
            assertThat(hf3fs_reg_fd(foreign, 0)).as("a positive errno: EBADF").isEqualTo(9);
            libc.close(foreign);

            final int fd = libc.open(arena.allocateFrom(mount.resolve("page").toString()), LibC.O_RDWR | LibC.O_CREAT, 0644);
            final int registered = hf3fs_reg_fd(fd, 0);
            assertThat(registered).as("-dupfd").isLessThanOrEqualTo(0);
            assertThat(hf3fs_reg_fd(fd, 0)).as("registered twice: EINVAL").isEqualTo(22);

            final MemorySegment iov = hf3fs_iov.allocate(arena);
            assertThat(hf3fs_iovcreate(iov, arena.allocateFrom(mountText), 8192, 0, -1)).isZero();
            final MemorySegment base = hf3fs_iov.base(iov).reinterpret(8192);
            final MemorySegment writeRing = hf3fs_ior.allocate(arena);
            final MemorySegment readRing = hf3fs_ior.allocate(arena);
            assertThat(hf3fs_iorcreate4(writeRing, arena.allocateFrom(mountText), 4, false, 0, 0, -1, 0)).isZero();
            assertThat(hf3fs_iorcreate4(readRing, arena.allocateFrom(mountText), 4, true, 0, 0, -1, 0)).isZero();
            final MemorySegment cqes = hf3fs_cqe.allocateArray(4, arena);
            final MemorySegment deadline = timespec.allocate(arena);
            final Instant at = Instant.now().plusSeconds(10);
            timespec.tv_sec(deadline, at.getEpochSecond());
            timespec.tv_nsec(deadline, at.getNano());

            base.asSlice(0, 4096).fill((byte)0x5A);
            assertThat(hf3fs_prep_io(readRing, iov, false, base, fd, 0, 4096, MemorySegment.NULL)).as("direction differs from the ring's")
                .isEqualTo(-22);
            assertThat(hf3fs_prep_io(writeRing, iov, false, base, fd, 0, 4096, MemorySegment.ofAddress(7))).isGreaterThanOrEqualTo(0);
            assertThat(hf3fs_submit_ios(writeRing)).isZero();
            assertThat(hf3fs_wait_for_ios(writeRing, cqes, 4, 1, deadline)).isEqualTo(1);
            assertThat(hf3fs_cqe.result(cqes)).isEqualTo(4096);
            assertThat(hf3fs_cqe.userdata(cqes).address()).isEqualTo(7);

            assertThat(hf3fs_prep_io(readRing, iov, true, base.asSlice(4096), registered, 0, 4096, MemorySegment.NULL))
                .as("reg_fd's -dupfd works as the fd").isGreaterThanOrEqualTo(0);
            assertThat(hf3fs_submit_ios(readRing)).isZero();
            assertThat(hf3fs_wait_for_ios(readRing, cqes, 4, 1, deadline)).isEqualTo(1);
            assertThat(hf3fs_cqe.result(cqes)).isEqualTo(4096);
            assertThat(base.get(ValueLayout.JAVA_BYTE, 4096 + 4095)).isEqualTo((byte)0x5A);

            hf3fs_dereg_fd(fd);
            libc.close(fd);
            hf3fs_iordestroy(writeRing);
            hf3fs_iordestroy(readRing);
            hf3fs_iovdestroy(iov);
        }
    }
}
