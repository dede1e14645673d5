package io.kvtier.engine.status;

import io.kvtier.engine.pool.Counters;
import io.kvtier.client.pool.CountersDescriptor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ThreadWatchTest
{
    @Test
    void shouldShowAThreadThatHangsInOneRequestAsStuckAndOneThatEndedAsDead() throws Exception
    {
        try (Arena arena = Arena.ofConfined())
        {
            final Counters counters = new Counters(arena.allocate(CountersDescriptor.REGION_LENGTH, 64));
            final ThreadWatch watch = new ThreadWatch(counters, TimeUnit.MILLISECONDS.toNanos(50));
            final ThreadWatch.Watched hanging = watch.watch("kvtier-hanging");
            final ThreadWatch.Watched dying = watch.watch("kvtier-dying");
            final CountDownLatch release = new CountDownLatch(1);
            final CountDownLatch started = new CountDownLatch(1);
            final Thread hangs = new Thread(() ->
            {
                hanging.begin();
                started.countDown();
                try
                {
                    release.await();
                }
                catch (final InterruptedException ignored)
                {
                    Thread.currentThread().interrupt();
                }
                hanging.end();
                hanging.failed();
            });
            hanging.thread(hangs);
            final Thread dies = new Thread(() -> { });
            dying.thread(dies);
            hangs.start();
            dies.start();
            dies.join();
            started.await();

            final int hangingGauge = CountersDescriptor.FIRST_THREAD_ID;
            final int dyingGauge = CountersDescriptor.FIRST_THREAD_ID + 1;
            watch.check(System.nanoTime());
            assertThat(counters.valueOpaque(dyingGauge)).as("ended while the engine runs").isEqualTo(ThreadWatch.DEAD);
            assertThat(counters.valueOpaque(EngineCounter.THREADS_DEAD.id())).isEqualTo(1);
            watch.check(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100));
            assertThat(counters.valueOpaque(hangingGauge)).as("busy past the threshold").isEqualTo(ThreadWatch.STUCK);
            assertThat(counters.valueOpaque(EngineCounter.THREADS_STUCK.id())).isEqualTo(1);

            release.countDown();
            hangs.join();
            watch.check(System.nanoTime());
            assertThat(counters.valueOpaque(hangingGauge)).as("ended while watched, not stopped: dead").isEqualTo(ThreadWatch.DEAD);
            assertThat(counters.valueOpaque(EngineCounter.THREAD_FAILURES.id())).isEqualTo(1);

            // A thread not started yet is not dead either (the engine watches its threads before it starts them).
            final ThreadWatch.Watched unstarted = watch.watch("kvtier-unstarted");
            unstarted.thread(new Thread(() -> { }));

            // A thread that is being stopped is not reported dead.
            final ThreadWatch.Watched stopped = watch.watch("kvtier-stopped");
            final Thread ends = new Thread(() -> { });
            stopped.thread(ends);
            stopped.stopping();
            ends.start();
            ends.join();
            watch.check(System.nanoTime());
            assertThat(counters.valueOpaque(CountersDescriptor.FIRST_THREAD_ID + 2)).as("not started yet").isEqualTo(ThreadWatch.RUNNING);
            assertThat(counters.valueOpaque(CountersDescriptor.FIRST_THREAD_ID + 3)).as("stopped").isEqualTo(ThreadWatch.RUNNING);
            final StringBuilder names = new StringBuilder();
            counters.forEach((id, type, name, description, value) -> names.append(name).append(' '));
            assertThat(names.toString()).contains("thread_kvtier_hanging", "thread_kvtier_dying");
        }
    }
}
