package io.kvtier.nativeaccess.libc;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class LinuxAbiTest
{
    @Test
    void shouldTakeOpenFlagsFromTheArchitecturesOwnRow()
    {
        final LinuxAbi x86 = LinuxAbi.forArch("amd64").orElseThrow();
        final LinuxAbi arm = LinuxAbi.forArch("aarch64").orElseThrow();
        assertThat(x86.oDirect()).isEqualTo(0x4000);
        assertThat(x86.oDirectory()).isEqualTo(0x10000);
        // On aarch64 x86_64's O_DIRECT bit means O_DIRECTORY.
        assertThat(arm.oDirectory()).isEqualTo(x86.oDirect());
        assertThat(arm.oDirect()).isEqualTo(0x10000);
        assertThat(LinuxAbi.forArch("x86_64")).contains(x86);
        assertThat(LinuxAbi.forArch("arm64")).contains(arm);
    }

    @Test
    void shouldRefuseAnArchitectureWithoutARowNamingTheSupportedOnes()
    {
        assertThat(LinuxAbi.forArch("s390x")).isEmpty();
        assertThat(LinuxAbi.unsupportedReason("s390x")).contains("s390x").contains("amd64").contains("aarch64");
    }

    @Test
    void shouldMatchTheFlagsAndTheFlockLayoutOfThisMachinesHeaders(@TempDir final Path dir) throws Exception
    {
        final Path source = dir.resolve("abi.c");
        Files.writeString(source, """
            #define _GNU_SOURCE
            #include <fcntl.h>
            #include <stddef.h>
            #include <stdio.h>
            int main(void) {
                printf("%d %d %d %d %d %zu %zu %zu %zu %zu %zu\\n", O_DIRECT, O_DIRECTORY, O_NOFOLLOW, F_OFD_GETLK, F_OFD_SETLK,
                    sizeof(struct flock), offsetof(struct flock, l_type), offsetof(struct flock, l_whence),
                    offsetof(struct flock, l_start), offsetof(struct flock, l_len), offsetof(struct flock, l_pid));
                return 0;
            }
            """);
        final Path binary = dir.resolve("abi");
        final Process gcc;
        try
        {
            gcc = new ProcessBuilder("gcc", "-o", binary.toString(), source.toString()).redirectErrorStream(true).start();
        }
        catch (final java.io.IOException ex)
        {
            Assumptions.abort("skipped: gcc is not installed (apt-get install gcc) to check the table against this machine's headers");
            return;
        }
        final String compiler = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gcc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Assumptions.assumeTrue(gcc.exitValue() == 0, "skipped: gcc could not build a C program here: " + compiler);
        final Process run = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
        final String[] values = new String(run.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip().split(" ");
        assertThat(run.waitFor(60, TimeUnit.SECONDS)).isTrue();
        final LinuxAbi abi = LinuxAbi.current().orElseThrow();
        assertThat(Integer.parseInt(values[0])).as("O_DIRECT").isEqualTo(abi.oDirect()).isEqualTo(LibC.O_DIRECT);
        assertThat(Integer.parseInt(values[1])).as("O_DIRECTORY").isEqualTo(abi.oDirectory());
        assertThat(Integer.parseInt(values[2])).as("O_NOFOLLOW").isEqualTo(abi.oNofollow());
        assertThat(Integer.parseInt(values[3])).as("F_OFD_GETLK").isEqualTo(LibC.F_OFD_GETLK);
        assertThat(Integer.parseInt(values[4])).as("F_OFD_SETLK").isEqualTo(LibC.F_OFD_SETLK);
        assertThat(Long.parseLong(values[5])).as("sizeof(struct flock)").isEqualTo(LibC.FLOCK_LAYOUT.byteSize());
        final String[] fields = {"l_type", "l_whence", "l_start", "l_len", "l_pid"};
        for (int i = 0; i < fields.length; i++)
        {
            assertThat(Long.parseLong(values[6 + i])).as("offsetof(struct flock, %s)", fields[i])
                .isEqualTo(LibC.FLOCK_LAYOUT.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement(fields[i])));
        }
    }
}
