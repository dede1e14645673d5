package io.kvtier.engine.pool;

import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PageMetadataReader;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PoolClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The page state word's compare-and-set protocol under real concurrency, both cores, many rounds:
 * an "engine" thread evicts one page and reuses it for a new key in a new generation as fast as it
 * can, while a reader pins it (in the state word, or as a client process would, in the pin table)
 * and checks that what it pinned is the key and bytes of the generation it pinned. Bounded by round
 * count, not time; a reader that ever sees another generation's key or bytes under its pin fails it.
 */
class PageStateWordStressTest
{
    private static final int PAGE = 0;
    private static final int PINS = 2_000;
    private static final int REUSES = 2_000;
    private static final long MAX_ATTEMPTS = 200_000_000;

    private Path path;
    private PagePool pool;

    @BeforeEach
    void createPool() throws Exception
    {
        path = Path.of("/dev/shm/kvtier-cas-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        pool = PagePool.create(path, 4096, 4, 1024, 4, Duration.ofMinutes(1));
        publish(1);
    }

    @AfterEach
    void closePool()
    {
        pool.close();
    }

    /** FREE(g) or fresh → WRITING(g) → key and bytes of g → SERVING(g), as a commit does. */
    private void publish(final int generation)
    {
        final long word = pool.metadata().stateWordAcquire(PAGE);
        assertThat(pool.metadata().compareAndSetStateWord(PAGE, word, PageStateWord.word(generation, 0, PageStateWord.WRITING))).isTrue();
        pool.metadata().keyPlain(PAGE, generation, ~generation);
        pool.frames().payload(PAGE).set(ValueLayout.JAVA_INT, 0, generation);
        pool.frames().payload(PAGE).set(ValueLayout.JAVA_INT, 4092, generation);
        assertThat(pool.metadata().compareAndSetStateWord(PAGE, PageStateWord.word(generation, 0, PageStateWord.WRITING),
            PageStateWord.word(generation, 0, PageStateWord.SERVING))).isTrue();
    }

    /** Evicts and republishes until the readers are done, counting how many times it got the page. */
    private long churn(final AtomicBoolean stop, final AtomicLong reusedCount)
    {
        long reused = 0;
        while (!stop.get())
        {
            final long word = pool.metadata().stateWordAcquire(PAGE);
            if (pool.evictIfUnpinned(PAGE, word))
            {
                publish(PageStateWord.generation(word) + 1);
                reused++;
                reusedCount.lazySet(reused);
                // Leave the readers a moment to pin the new generation before it goes again.
                for (int spin = 0; spin < 32; spin++)
                {
                    Thread.onSpinWait();
                }
            }
            else
            {
                Thread.onSpinWait();
            }
        }
        return reused;
    }

    private static String check(final PageMetadataReader metadata, final MemorySegment payload, final int generation)
    {
        final long high = metadata.keyHighPlain(PAGE);
        final int first = payload.get(ValueLayout.JAVA_INT, 0);
        // A reader copying a page takes a while: give a reuse the time to show under the pin.
        for (int spin = 0; spin < 64; spin++)
        {
            Thread.onSpinWait();
        }
        final int last = payload.get(ValueLayout.JAVA_INT, 4092);
        if (high != generation || metadata.keyLowPlain(PAGE) != ~generation || first != generation || last != generation)
        {
            return "pinned generation " + generation + " but saw key " + high + " and bytes " + first + "/" + last;
        }
        return null;
    }

    @Test
    void shouldNeverShowAReaderPinnedInTheStateWordAnotherGenerationsBytes() throws Exception
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong pinned = new AtomicLong();
        final AtomicLong reusedCount = new AtomicLong();
        final String[] failure = new String[1];
        final Thread reader = Thread.ofPlatform().start(() ->
        {
            for (long attempt = 0; attempt < MAX_ATTEMPTS && (pinned.get() < PINS || reusedCount.get() < REUSES) && failure[0] == null; attempt++)
            {
                final long word = pool.metadata().stateWordAcquire(PAGE);
                if (PageStateWord.state(word) != PageStateWord.SERVING)
                {
                    continue;
                }
                final int generation = PageStateWord.generation(word);
                if (pool.tryPin(PAGE, generation))
                {
                    failure[0] = check(pool.metadata(), pool.frames().payload(PAGE), generation);
                    pool.unpin(PAGE);
                    pinned.incrementAndGet();
                }
            }
            stop.set(true);
        });
        final long reused = churn(stop, reusedCount);
        reader.join();
        assertThat(failure[0]).isNull();
        assertThat(pinned.get()).as("pins taken").isGreaterThanOrEqualTo(PINS);
        assertThat(reused).as("evictions and reuses raced against them").isGreaterThanOrEqualTo(REUSES);
        assertThat(PageStateWord.pins(pool.metadata().stateWordAcquire(PAGE))).isZero();
    }

    @Test
    void shouldNeverShowAClientPinnedInThePinTableAnotherGenerationsBytes() throws Exception
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong pinned = new AtomicLong();
        final AtomicLong reusedCount = new AtomicLong();
        final String[] failure = new String[1];
        try (PoolClient client = PoolClient.attach(path))
        {
            final MappedPool mapped = client.pool();
            final Thread reader = Thread.ofPlatform().start(() ->
            {
                for (long attempt = 0; attempt < MAX_ATTEMPTS && (pinned.get() < PINS || reusedCount.get() < REUSES) && failure[0] == null; attempt++)
                {
                    final long word = mapped.metadata().stateWordAcquire(PAGE);
                    if (PageStateWord.state(word) != PageStateWord.SERVING)
                    {
                        continue;
                    }
                    final int generation = PageStateWord.generation(word);
                    if (client.pinPage(PAGE, generation))
                    {
                        failure[0] = check(mapped.metadata(), mapped.payload(PAGE), generation);
                        client.unpin(((long)generation << 32) | PAGE);
                        pinned.incrementAndGet();
                    }
                }
                stop.set(true);
            });
            final long reused = churn(stop, reusedCount);
            reader.join();
            assertThat(failure[0]).isNull();
            assertThat(pinned.get()).as("pins taken").isGreaterThanOrEqualTo(PINS);
            assertThat(reused).as("evictions and reuses raced against them").isGreaterThanOrEqualTo(REUSES);
            assertThat(pool.pinTable().hasPinsVolatile(PAGE)).isFalse();
        }
    }
}
