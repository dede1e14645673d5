package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Throughput of the request pipeline itself: a request that does nothing but renew the session's
 * lease, from one or more client threads ({@code -t}). The baseline is the textbook hand-off, a
 * server thread answering through a pair of {@link ArrayBlockingQueue}s.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class PipelineBenchmark
{
    /** What the baseline sends: a small int, boxed from the Integer cache, so sending it allocates nothing. */
    private static final int REQUEST = 1;

    /** One engine for every benchmark thread. */
    @State(Scope.Benchmark)
    public static class EngineState
    {
        Engine engine;

        @Setup(Level.Trial)
        public void setUp() throws Exception
        {
            engine = BenchEngines.start(BenchEngines.poolOnly("pipeline", "8MiB", 4096));
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            engine.close();
        }
    }

    /** A session per benchmark thread. */
    @State(Scope.Thread)
    public static class SessionState
    {
        Session session;

        @Setup(Level.Trial)
        public void setUp(final EngineState engine)
        {
            session = engine.engine.openSession();
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            session.close();
        }
    }

    /** A server thread per benchmark thread, answering over two blocking queues. */
    @State(Scope.Thread)
    public static class QueueState
    {
        final ArrayBlockingQueue<Integer> requests = new ArrayBlockingQueue<>(1);
        final ArrayBlockingQueue<Integer> replies = new ArrayBlockingQueue<>(1);
        Thread server;

        @Setup(Level.Trial)
        public void setUp()
        {
            server = Thread.ofPlatform().daemon(true).start(() ->
            {
                try
                {
                    while (true)
                    {
                        replies.put(requests.take());
                    }
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            });
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            server.interrupt();
        }
    }

    /**
     * One round trip through the ring to the engine thread and back. Its check is the request's own:
     * {@code keepAlive} throws unless the engine thread answered it OK.
     */
    @Benchmark
    public void roundTrip(final SessionState state)
    {
        state.session.keepAlive();
    }

    /**
     * @return the reply, the request echoed
     * @throws InterruptedException never, in practice
     */
    @Benchmark
    public Integer baselineQueueRoundTrip(final QueueState state) throws InterruptedException
    {
        state.requests.put(REQUEST);
        final Integer reply = state.replies.take();
        if (reply.intValue() != REQUEST)
        {
            throw new IllegalStateException("the server answered " + reply + " to " + REQUEST);
        }
        return reply;
    }
}
