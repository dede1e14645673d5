package io.kvtier.engine.pool;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The one byte order of every shared layout in the pool file: little-endian, whatever the host. A
 * process on any architecture, in any language, reads the same bytes the same way; on x86-64 and
 * AArch64 these layouts cost nothing over native order.
 */
final class LittleEndian
{
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** For acquire, release, opaque, volatile and CAS accesses of a long at a byte offset. */
    static final VarHandle LONG_HANDLE = LONG.varHandle();
    /** For acquire, release, opaque, volatile and CAS accesses of an int at a byte offset. */
    static final VarHandle INT_HANDLE = INT.varHandle();

    private LittleEndian()
    {
    }
}
