package io.kvtier.tier.threefs.hf3fs;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds, checks and binds 3FS's USRBIO client library ({@value #SONAME}), which kvtier never bundles.
 *
 * <p>Unlike libcudart, which is looked for once at class load, the library is chosen by whoever starts a 3FS
 * tier (its {@code lib} setting, else {@value #LIBRARY_ENV_NAME}, else the dynamic loader's search for
 * {@value #SONAME}). {@link #check} loads a candidate into an arena of its own and reports every missing
 * function without binding anything, so a wrong library fails a tier's start with a message naming it and
 * the missing symbols. {@link #bind} then makes it the process's library: the bindings in {@code bindings}
 * resolve their functions through {@link #bound()} on first use. One process binds one library, as a 3FS
 * client install has one; a second tier naming another is refused, since the two would disagree on
 * registered file descriptors and shared memory.
 */
public final class Hf3fsLibrary
{
    /** The real library's file name, as 3FS's build installs it. */
    public static final String SONAME = "libhf3fs_api_shared.so";
    /** Environment variable naming the library, when a tier does not name one. */
    public static final String LIBRARY_ENV_NAME = "KVTIER_3FS_LIB";

    private static final Object LOCK = new Object();
    private static volatile SymbolLookup boundLookup;
    private static volatile String boundLibrary;

    private Hf3fsLibrary()
    {
    }

    /**
     * Checks that a library loads and exports every function of {@link hf3fs_usrbio_h#FUNCTIONS}, without
     * binding it. The check's own handle of the library is closed again (the loader keeps it mapped while
     * a bound handle holds it).
     *
     * @param library a path, or a bare file name for the dynamic loader to search
     * @return empty when usable, else why not: the library and what was looked for
     */
    @SuppressWarnings("restricted")
    public static Optional<String> check(final String library)
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            return denied;
        }
        if (library.contains("/") && !Files.isRegularFile(Path.of(library)))
        {
            return Optional.of("the USRBIO library " + library + " does not exist");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final SymbolLookup lookup;
            try
            {
                lookup = SymbolLookup.libraryLookup(library, arena);
            }
            catch (final IllegalArgumentException ex)
            {
                return Optional.of("the USRBIO library " + library + " could not be loaded: " + ex.getMessage()
                    + (library.contains("/") ? "" : " (looked for by the dynamic loader: ld.so.cache, LD_LIBRARY_PATH)"));
            }
            final List<String> missing = new ArrayList<>();
            for (final String function : hf3fs_usrbio_h.FUNCTIONS)
            {
                if (lookup.find(function).isEmpty())
                {
                    missing.add(function);
                }
            }
            if (!missing.isEmpty())
            {
                return Optional.of(library + " is not a 3FS USRBIO library: it lacks " + String.join(", ", missing));
            }
        }
        return Optional.empty();
    }

    /**
     * Makes a checked library the process's USRBIO library. Binding the one already bound again is a no-op.
     *
     * @param library a library {@link #check} accepted
     * @throws IllegalStateException if another library is bound already
     */
    @SuppressWarnings("restricted")
    public static void bind(final String library)
    {
        synchronized (LOCK)
        {
            if (boundLibrary != null)
            {
                if (!boundLibrary.equals(library))
                {
                    throw new IllegalStateException("this process already uses the USRBIO library " + boundLibrary
                        + "; one process binds one, so " + library + " cannot be used as well");
                }
                return;
            }
            boundLookup = NativeAccess.library(library);
            boundLibrary = library;
            NativeAccess.logChoice("3FS USRBIO", library);
        }
    }

    /** @return the bound library's symbols, or empty before {@link #bind} */
    public static Optional<SymbolLookup> bound()
    {
        return Optional.ofNullable(boundLookup);
    }

    /** @return the bound library, or empty before {@link #bind} */
    public static Optional<String> boundLibrary()
    {
        return Optional.ofNullable(boundLibrary);
    }

    /** @return which library is bound, or that none is, for messages */
    public static String description()
    {
        final String library = boundLibrary;
        return library != null ? "USRBIO library " + library : "no USRBIO library bound yet";
    }
}
