package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.abi.AbiProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemoryLayout;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layouts and constants {@link UnixSockets} and {@link FileDescriptors} declare, compared with
 * what this machine's C compiler and headers say.
 */
class DescriptorAbiTest
{
    @TempDir
    Path directory;

    @Test
    void shouldMatchTheHeadersOfThisMachine() throws Exception
    {
        final Map<String, Long> c = AbiProbe.run(directory, "descriptors", """
            #define _GNU_SOURCE
            #include <fcntl.h>
            #include <poll.h>
            #include <stddef.h>
            #include <stdio.h>
            #include <sys/mman.h>
            #include <sys/socket.h>
            #include <sys/stat.h>
            #include <sys/syscall.h>
            #include <sys/un.h>
            #include <linux/openat2.h>
            #define P(name, value) printf("%s %ld\\n", name, (long)(value))
            int main(void) {
                P("sockaddr_un", sizeof(struct sockaddr_un)); P("sun_path", offsetof(struct sockaddr_un, sun_path));
                P("ucred", sizeof(struct ucred)); P("ucred_uid", offsetof(struct ucred, uid)); P("ucred_gid", offsetof(struct ucred, gid));
                P("iovec", sizeof(struct iovec));
                P("msghdr", sizeof(struct msghdr)); P("msg_iov", offsetof(struct msghdr, msg_iov));
                P("msg_iovlen", offsetof(struct msghdr, msg_iovlen)); P("msg_control", offsetof(struct msghdr, msg_control));
                P("msg_controllen", offsetof(struct msghdr, msg_controllen)); P("msg_flags", offsetof(struct msghdr, msg_flags));
                P("cmsg_level", offsetof(struct cmsghdr, cmsg_level)); P("cmsg_type", offsetof(struct cmsghdr, cmsg_type));
                P("cmsg_data", CMSG_LEN(0)); P("cmsg_space_64", CMSG_SPACE(64 * sizeof(int)));
                P("pollfd", sizeof(struct pollfd)); P("pollfd_events", offsetof(struct pollfd, events));
                P("pollfd_revents", offsetof(struct pollfd, revents));
                P("POLLIN", POLLIN); P("POLLERR", POLLERR); P("POLLHUP", POLLHUP); P("POLLNVAL", POLLNVAL); P("POLLRDHUP", POLLRDHUP);
                P("AF_UNIX", AF_UNIX); P("SOCK_STREAM", SOCK_STREAM); P("SOCK_NONBLOCK", SOCK_NONBLOCK); P("SOCK_CLOEXEC", SOCK_CLOEXEC);
                P("SOL_SOCKET", SOL_SOCKET); P("SCM_RIGHTS", SCM_RIGHTS); P("SO_PEERCRED", SO_PEERCRED);
                P("MSG_DONTWAIT", MSG_DONTWAIT); P("MSG_NOSIGNAL", MSG_NOSIGNAL); P("MSG_CTRUNC", MSG_CTRUNC); P("MSG_CMSG_CLOEXEC", MSG_CMSG_CLOEXEC);
                P("open_how", sizeof(struct open_how)); P("open_how_resolve", offsetof(struct open_how, resolve));
                P("RESOLVE_NO_SYMLINKS", RESOLVE_NO_SYMLINKS); P("RESOLVE_NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS);
                P("SYS_openat2", SYS_openat2); P("O_PATH", O_PATH); P("O_NONBLOCK", O_NONBLOCK); P("O_NOCTTY", O_NOCTTY);
                P("AT_FDCWD", AT_FDCWD); P("AT_EMPTY_PATH", AT_EMPTY_PATH); P("STATX_BASIC_STATS", STATX_BASIC_STATS);
                P("statx", sizeof(struct statx)); P("stx_uid", offsetof(struct statx, stx_uid)); P("stx_gid", offsetof(struct statx, stx_gid));
                P("stx_mode", offsetof(struct statx, stx_mode)); P("stx_ino", offsetof(struct statx, stx_ino));
                P("stx_size", offsetof(struct statx, stx_size)); P("stx_dev_major", offsetof(struct statx, stx_dev_major));
                P("stx_dev_minor", offsetof(struct statx, stx_dev_minor));
                P("MFD_CLOEXEC", MFD_CLOEXEC); P("MFD_ALLOW_SEALING", MFD_ALLOW_SEALING); P("F_GETFL", F_GETFL); P("F_ADD_SEALS", F_ADD_SEALS);
                P("F_SEAL_SEAL", F_SEAL_SEAL); P("F_SEAL_SHRINK", F_SEAL_SHRINK); P("F_SEAL_GROW", F_SEAL_GROW);
                P("PROT_READ", PROT_READ); P("PROT_WRITE", PROT_WRITE); P("MAP_SHARED", MAP_SHARED);
                return 0;
            }
            """);
        assertThat(c.get("sockaddr_un")).isEqualTo(UnixSockets.SOCKADDR_UN_LAYOUT.byteSize());
        assertThat(c.get("sun_path")).isEqualTo(2L);
        assertThat(c.get("ucred")).isEqualTo(UnixSockets.UCRED_LAYOUT.byteSize());
        assertThat(c.get("ucred_uid")).isEqualTo(offset(UnixSockets.UCRED_LAYOUT, "uid"));
        assertThat(c.get("ucred_gid")).isEqualTo(offset(UnixSockets.UCRED_LAYOUT, "gid"));
        assertThat(c.get("iovec")).isEqualTo(UnixSockets.IOVEC_LAYOUT.byteSize());
        assertThat(c.get("msghdr")).isEqualTo(UnixSockets.MSGHDR_LAYOUT.byteSize());
        for (final String field : new String[] {"msg_iov", "msg_iovlen", "msg_control", "msg_controllen", "msg_flags"})
        {
            assertThat(c.get(field)).as(field).isEqualTo(offset(UnixSockets.MSGHDR_LAYOUT, field));
        }
        assertThat(c.get("cmsg_level")).isEqualTo(UnixSockets.CMSG_LEVEL_OFFSET);
        assertThat(c.get("cmsg_type")).isEqualTo(UnixSockets.CMSG_TYPE_OFFSET);
        assertThat(c.get("cmsg_data")).isEqualTo(UnixSockets.CMSG_DATA_OFFSET);
        assertThat(c.get("cmsg_space_64")).isEqualTo(UnixSockets.CONTROL_SPACE);
        assertThat(c.get("pollfd")).isEqualTo(UnixSockets.POLLFD_LAYOUT.byteSize());
        assertThat(c.get("pollfd_events")).isEqualTo(UnixSockets.POLLFD_EVENTS_OFFSET);
        assertThat(c.get("pollfd_revents")).isEqualTo(UnixSockets.POLLFD_REVENTS_OFFSET);
        assertThat(c.get("POLLIN")).isEqualTo((long)UnixSockets.POLLIN);
        assertThat(c.get("POLLERR")).isEqualTo((long)UnixSockets.POLLERR);
        assertThat(c.get("POLLHUP")).isEqualTo((long)UnixSockets.POLLHUP);
        assertThat(c.get("POLLNVAL")).isEqualTo((long)UnixSockets.POLLNVAL);
        assertThat(c.get("POLLRDHUP")).isEqualTo((long)UnixSockets.POLLRDHUP);
        assertThat(c.get("AF_UNIX")).isEqualTo((long)UnixSockets.AF_UNIX);
        assertThat(c.get("SOCK_STREAM")).isEqualTo((long)UnixSockets.SOCK_STREAM);
        assertThat(c.get("SOCK_NONBLOCK")).isEqualTo((long)UnixSockets.SOCK_NONBLOCK);
        assertThat(c.get("SOCK_CLOEXEC")).isEqualTo((long)UnixSockets.SOCK_CLOEXEC);
        assertThat(c.get("SOL_SOCKET")).isEqualTo((long)UnixSockets.SOL_SOCKET);
        assertThat(c.get("SCM_RIGHTS")).isEqualTo((long)UnixSockets.SCM_RIGHTS);
        assertThat(c.get("SO_PEERCRED")).isEqualTo((long)LinuxAbi.current().orElseThrow().soPeercred());
        assertThat(c.get("MSG_DONTWAIT")).isEqualTo((long)UnixSockets.MSG_DONTWAIT);
        assertThat(c.get("MSG_NOSIGNAL")).isEqualTo((long)UnixSockets.MSG_NOSIGNAL);
        assertThat(c.get("MSG_CTRUNC")).isEqualTo((long)UnixSockets.MSG_CTRUNC);
        assertThat(c.get("MSG_CMSG_CLOEXEC")).isEqualTo((long)UnixSockets.MSG_CMSG_CLOEXEC);
        assertThat(c.get("open_how")).isEqualTo(FileDescriptors.OPEN_HOW_LAYOUT.byteSize());
        assertThat(c.get("open_how_resolve")).isEqualTo(offset(FileDescriptors.OPEN_HOW_LAYOUT, "resolve"));
        assertThat(c.get("RESOLVE_NO_SYMLINKS")).isEqualTo((long)FileDescriptors.RESOLVE_NO_SYMLINKS);
        assertThat(c.get("RESOLVE_NO_MAGICLINKS")).isEqualTo((long)FileDescriptors.RESOLVE_NO_MAGICLINKS);
        assertThat(c.get("SYS_openat2")).isEqualTo(FileDescriptors.SYS_OPENAT2);
        assertThat(c.get("O_PATH")).isEqualTo((long)FileDescriptors.O_PATH);
        assertThat(c.get("O_NONBLOCK")).isEqualTo((long)FileDescriptors.O_NONBLOCK);
        assertThat(c.get("O_NOCTTY")).isEqualTo((long)FileDescriptors.O_NOCTTY);
        assertThat(c.get("AT_FDCWD")).isEqualTo((long)FileDescriptors.AT_FDCWD);
        assertThat(c.get("AT_EMPTY_PATH")).isEqualTo((long)FileDescriptors.AT_EMPTY_PATH);
        assertThat(c.get("STATX_BASIC_STATS")).isEqualTo((long)FileDescriptors.STATX_BASIC_STATS);
        assertThat(c.get("statx")).isEqualTo(FileDescriptors.STATX_LENGTH);
        assertThat(c.get("stx_uid")).isEqualTo(FileDescriptors.STX_UID_OFFSET);
        assertThat(c.get("stx_gid")).isEqualTo(FileDescriptors.STX_GID_OFFSET);
        assertThat(c.get("stx_mode")).isEqualTo(FileDescriptors.STX_MODE_OFFSET);
        assertThat(c.get("stx_ino")).isEqualTo(FileDescriptors.STX_INO_OFFSET);
        assertThat(c.get("stx_size")).isEqualTo(FileDescriptors.STX_SIZE_OFFSET);
        assertThat(c.get("stx_dev_major")).isEqualTo(FileDescriptors.STX_DEV_MAJOR_OFFSET);
        assertThat(c.get("stx_dev_minor")).isEqualTo(FileDescriptors.STX_DEV_MINOR_OFFSET);
        assertThat(c.get("MFD_CLOEXEC")).isEqualTo((long)FileDescriptors.MFD_CLOEXEC);
        assertThat(c.get("MFD_ALLOW_SEALING")).isEqualTo((long)FileDescriptors.MFD_ALLOW_SEALING);
        assertThat(c.get("F_GETFL")).isEqualTo((long)FileDescriptors.F_GETFL);
        assertThat(c.get("F_ADD_SEALS")).isEqualTo((long)FileDescriptors.F_ADD_SEALS);
        assertThat(c.get("F_SEAL_SEAL")).isEqualTo((long)FileDescriptors.F_SEAL_SEAL);
        assertThat(c.get("F_SEAL_SHRINK")).isEqualTo((long)FileDescriptors.F_SEAL_SHRINK);
        assertThat(c.get("F_SEAL_GROW")).isEqualTo((long)FileDescriptors.F_SEAL_GROW);
        assertThat(c.get("PROT_READ")).isEqualTo((long)FileDescriptors.PROT_READ);
        assertThat(c.get("PROT_WRITE")).isEqualTo((long)FileDescriptors.PROT_WRITE);
        assertThat(c.get("MAP_SHARED")).isEqualTo((long)FileDescriptors.MAP_SHARED);
    }

    private static long offset(final java.lang.foreign.StructLayout layout, final String field)
    {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
