package io.kvtier.engine.core;

import java.util.function.BooleanSupplier;

/**
 * Where an idle thread sleeps and how other threads wake it. The sleep is one half of a Dekker pair:
 * the sleeper announces its sleep, fences, and looks for work once more before it sleeps; a waker
 * publishes its work, fences, and wakes the sleeper if it announced a sleep. One of the two sees the
 * other, and every sleep is bounded as a second line of defence.
 */
public interface Sleeper
{
    /**
     * Sleeps at most {@code maxNanos}, unless {@code workAfterAnnouncing} finds work once the sleep is
     * announced. The sleeping thread only.
     *
     * @param maxNanos            the longest sleep
     * @param workAfterAnnouncing looked at after the announcement; true skips the sleep
     */
    void sleep(long maxNanos, BooleanSupplier workAfterAnnouncing);

    /** Any thread, after publishing work: wakes the sleeper if it sleeps. */
    void wake();

    /**
     * Whether a client this thread answered has not read its answer yet: if it shares this thread's
     * core, it runs only once this thread gives the core up. The sleeping thread only.
     *
     * @return true when some answer is unread
     */
    default boolean answerUnread()
    {
        return false;
    }
}
