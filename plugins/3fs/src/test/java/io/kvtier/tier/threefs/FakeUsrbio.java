package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.NativeAccess;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The fake USRBIO library plugins/3fs/hf3fs-fake builds (see its hf3fs_fake.h): where it is, how to make a
 * directory look like a 3FS mount to it, and its fault switches, bound here for the tests only.
 */
final class FakeUsrbio
{
    static final int EIO = 1;
    static final int DELAY = 2;
    static final int SHORT = 3;
    static final int PREP_EAGAIN = 4;
    static final int READ = 1;
    static final int WRITE = 2;
    static final int STAT_COMPLETED = 0;
    static final int STAT_REGISTERED = 1;
    static final int STAT_RINGS = 2;
    static final int STAT_WRAPPED = 4;

    private static final String PROPERTY = "kvtier.3fs.fake-lib";
    private static final String KIT_MOUNT_PROPERTY = "kvtier.3fs.kit-mount";

    private FakeUsrbio()
    {
    }

    /** @return the fake library's path, which surefire passes in {@value #PROPERTY} */
    static Path library()
    {
        final String configured = System.getProperty(PROPERTY);
        return configured != null ? Path.of(configured) : Path.of("../../plugins/3fs/hf3fs-fake/build/libhf3fs_api_shared.so").toAbsolutePath().normalize();
    }

    /** @return the build's library that lacks hf3fs_wait_for_ios */
    static Path incompleteLibrary()
    {
        return library().resolveSibling("libhf3fs_fake_incomplete.so");
    }

    /** Skips the calling test when the fake was not built. */
    static void assumeBuilt()
    {
        Assumptions.assumeTrue(Files.isRegularFile(library()), "skipped: the fake USRBIO library " + library() + " was not built"
            + " (plugins/3fs/hf3fs-fake/build.sh needs gcc and make; install with: apt-get install gcc make)");
    }

    /**
     * @param root a scratch directory
     * @return where a contract test puts its pages: a fresh directory under {@value #KIT_MOUNT_PROPERTY} when it
     *         names a real 3FS mount, else {@link #mount}'s fake one
     */
    static Path pageDirectory(final Path root)
    {
        final String real = System.getProperty(KIT_MOUNT_PROPERTY, "");
        if (real.isBlank())
        {
            return mount(root);
        }
        try
        {
            // One directory per scratch directory, so tests that reopen a scratch directory find their pages.
            return Files.createDirectories(Path.of(real, "kit-" + Integer.toHexString(root.toAbsolutePath().toString().hashCode())));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Makes {@code root/mnt} a mount to the fake (a {@code 3fs-virt} directory in it) and returns a page directory
     * on it; the rest of {@code root} stays off the mount.
     *
     * @param root a scratch directory
     * @return {@code root/mnt/kv}, created
     */
    static Path mount(final Path root)
    {
        try
        {
            Files.createDirectories(root.resolve("mnt/3fs-virt"));
            return Files.createDirectories(root.resolve("mnt/kv"));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static final class Controls
    {
        static final SymbolLookup LOOKUP = NativeAccess.library(library().toString());
        static final MethodHandle INJECT = NativeAccess.downcall(LOOKUP, "hf3fs_fake_inject",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        static final MethodHandle RESET = NativeAccess.downcall(LOOKUP, "hf3fs_fake_reset", FunctionDescriptor.ofVoid());
        static final MethodHandle STAT = NativeAccess.downcall(LOOKUP, "hf3fs_fake_stat", FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    /**
     * The next {@code count} I/Os in {@code direction} get fault {@code kind}.
     *
     * @param kind      EIO, DELAY, SHORT or PREP_EAGAIN
     * @param direction READ or WRITE
     * @param count     how many I/Os
     * @param delayMs   for DELAY: how long after the submit the I/O completes
     */
    static void inject(final int kind, final int direction, final int count, final long delayMs)
    {
        try
        {
            final int rc = (int)Controls.INJECT.invokeExact(kind, direction, count, delayMs);
            if (rc != 0)
            {
                throw new IllegalArgumentException("hf3fs_fake_inject refused: " + rc);
            }
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException(t);
        }
    }

    /** @return whether the library under test is the fake, with its fault switches (not a real 3FS client library) */
    static boolean isFake()
    {
        return Files.isRegularFile(library()) && NativeAccess.library(library().toString()).find("hf3fs_fake_reset").isPresent();
    }

    /** Clears every fault; nothing to clear when the library is a real one. */
    static void reset()
    {
        if (!isFake())
        {
            return;
        }
        try
        {
            Controls.RESET.invokeExact();
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException(t);
        }
    }

    /**
     * @param which STAT_REGISTERED, STAT_RINGS or STAT_WRAPPED
     * @return the counter
     */
    static long stat(final int which)
    {
        try
        {
            return (long)Controls.STAT.invokeExact(which);
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException(t);
        }
    }
    /**
     * Removes the shared memory of iovs that processes killed by a test left behind: the fake links each
     * iov's /dev/shm file from {@code <mount>/3fs-virt/iovs/<id>} and removes both when the iov is destroyed,
     * which a process killed with SIGKILL never does. Only files in /dev/shm linked from a mount under
     * {@code root} are removed, so a real mount's iovs are never touched.
     *
     * @param root a directory holding fake mounts (a test's scratch root)
     * @return how many files were removed
     * @throws IOException when the tree cannot be walked
     */
    static int removeIovsLeftUnder(final Path root) throws IOException
    {
        if (!Files.isDirectory(root))
        {
            return 0;
        }
        final java.util.List<Path> links;
        try (java.util.stream.Stream<Path> walk = Files.walk(root))
        {
            links = walk.filter(path -> path.getParent() != null && path.getParent().endsWith(Path.of("3fs-virt", "iovs"))
                && Files.isSymbolicLink(path)).toList();
        }
        int removed = 0;
        for (final Path link : links)
        {
            final Path target = Files.readSymbolicLink(link);
            if (target.getParent() != null && target.getParent().equals(Path.of("/dev/shm"))
                && target.getFileName().toString().startsWith("hf3fs-fake-iov-") && Files.deleteIfExists(target))
            {
                removed++;
            }
        }
        return removed;
    }
}
