package io.kvtier.client.protocol;

import io.kvtier.nativeaccess.libc.Futex;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * Sleeping and waking on one 32-bit word of a shared mapping (the control file's Doorbell, a ring
 * file's Client Sleeping): {@code futex(2)} through {@link Futex} when native access is on; otherwise
 * (the reason is logged once by {@code Futex}) a sleeper polls the word with short timed parks and a
 * wake does nothing, which costs latency, never correctness, since every sleep is bounded anyway.
 */
public final class FutexWord
{
    /** The park between two looks at the word when there is no futex. */
    static final long POLL_PARK_NANOS = 50_000;

    private static final Futex FUTEX = Futex.instance().orElse(null);

    private final MemorySegment word;
    private final long offset;

    /**
     * @param mapping the shared mapping
     * @param offset  the word's offset in it, 4-aligned
     */
    public FutexWord(final MemorySegment mapping, final long offset)
    {
        this.word = mapping.asSlice(offset, 4);
        this.offset = offset;
    }

    /** @return whether waits sleep in the kernel (false: timed parks) */
    public static boolean isNative()
    {
        return FUTEX != null;
    }

    /** @return the word's offset in its mapping */
    public long offset()
    {
        return offset;
    }

    /** @return the word's value, volatile: the sleeper's and waker's stores meet through it */
    public int getVolatile()
    {
        return (int)LittleEndian.INT_HANDLE.getVolatile(word, 0L);
    }

    /** @param value stored volatile (a full fence after it, for the Dekker pairs of docs/ipc-protocol.md section 5) */
    public void setVolatile(final int value)
    {
        LittleEndian.INT_HANDLE.setVolatile(word, 0L, value);
    }

    /**
     * Sleeps while the word holds {@code expected}, at most {@code timeoutNanos}; may return early.
     *
     * @param expected     the value announcing the sleep (1)
     * @param timeoutNanos the longest sleep
     */
    private static volatile boolean failureReported;

    public void await(final int expected, final long timeoutNanos)
    {
        if (FUTEX != null)
        {
            final int result = FUTEX.waitShared(word, expected, timeoutNanos);
            if (result < 0 && result != -Futex.EAGAIN && result != -Futex.ETIMEDOUT && result != -Futex.EINTR)
            {
                // The futex itself failed (EFAULT, EINVAL, ENOSYS...): say so once, and sleep this wait
                // out with a timed park rather than come straight back and spin.
                if (!failureReported)
                {
                    failureReported = true;
                    System.getLogger(FutexWord.class.getName()).log(System.Logger.Level.WARNING,
                        "FUTEX_WAIT failed with errno {0}; waits fall back to timed parks of at most {1} µs when it does",
                        -result, POLL_PARK_NANOS / 1000);
                }
                LockSupport.parkNanos(Math.min(timeoutNanos, POLL_PARK_NANOS));
            }
            return;
        }
        final long deadline = System.nanoTime() + timeoutNanos;
        while (getVolatile() == expected)
        {
            final long left = deadline - System.nanoTime();
            if (left <= 0)
            {
                return;
            }
            LockSupport.parkNanos(Math.min(left, POLL_PARK_NANOS));
        }
    }

    /**
     * The waker's half of the pair: if the word says its owner sleeps (1), clears it and wakes it.
     * Call after a full fence that follows the store the sleeper looks for.
     *
     * @return whether the word said so (and a wake was issued)
     */
    public boolean wakeIfSleeping()
    {
        if (getVolatile() == 1)
        {
            setVolatile(0);
            if (FUTEX != null)
            {
                FUTEX.wakeShared(word, Integer.MAX_VALUE);
            }
            return true;
        }
        return false;
    }
}
