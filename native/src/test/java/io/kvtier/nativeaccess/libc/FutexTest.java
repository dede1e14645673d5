package io.kvtier.nativeaccess.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The futex front on a word of a shared file mapping, as the IPC protocol uses it. */
class FutexTest
{
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    @TempDir
    Path directory;

    @Test
    void shouldKnowTheSyscallNumberOfEachArchitecture()
    {
        assertThat(Futex.sysFutex("amd64")).isEqualTo(202);
        assertThat(Futex.sysFutex("x86_64")).isEqualTo(202);
        assertThat(Futex.sysFutex("aarch64")).isEqualTo(98);
        assertThat(Futex.sysFutex("sparc")).isEqualTo(-1);
        assertThat(Futex.instance()).as("native access is on in tests").isPresent();
    }

    @Test
    void aWaitThatTimesOutSaysSoAndAMisalignedWordIsRefusedWithItsErrno() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment word = mapped(arena);
            INT.setVolatile(word, 0L, 1);
            assertThat(Futex.instance().orElseThrow().waitShared(word, 1, TimeUnit.MILLISECONDS.toNanos(1))).isEqualTo(-Futex.ETIMEDOUT);
            // A futex word must be 4-aligned: the kernel answers EINVAL (22), which the caller now sees.
            assertThat(Futex.instance().orElseThrow().waitShared(word.asSlice(1), 1, TimeUnit.MILLISECONDS.toNanos(1))).isEqualTo(-22);
        }
    }

    @Test
    void aWaitOnAWordThatDiffersReturnsAtOnceAndAWakeWithoutSleepersWakesNone() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment word = mapped(arena);
            INT.setVolatile(word, 0L, 0);
            // Sleeping "while it holds 1" on a word holding 0: the kernel refuses at once (EAGAIN).
            assertThat(Futex.instance().orElseThrow().waitShared(word, 1, TimeUnit.SECONDS.toNanos(30))).isEqualTo(-Futex.EAGAIN);
            assertThat(Futex.instance().orElseThrow().wakeShared(word, Integer.MAX_VALUE)).isZero();
        }
    }

    @Test
    void aSleeperOnASharedMappingIsWokenByAnotherThread() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment word = mapped(arena);
            INT.setVolatile(word, 0L, 1);
            final CountDownLatch started = new CountDownLatch(1);
            final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
            final Thread sleeper = Thread.ofPlatform().start(() ->
            {
                started.countDown();
                // A sleep far longer than the test's bound below: only a wake ends it in time.
                while ((int)INT.getVolatile(word, 0L) == 1)
                {
                    result.set(Futex.instance().orElseThrow().waitShared(word, 1, TimeUnit.SECONDS.toNanos(600)));
                }
            });
            started.await();
            // Give it the chance to fall asleep (if it has not, the test is weaker, not wrong).
            Thread.sleep(50);
            // Wake until the sleeper is gone: a wake that comes before it sleeps finds no one, and the value
            // change makes its next wait return at once.
            INT.setVolatile(word, 0L, 0);
            while (sleeper.isAlive())
            {
                Futex.instance().orElseThrow().wakeShared(word, 1);
                sleeper.join(10);
            }
            assertThat(sleeper.isAlive()).isFalse();
            assertThat(result.get()).as("woken (0), or it saw the word change (-EAGAIN), or it never slept").isIn(0, -Futex.EAGAIN, Integer.MIN_VALUE);
        }
    }

    private MemorySegment mapped(final Arena arena) throws Exception
    {
        try (FileChannel channel = FileChannel.open(directory.resolve("word"), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena).asSlice(128, 4);
        }
    }
}
