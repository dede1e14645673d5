package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageStateWord;

/**
 * Whether a page is still a given client's reservation: the one place that says so, for the engine
 * thread (commit, abort, lapse) and for the threads that write into a reserved page on a client's
 * behalf (the IPC commit sealer, the device copier). A reservation is the page in state WRITING, at the
 * generation the reserve handed out, with the client recorded as its owner; once the engine takes the
 * page back (the generation moves on) or commits it (the state moves on), the same slot names another
 * page's life and nobody may write into it on the old reservation's strength.
 */
public final class Reservation
{
    private Reservation()
    {
    }

    /**
     * @param word       the page's state word, as just read (acquire)
     * @param generation the generation the reserve handed out
     * @return whether the page is still being written at that generation, by whoever
     */
    public static boolean isWriting(final long word, final int generation)
    {
        return PageStateWord.state(word) == PageStateWord.WRITING && PageStateWord.generation(word) == generation;
    }

    /**
     * @param metadata   the pool's page metadata
     * @param page       the page
     * @param word       its state word, as just read (acquire)
     * @param generation the generation the reserve handed out
     * @param owner      the client that reserved it
     * @return whether the page is still that client's reservation
     */
    public static boolean isHeldBy(final PageMetadata metadata, final int page, final long word, final int generation, final int owner)
    {
        return isWriting(word, generation) && metadata.ownerPlain(page) == owner;
    }
}
