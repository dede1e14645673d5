package io.kvtier.engine.pool;

import io.kvtier.nativeaccess.libc.LibC;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code pool.transparent-huge-pages = advise}: the advice is given, and the line the engine logs says
 * whether the kernel's {@code shmem_enabled} lets it have any effect, naming the file and its mode.
 */
class TransparentHugePagesTest
{
    private static final long TWO_MIB = 2L << 20;

    private static String advised(final Path shmemEnabled)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(TWO_MIB, TWO_MIB);
            return TransparentHugePages.advise(region, Path.of("/dev/shm/pool"), shmemEnabled);
        }
    }

    @Test
    void shouldSayTheAdviceHasNoEffectWhenShmemEnabledSaysNeverOrDeny(@TempDir final Path dir) throws Exception
    {
        Assumptions.assumeTrue(LibC.instance().isPresent(), "skipped: madvise needs native access");
        final Path file = dir.resolve("shmem_enabled");
        Files.writeString(file, "always within_size advise [never] deny force\n");
        final String never = advised(file);
        Assumptions.assumeFalse(never.contains("madvise(MADV_HUGEPAGE) on the pool"), "skipped: this kernel refuses the advice: " + never);
        assertThat(never).contains("has no effect", file + " says never", "hugetlbfs");
        Files.writeString(file, "always within_size advise never [deny] force\n");
        assertThat(advised(file)).contains("has no effect", "says deny");
    }

    @Test
    void shouldSayTheAdviceIsGivenWhenShmemEnabledAllowsIt(@TempDir final Path dir) throws Exception
    {
        Assumptions.assumeTrue(LibC.instance().isPresent(), "skipped: madvise needs native access");
        final Path file = dir.resolve("shmem_enabled");
        Files.writeString(file, "always within_size [advise] never deny force\n");
        final String advise = advised(file);
        Assumptions.assumeFalse(advise.contains("madvise(MADV_HUGEPAGE) on the pool"), "skipped: this kernel refuses the advice: " + advise);
        assertThat(advise).doesNotContain("no effect").contains("is advised (MADV_HUGEPAGE)", "says advise");
        assertThat(advised(dir.resolve("missing"))).contains("cannot be read");
    }

    @Test
    void shouldReadTheSelectedModeOfShmemEnabled(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve("shmem_enabled");
        Files.writeString(file, "always [within_size] advise never deny force\n");
        assertThat(TransparentHugePages.selected(file)).isEqualTo("within_size");
        Files.writeString(file, "nonsense\n");
        assertThat(TransparentHugePages.selected(file)).isNull();
        assertThat(TransparentHugePages.selected(dir.resolve("missing"))).isNull();
    }
}
