package io.kvtier.client.protocol;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The one big-endian thing of the protocol: a key's 16 bytes are the digest's bytes in order
 * (keys.md), so its high and low halves, read as 64-bit integers, are big-endian.
 */
final class BigEndianKey
{
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private BigEndianKey()
    {
    }
}
