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

import static org.assertj.core.api.Assertions.assertThat;

class UnixSocketsTest
{
    @TempDir
    Path directory;

    private UnixSockets sockets;
    private FileDescriptors files;

    @BeforeEach
    void front()
    {
        Assumptions.assumeTrue(UnixSockets.instance().isPresent(), () -> UnixSockets.unavailableReason().orElse(""));
        sockets = UnixSockets.instance().orElseThrow();
        files = FileDescriptors.instance().orElseThrow();
    }

    @Test
    void shouldPassDescriptorsWithTheFirstByteAndNameThePeer() throws Exception
    {
        final String path = directory.resolve("s").toString();
        final int listening = sockets.listen(path, 4);
        assertThat(listening).as("listen").isNotNegative();
        assertThat(sockets.accept(listening)).as("nobody waits").isEqualTo(-LibC.EAGAIN);
        final int client = sockets.connect(path);
        assertThat(client).as("connect").isNotNegative();
        final int server = sockets.accept(listening);
        assertThat(server).as("accept").isNotNegative();
        try (Arena arena = Arena.ofConfined())
        {
            final int[] credentials = new int[3];
            assertThat(sockets.peerCredentials(server, credentials)).isZero();
            assertThat(credentials[0]).as("pid").isEqualTo((int)ProcessHandle.current().pid());
            assertThat(credentials[1]).as("uid").isEqualTo((Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
            assertThat(credentials[2]).as("gid").isEqualTo((Integer)Files.getAttribute(Path.of("/proc/self"), "unix:gid"));

            final int memory = files.memoryFile("kvtier-test", 4096);
            assertThat(memory).isNotNegative();
            final MemorySegment mine = files.map(memory, 4096, arena);
            mine.set(ValueLayout.JAVA_LONG, 8, 0x1234_5678_9ABCL);

            final MemorySegment bytes = arena.allocateFrom("hello");
            assertThat(sockets.send(server, bytes, 5, new int[] {memory}, 1)).isEqualTo(5);
            files.close(memory);

            final MemorySegment in = arena.allocate(16);
            final int[] descriptors = new int[4];
            final int[] received = new int[2];
            assertThat(sockets.receive(client, in, 16, descriptors, received, true)).isEqualTo(5);
            assertThat(in.getString(0)).startsWith("hello");
            assertThat(received[0]).as("descriptors received").isEqualTo(1);
            assertThat(received[1]).as("none dropped").isZero();
            final MemorySegment theirs = files.map(descriptors[0], 4096, arena);
            assertThat(theirs.get(ValueLayout.JAVA_LONG, 8)).as("the same memory").isEqualTo(0x1234_5678_9ABCL);
            assertThat(files.accessMode(descriptors[0])).isEqualTo(LibC.O_RDWR);
            files.close(descriptors[0]);

            assertThat(sockets.receive(server, in, 16, descriptors, received, false)).as("nothing came").isEqualTo(-LibC.EAGAIN);
            final MemorySegment pollfd = arena.allocate(UnixSockets.POLLFD_LAYOUT);
            pollfd.set(ValueLayout.JAVA_INT, UnixSockets.POLLFD_FD_OFFSET, server);
            pollfd.set(ValueLayout.JAVA_SHORT, UnixSockets.POLLFD_EVENTS_OFFSET, (short)(UnixSockets.POLLIN | UnixSockets.POLLRDHUP));
            assertThat(sockets.poll(pollfd, 1, 0)).as("quiet").isZero();
            sockets.close(client);
            assertThat(sockets.poll(pollfd, 1, 1000)).isEqualTo(1);
            assertThat(pollfd.get(ValueLayout.JAVA_SHORT, UnixSockets.POLLFD_REVENTS_OFFSET) & UnixSockets.POLLRDHUP).isNotZero();
            assertThat(sockets.receive(server, in, 16, descriptors, received, false)).as("end of stream").isZero();
        }
        finally
        {
            sockets.close(server);
            sockets.close(listening);
        }
    }

    @Test
    void shouldRefuseAPathLongerThanASocketAddressHolds()
    {
        assertThat(sockets.listen("/" + "x".repeat(UnixSockets.MAX_PATH_BYTES), 1)).isEqualTo(-36);
        assertThat(sockets.connect(directory.resolve("nobody-listens").toString())).isEqualTo(-LibC.ENOENT);
    }
}
