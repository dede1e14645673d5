package io.kvtier.nativeaccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Shared plumbing for the native fronts: whether native access is enabled, and one place that
 * creates downcall handles (the only restricted calls in the project).
 */
public final class NativeAccess
{
    private static final System.Logger LOG = System.getLogger(NativeAccess.class.getName());

    private NativeAccess()
    {
    }

    /**
     * @return why native access is unusable in this JVM, or empty when it is usable
     */
    public static Optional<String> unavailableReason()
    {
        final Module module = NativeAccess.class.getModule();
        if (!module.isNativeAccessEnabled())
        {
            final String name = module.isNamed() ? module.getName() : "ALL-UNNAMED";
            return Optional.of("native access is not enabled for " + name + "; start the JVM with --enable-native-access=" + name);
        }
        final String os = System.getProperty("os.name", "");
        if (!os.toLowerCase(java.util.Locale.ROOT).contains("linux"))
        {
            return Optional.of("native fronts support Linux only, this is " + os);
        }
        return Optional.empty();
    }

    /** Calls a warm-up makes: enough for the JIT's last tier (measured on the futex call: allocation stops after about 6,000). */
    public static final int WARM_UP_CALLS = 20_000;

    /**
     * Makes a harmless call {@link #WARM_UP_CALLS} times on a daemon thread. A downcall that captures errno allocates a
     * slice of its capture segment each call until the JIT has compiled it, and a call a process makes only now and
     * then (a futex wait between bursts, the engine's poll of its listening socket once a millisecond) is compiled late
     * if ever: warmed up, the steady state's calls allocate nothing, whenever they come.
     *
     * @param name the thread's name
     * @param call one call that neither waits nor changes anything
     */
    public static void warmUp(final String name, final Runnable call)
    {
        Thread.ofPlatform().daemon(true).name(name).start(() ->
        {
            for (int i = 0; i < WARM_UP_CALLS; i++)
            {
                call.run();
            }
        });
    }

    /**
     * Creates a downcall handle, or throws if the symbol is missing.
     *
     * @param lookup     where to find the symbol
     * @param name       the C symbol
     * @param descriptor its signature
     * @param options    linker options (errno capture, variadic position)
     * @return the handle
     * @throws UnsupportedOperationException if the symbol is not found
     */
    @SuppressWarnings("restricted")
    public static MethodHandle downcall(final SymbolLookup lookup, final String name, final FunctionDescriptor descriptor,
                                        final Linker.Option... options)
    {
        final MemorySegment address = lookup.find(name)
            .orElseThrow(() -> new UnsupportedOperationException("symbol " + name + " not found"));
        return Linker.nativeLinker().downcallHandle(address, descriptor, options);
    }

    /**
     * Loads a shared library by name (for example {@code libcudart.so.13}) into the global arena.
     *
     * @param library the library's file name or path
     * @return its symbols
     * @throws IllegalArgumentException if the library cannot be loaded
     */
    @SuppressWarnings("restricted")
    public static SymbolLookup library(final String library)
    {
        return SymbolLookup.libraryLookup(library, Arena.global());
    }

    /**
     * Logs once which implementation a front chose and why.
     *
     * @param front  the capability, for example {@code LibC}
     * @param choice what was chosen
     */
    public static void logChoice(final String front, final String choice)
    {
        LOG.log(System.Logger.Level.DEBUG, "{0}: {1}", front, choice);
    }

    /**
     * Logs that a front is unavailable and what callers fall back to.
     *
     * @param front  the capability
     * @param reason why it is unavailable
     */
    public static void logFallback(final String front, final String reason)
    {
        LOG.log(System.Logger.Level.INFO, "{0} unavailable, falling back: {1}", front, reason);
    }
}
