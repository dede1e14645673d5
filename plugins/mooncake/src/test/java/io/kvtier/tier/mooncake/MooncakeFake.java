package io.kvtier.tier.mooncake;

import io.kvtier.nativeaccess.NativeAccess;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The fault switches of the project's Mooncake test double (plugins/mooncake/fake, see its
 * {@code mooncake_fake.h}), bound for the tests only. They act on the library this process loaded, so
 * on every client of this JVM; tests arm them right before the call they aim at and {@link #reset} after.
 */
final class MooncakeFake
{
    static final int OP_ANY = 0;
    static final int OP_PUT = 1;
    static final int OP_GET = 2;
    static final int OP_EXIST = 3;
    static final int OP_REMOVE = 4;
    static final int OP_SETUP = 5;
    static final int OP_UNMOUNT = 6;

    static final int FAIL = 1;
    static final int DELAY = 2;
    static final int SHORT = 3;
    static final int CORRUPT = 4;
    static final int UNREACHABLE = 5;

    private MooncakeFake()
    {
    }

    private static final class Controls
    {
        static final SymbolLookup LOOKUP = NativeAccess.library(MooncakeTestSupport.library().toString());
        static final MethodHandle INJECT = NativeAccess.downcall(LOOKUP, "mooncake_fake_inject", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        static final MethodHandle RESET = NativeAccess.downcall(LOOKUP, "mooncake_fake_reset", FunctionDescriptor.ofVoid());
        static final MethodHandle MET = NativeAccess.downcall(LOOKUP, "mooncake_fake_faults_met", FunctionDescriptor.of(ValueLayout.JAVA_LONG));
    }

    /**
     * Of the next operations of kind {@code op}, {@code skip} pass, then {@code count} get fault {@code kind}.
     *
     * @param op    OP_PUT, OP_GET, OP_EXIST, OP_REMOVE, OP_SETUP, OP_UNMOUNT (a destroy; never OP_ANY's) or OP_ANY (a batch counts one per key)
     * @param kind  FAIL, DELAY, SHORT, CORRUPT or UNREACHABLE
     * @param skip  operations let through first
     * @param count operations that meet the fault
     * @param arg   the code FAIL returns, or the milliseconds DELAY waits
     */
    static void inject(final int op, final int kind, final long skip, final long count, final long arg)
    {
        final int rc;
        try
        {
            rc = (int)Controls.INJECT.invokeExact(op, kind, skip, count, arg);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("mooncake_fake_inject failed", ex);
        }
        if (rc != 0)
        {
            throw new IllegalArgumentException("mooncake_fake_inject(" + op + ", " + kind + ", " + skip + ", " + count + ", " + arg + ") refused");
        }
    }

    /** Disarms every fault and zeroes the count of faults met. */
    static void reset()
    {
        try
        {
            Controls.RESET.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("mooncake_fake_reset failed", ex);
        }
    }

    /** @return the operations a fault changed since the last {@link #reset} */
    static long faultsMet()
    {
        try
        {
            return (long)Controls.MET.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("mooncake_fake_faults_met failed", ex);
        }
    }
}
