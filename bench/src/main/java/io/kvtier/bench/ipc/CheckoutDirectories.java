package io.kvtier.bench.ipc;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds a client's directory in the checkout that benchmark code runs from, for the benchmarks that run a
 * client of another language beside the Java one.
 */
final class CheckoutDirectories
{
    private CheckoutDirectories()
    {
    }

    /**
     * @param code   a class of the running code: the search starts at its jar or classes directory
     * @param dir    the directory wanted, relative to the checkout's root (e.g. {@code clients/c})
     * @param marker a file that marks it, relative to {@code dir}
     * @return {@code dir} in the nearest checkout above the code, else above the working directory, if there is one
     */
    static Optional<Path> find(final Class<?> code, final Path dir, final Path marker)
    {
        try
        {
            final Optional<Path> besideCode = findAbove(Path.of(code.getProtectionDomain().getCodeSource().getLocation().toURI()), dir, marker);
            if (besideCode.isPresent())
            {
                return besideCode;
            }
        }
        catch (final URISyntaxException | SecurityException | UnsupportedOperationException ex)
        {
            // no code source to start from: the working directory is the other place to look
        }
        // The code may come from the local Maven repository (a build of one module): then the checkout is where we run.
        return findAbove(Path.of(""), dir, marker);
    }

    private static Optional<Path> findAbove(final Path start, final Path dir, final Path marker)
    {
        for (Path at = start.toAbsolutePath(); at != null; at = at.getParent())
        {
            final Path found = at.resolve(dir);
            if (Files.isRegularFile(found.resolve(marker)))
            {
                return Optional.of(found);
            }
        }
        return Optional.empty();
    }
}
