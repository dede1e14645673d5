package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.FutexWord;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.engine.core.Sleeper;

import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;

/**
 * Where the engine thread sleeps once it serves IPC clients: on the control file's Doorbell, a futex
 * word that client processes ring after they write a request (docs/ipc-protocol.md section 5), and
 * that the engine's own producers ring through the pipeline. The announcement is the word set to 1;
 * after it the engine looks at its own work and at every client's request ring once more.
 */
final class Doorbell implements Sleeper
{
    private final FutexWord word;
    private final BooleanSupplier anyRequest;
    private final BooleanSupplier anyAnswerUnread;

    /**
     * @param word            the control file's Doorbell
     * @param anyRequest      whether a client's request ring holds a request
     * @param anyAnswerUnread whether a client's response ring holds an answer it has not read
     */
    Doorbell(final FutexWord word, final BooleanSupplier anyRequest, final BooleanSupplier anyAnswerUnread)
    {
        this.word = word;
        this.anyRequest = anyRequest;
        this.anyAnswerUnread = anyAnswerUnread;
    }

    @Override
    public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
    {
        word.setVolatile(1);
        VarHandle.fullFence();
        if (!workAfterAnnouncing.getAsBoolean() && !anyRequest.getAsBoolean())
        {
            word.await(1, Math.min(maxNanos, IdleStrategy.MAX_SLEEP_NANOS));
        }
        word.setVolatile(0);
    }

    @Override
    public void wake()
    {
        IdleStrategy.wake(word);
    }

    @Override
    public boolean answerUnread()
    {
        return anyAnswerUnread.getAsBoolean();
    }
}
