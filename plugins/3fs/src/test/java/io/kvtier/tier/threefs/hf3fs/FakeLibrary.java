package io.kvtier.tier.threefs.hf3fs;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/** The fake USRBIO library plugins/3fs/hf3fs-fake builds, for tests of the bindings. */
final class FakeLibrary
{
    // Maven runs the tests in the module's directory.
    static final Path PATH = Path.of("hf3fs-fake/build/libhf3fs_api_shared.so").toAbsolutePath();

    private FakeLibrary()
    {
    }

    /** Binds the fake for this JVM, or skips the calling test when it was not built (no gcc). */
    static void bind()
    {
        Assumptions.assumeTrue(Files.isRegularFile(PATH), "skipped: " + PATH + " was not built (plugins/3fs/hf3fs-fake/build.sh needs gcc and make;"
            + " install with: apt-get install gcc make)");
        Hf3fsLibrary.bind(PATH.toString());
    }
}
