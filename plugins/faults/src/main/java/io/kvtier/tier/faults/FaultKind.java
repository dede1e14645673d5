package io.kvtier.tier.faults;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A fault the {@code faults} tier can inject, by the name operators write in {@code tier.<name>.faults}
 * and in the control file, and the operation it applies to.
 */
enum FaultKind
{
    /** A read key completes {@code IO_ERROR} without reaching the wrapped tier. */
    EIO_READ("eio-read", Applies.READ),
    /** A write key completes {@code IO_ERROR} without reaching the wrapped tier. */
    EIO_WRITE("eio-write", Applies.WRITE),
    /** A write key completes {@code NO_SPACE} without reaching the wrapped tier. */
    ENOSPC_WRITE("enospc-write", Applies.WRITE),
    /** A read key reaches the wrapped tier only after {@code tier.<name>.slow}. */
    SLOW_READ("slow-read", Applies.READ),
    /** A read key reaches the wrapped tier only after {@code tier.<name>.stall}, past the engine's l3.io-timeout. */
    STALL_READ("stall-read", Applies.READ),
    /** The tier call itself (any operation) does not return until the tier closes or block-call is healed. */
    BLOCK_CALL("block-call", Applies.CALL),
    /** A read completes OK with only a prefix of the object, whole 4 KiB blocks short of it, copied into its segment. */
    SHORT_READ("short-read", Applies.READ),
    /** A prefix of the frame in whole 4 KiB blocks, zeros after it, is stored under the key, which completes IO_ERROR: what a crash mid-write leaves. */
    TORN_WRITE("torn-write", Applies.WRITE),
    /** The frame is stored with one bit flipped and the key completes as the wrapped tier says: bad at rest from then on. */
    BIT_FLIP("bit-flip", Applies.WRITE),
    /** The frame being written is also stored under a key written earlier, whose own object it replaces. */
    REPLACE("replace", Applies.WRITE),
    /** After a read key completed OK, bytes of its segment are changed: a tier writing into memory no longer its own. */
    LATE_WRITE("late-write", Applies.READ);

    /** Which operations a kind is drawn for. */
    enum Applies
    {
        /** Each key of a read. */
        READ,
        /** Each key of a write. */
        WRITE,
        /** Each call, of any operation. */
        CALL
    }

    private static final List<FaultKind> ALL = List.of(values());

    final String settingName;
    final Applies applies;

    FaultKind(final String settingName, final Applies applies)
    {
        this.settingName = settingName;
        this.applies = applies;
    }

    /** @return whether the fault leaves the object stored under the key it names bad from then on */
    boolean destroysObject()
    {
        return this == TORN_WRITE || this == BIT_FLIP || this == REPLACE;
    }

    /**
     * @param name a kind's name as operators write it
     * @return the kind
     * @throws IllegalArgumentException naming the text and the kinds there are
     */
    static FaultKind named(final String name)
    {
        final String wanted = name.trim().toLowerCase(Locale.ROOT);
        for (final FaultKind kind : ALL)
        {
            if (kind.settingName.equals(wanted))
            {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown fault kind '" + name.trim() + "': the kinds are " + names());
    }

    /** @return every kind's name, in declaration order */
    static String names()
    {
        return String.join(", ", Arrays.stream(values()).map(kind -> kind.settingName).toList());
    }

    @Override
    public String toString()
    {
        return settingName;
    }
}
