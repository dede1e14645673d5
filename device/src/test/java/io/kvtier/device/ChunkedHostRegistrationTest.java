package io.kvtier.device;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The pool's registration for device copies in chunks, in the background, against a registrar that records
 * its calls (the CUDA front's own calls are exercised by {@link CudaCopyExecutorTest} where a device is).
 */
class ChunkedHostRegistrationTest
{
    private static final long CHUNK = ChunkedHostRegistration.ALIGNMENT;

    /** Records every call as "+offset:length" or "-offset:length" relative to the mapping. */
    private static final class Recording implements ChunkedHostRegistration.Registrar
    {
        final List<String> calls = new ArrayList<>();
        final MemorySegment base;
        int failAt = -1;
        int alreadyAt = -1;
        CountDownLatch blockAt;
        final CountDownLatch blocked = new CountDownLatch(1);
        int registers;

        Recording(final MemorySegment base)
        {
            this.base = base;
        }

        private String at(final MemorySegment chunk)
        {
            return (chunk.address() - base.address()) + ":" + chunk.byteSize();
        }

        @Override
        public synchronized boolean register(final MemorySegment chunk)
        {
            final int index = registers++;
            if (index == failAt)
            {
                throw new IllegalStateException("cudaHostRegister failed: out of memory (2)");
            }
            if (blockAt != null && index == 1)
            {
                blocked.countDown();
                try
                {
                    blockAt.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
            calls.add("+" + at(chunk));
            return index != alreadyAt;
        }

        @Override
        public synchronized void unregister(final MemorySegment chunk)
        {
            calls.add("-" + at(chunk));
        }
    }

    @Test
    void shouldRegisterTheWholeMappingInAlignedChunksAndUnregisterThemLastFirst() throws Exception
    {
        try (Arena arena = Arena.ofConfined())
        {
            // Two whole chunks and a short one.
            final MemorySegment host = arena.allocate(2 * CHUNK + 12288, 4096);
            final Recording registrar = new Recording(host);
            final ChunkedHostRegistration registration = new ChunkedHostRegistration(host, CHUNK, registrar, "test-register").start();
            assertThat(registration.awaitEnd(30, TimeUnit.SECONDS)).as("registration ends").isTrue();
            assertThat(registration.registeredBytes()).isEqualTo(host.byteSize());
            assertThat(registration.failure()).isNull();
            assertThat(registrar.calls).containsExactly("+0:" + CHUNK, "+" + CHUNK + ":" + CHUNK, "+" + 2 * CHUNK + ":12288");
            registration.close();
            assertThat(registrar.calls.subList(3, 6)).containsExactly("-" + 2 * CHUNK + ":12288", "-" + CHUNK + ":" + CHUNK, "-0:" + CHUNK);
            assertThat(registration.registeredBytes()).isZero();
        }
    }

    @Test
    void shouldStopAtAFailingChunkKeepingTheEarlierOnesAndSayingWhere() throws Exception
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment host = arena.allocate(4 * CHUNK, 4096);
            final Recording registrar = new Recording(host);
            registrar.failAt = 2;
            try (ChunkedHostRegistration registration = new ChunkedHostRegistration(host, CHUNK, registrar, "test-register").start())
            {
                assertThat(registration.awaitEnd(30, TimeUnit.SECONDS)).isTrue();
                assertThat(registration.registeredBytes()).isEqualTo(2 * CHUNK);
                assertThat(registration.failure()).contains("bytes " + 2 * CHUNK + " to " + 3 * CHUNK + " of " + 4 * CHUNK)
                    .contains("out of memory").contains(2 * CHUNK + " bytes stay registered");
                assertThat(registrar.calls).containsExactly("+0:" + CHUNK, "+" + CHUNK + ":" + CHUNK);
            }
            assertThat(registrar.calls).endsWith("-" + CHUNK + ":" + CHUNK, "-0:" + CHUNK);
        }
    }

    @Test
    void shouldNotUnregisterAChunkThatWasAlreadyRegistered() throws Exception
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment host = arena.allocate(2 * CHUNK, 4096);
            final Recording registrar = new Recording(host);
            registrar.alreadyAt = 0;
            final ChunkedHostRegistration registration = new ChunkedHostRegistration(host, CHUNK, registrar, "test-register").start();
            assertThat(registration.awaitEnd(30, TimeUnit.SECONDS)).isTrue();
            registration.close();
            assertThat(registrar.calls).containsExactly("+0:" + CHUNK, "+" + CHUNK + ":" + CHUNK, "-" + CHUNK + ":" + CHUNK);
        }
    }

    @Test
    void shouldStopAfterTheChunkInProgressWhenClosedAndUnregisterWhatWasDone() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment host = arena.allocate(5 * CHUNK, 4096);
            final Recording registrar = new Recording(host);
            registrar.blockAt = new CountDownLatch(1);
            final ChunkedHostRegistration registration = new ChunkedHostRegistration(host, CHUNK, registrar, "test-register").start();
            assertThat(registrar.blocked.await(30, TimeUnit.SECONDS)).as("the second chunk is being registered").isTrue();
            // Asked to stop while the second chunk is in progress: that one finishes, nothing after it starts.
            registration.requestStop();
            registrar.blockAt.countDown();
            registration.close();
            assertThat(registrar.calls).containsExactly("+0:" + CHUNK, "+" + CHUNK + ":" + CHUNK, "-" + CHUNK + ":" + CHUNK, "-0:" + CHUNK);
        }
    }

    @Test
    void shouldRefuseAChunkSizeThatIsNotAWholeNumberOfHugePages()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment host = arena.allocate(CHUNK, 4096);
            assertThatThrownBy(() -> new ChunkedHostRegistration(host, CHUNK + 4096, new Recording(host), "test-register"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(String.valueOf(CHUNK + 4096)).hasMessageContaining("2 MiB");
            assertThatThrownBy(() -> new ChunkedHostRegistration(host, 0, new Recording(host), "test-register"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive multiple");
        }
    }
}
