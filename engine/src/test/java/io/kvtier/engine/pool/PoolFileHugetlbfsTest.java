package io.kvtier.engine.pool;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A pool on hugetlbfs in a JVM without native access: the file cannot be zero-filled with write(2) there (hugetlbfs
 * refuses it), so the error names hugetlbfs and native access, not the free space it used to blame. Needs root, to
 * mount a hugetlbfs of its own (no huge pages need be reserved).
 */
class PoolFileHugetlbfsTest
{
    @Test
    void shouldSayAPoolOnHugetlbfsNeedsNativeAccessWhenTheJvmHasNone(@TempDir final Path root) throws Exception
    {
        final Path mount = Files.createDirectories(root.resolve("huge"));
        final Process mounting = new ProcessBuilder("mount", "-t", "hugetlbfs", "none", mount.toString()).redirectErrorStream(true).start();
        final String said = new String(mounting.getInputStream().readAllBytes()).trim();
        assumeTrue(mounting.waitFor() == 0, "mounting a hugetlbfs needs root and a kernel with it (mount said: " + said + ")");
        try
        {
            final Path pool = mount.resolve("kvtier-pool");

            assertThatThrownBy(() -> PoolFile.prepare(pool, 4L << 20, null, 4L << 20, Optional.empty()))
                .isInstanceOf(PoolPathException.class)
                .hasMessageContaining("pool.path = \"" + pool + "\" is on hugetlbfs")
                .hasMessageContaining("needs native access")
                .hasMessageContaining("--enable-native-access=io.kvtier.nativeaccess")
                .hasMessageNotContaining("Lower pool.size");
        }
        finally
        {
            new ProcessBuilder("umount", "-l", mount.toString()).redirectErrorStream(true).start().waitFor();
        }
    }
}
