package io.kvtier.client.pool;

/**
 * The 64-bit word that carries a page's lifecycle, changed only by compare-and-set so the engine and
 * clients in other processes agree on it without locks.
 *
 * <pre>
 *  bits 63..32  generation: +1 on every return to FREE, so a stale handle (page, generation) fails
 *  bits 31..8   pins: readers holding the page; eviction needs 0
 *  bits  7..0   state: FREE, WRITING or SERVING
 * </pre>
 *
 * <p>Transitions: FREE → WRITING (reserve; owner set), WRITING → SERVING (commit, after key, length,
 * CRC and trailer are written), WRITING → FREE (abort or lease expiry; generation + 1),
 * SERVING(pins n) ⇄ SERVING(pins n ± 1) (pin, unpin), SERVING(pins 0) → EVICTING → FREE
 * (eviction; generation + 1), or EVICTING → SERVING when a client process holds a pin in the pin table
 * ({@link PinTableDescriptor}). Only SERVING pages are ever handed to a reader.
 */
public final class PageStateWord
{
    /** Not in use. */
    public static final int FREE = 0;
    /** Reserved by one writer; invisible to readers. */
    public static final int WRITING = 1;
    /** Committed: readable, pinnable, immutable. */
    public static final int SERVING = 2;
    /** Being evicted: the engine checks client pins before the page goes FREE; not pinnable. */
    public static final int EVICTING = 3;

    /** Most pins one page can carry. */
    public static final int MAX_PINS = (1 << 24) - 1;

    private static final int PIN_SHIFT = 8;
    private static final long PIN_ONE = 1L << PIN_SHIFT;

    private PageStateWord()
    {
    }

    /**
     * @param word a state word
     * @return its state
     */
    public static int state(final long word)
    {
        return (int)(word & 0xFF);
    }

    /**
     * @param word a state word
     * @return its pin count
     */
    public static int pins(final long word)
    {
        return (int)((word >>> PIN_SHIFT) & MAX_PINS);
    }

    /**
     * @param word a state word
     * @return its generation
     */
    public static int generation(final long word)
    {
        return (int)(word >>> 32);
    }

    /**
     * @param generation the generation
     * @param pins       the pin count
     * @param state      the state
     * @return the word
     */
    public static long word(final int generation, final int pins, final int state)
    {
        return ((long)generation << 32) | ((long)pins << PIN_SHIFT) | (state & 0xFF);
    }

    /**
     * @param word a SERVING word
     * @return the same word with one more pin
     */
    public static long pinned(final long word)
    {
        return word + PIN_ONE;
    }

    /**
     * @param word a SERVING word with at least one pin
     * @return the same word with one pin fewer
     */
    public static long unpinned(final long word)
    {
        return word - PIN_ONE;
    }

    /**
     * @param state a state
     * @return its name
     */
    public static String stateName(final int state)
    {
        return switch (state)
        {
            case FREE -> "FREE";
            case WRITING -> "WRITING";
            case SERVING -> "SERVING";
            case EVICTING -> "EVICTING";
            default -> "UNKNOWN(" + state + ")";
        };
    }
}
