package io.kvtier.client.protocol;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The one byte order of the IPC protocol: little-endian on every host, so that a client in any
 * language on any architecture reads the same bytes the same way (on x86-64 and AArch64 it costs
 * nothing over native order). Unaligned layouts, because a flyweight may be pointed at any offset
 * while a record is decoded; every field the protocol defines is naturally aligned anyway.
 */
public final class LittleEndian
{
    /** A little-endian long at any byte offset. */
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** A little-endian int at any byte offset. */
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** A little-endian short at any byte offset. */
    public static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /**
     * For acquire, release, opaque and volatile accesses of a long; needs an 8-aligned address (every
     * ordered field of the protocol is), since the hardware gives atomicity only to aligned accesses.
     */
    public static final VarHandle LONG_HANDLE = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();
    /** For acquire, release, opaque, volatile and CAS accesses of an int; needs a 4-aligned address. */
    public static final VarHandle INT_HANDLE = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private LittleEndian()
    {
    }
}
