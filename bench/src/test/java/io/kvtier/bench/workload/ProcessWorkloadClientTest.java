package io.kvtier.bench.workload;

import io.kvtier.client.Namespace;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The demo's end of a client process against deliberately broken clients (shell scripts writing what a broken C,
 * Python or Java client would): each must end in a {@link ClientProcessException} naming the client and what was
 * wrong, within the answer timeout, never a hang; the JUnit timeouts turn a hang into a failure.
 */
class ProcessWorkloadClientTest
{
    private static final String CLIENT = "the test's broken client";
    private static final String LIBRARY = "sh -c";
    private static final int PAGE_TOKENS = 16;
    /** A prompt of 64 tokens: 4 pages; on the pipe, its length and its tokens. */
    private static final int TOKENS = 64;
    private static final int PROMPT_BYTES = 4 + 4 * TOKENS;
    /** The answer timeout of the tests about it: what a client that stays silent is killed after. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /**
     * The answer timeout of the tests about something else: a shell that is ready and answers in milliseconds on a quiet
     * host can take longer than {@link #TIMEOUT} to be started and scheduled on a loaded one, and would then be killed
     * for it instead of failing (or passing) the way the test checks.
     */
    private static final Duration GENEROUS_TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private static ChatWorkload.Request prompt()
    {
        final ChatWorkload.Request request = new ChatWorkload.Request();
        for (int i = 0; i < TOKENS; i++)
        {
            request.tokens[i] = 1000 + i;
        }
        request.length = TOKENS;
        return request;
    }

    /** A tally as the clients write it: 4 pages, 2 from the pool and 1 from L3, both verified, 1 written. */
    private static RequestTally honestTally()
    {
        final RequestTally tally = new RequestTally();
        tally.pagesRequested = TOKENS / PAGE_TOKENS;
        tally.hitL2 = 2;
        tally.hitL3 = 1;
        tally.verified = 3;
        tally.written = 1;
        tally.latencyNanos = 90_000;
        tally.stepNanos[ClientStep.ACQUIRE.ordinal()] = 40_000;
        tally.stepNanos[ClientStep.COMMIT.ordinal()] = 30_000;
        return tally;
    }

    private static byte[] wire(final RequestTally tally) throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            out.writeInt(WorkloadClientProcess.READY);
            tally.writeTo(out);
        }
        return bytes.toByteArray();
    }

    /**
     * Starts a client that gets ready, reads one prompt, writes {@code answer} and then runs {@code then}.
     *
     * @param answer what it answers the prompt with
     * @param then   the shell command after it ({@code cat >/dev/null} waits for the end of its stdin, the shell's stdout still open)
     */
    private ProcessWorkloadClient client(final byte[] answer, final String then) throws IOException
    {
        return client(answer, then, GENEROUS_TIMEOUT);
    }

    /** As {@link #client(byte[], String)}, killed when it takes longer than {@code timeout} to get ready or to answer. */
    private ProcessWorkloadClient client(final byte[] answer, final String then, final Duration timeout) throws IOException
    {
        final Path file = Files.write(Files.createTempFile(dir, "answer", ".bin"), answer);
        return ProcessWorkloadClient.start(new ProcessBuilder("sh", "-c",
            "printf KVTR; head -c " + PROMPT_BYTES + " >/dev/null; cat '" + file + "'; " + then), CLIENT, LIBRARY, PAGE_TOKENS, timeout);
    }

    /** @return an assertion on the failure of the client's answer to {@link #prompt()}, which must be a ClientProcessException */
    private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable> assertServeFails(final ProcessWorkloadClient client)
    {
        return assertThatThrownBy(() -> client.serve(prompt(), new RequestTally())).isInstanceOf(ClientProcessException.class);
    }

    private static void assertGone(final ProcessWorkloadClient client) throws Exception
    {
        assertThat(client.process().waitFor(10, TimeUnit.SECONDS)).as("the client process is killed").isTrue();
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldReadAnHonestTallyAndCloseTheClient() throws Exception
    {
        final RequestTally tally = new RequestTally();
        try (ProcessWorkloadClient client = client(wire(honestTally()), "cat >/dev/null"))
        {
            client.serve(prompt(), tally);
            assertThat(client.name()).startsWith(CLIENT + " (" + LIBRARY + ", pid " + client.process().pid() + ")");
        }
        assertThat(tally.pagesRequested()).isEqualTo(4);
        assertThat(tally.hitL2()).isEqualTo(2);
        assertThat(tally.hitL3()).isEqualTo(1);
        assertThat(tally.verified()).isEqualTo(3);
        assertThat(tally.written).isEqualTo(1);
        assertThat(tally.latencyNanos).isEqualTo(90_000);
        assertThat(tally.stepNanos[ClientStep.ACQUIRE.ordinal()]).isEqualTo(40_000);
        assertThat(tally.stepNanos[ClientStep.COMMIT.ordinal()]).isEqualTo(30_000);
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldKillAClientWhoseTallyIsCutShortOnceTheTimeoutPassesNamingHowMuchCame() throws Exception
    {
        final byte[] whole = wire(honestTally());
        final ProcessWorkloadClient client = client(java.util.Arrays.copyOf(whole, 100), "cat >/dev/null", TIMEOUT);
        try (client)
        {
            assertServeFails(client)
                .hasMessageStartingWith(client.name() + " did not answer a request of 4 pages within 1.0 s")
                .hasMessageContaining("100 of its answer's " + whole.length + " bytes came")
                .hasMessageContaining("killed it");
            assertGone(client);
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldRefuseATallyOfAnotherStepListNamingTheDemosSteps() throws Exception
    {
        // The tally format before the step count: the eight counts and eight step times straight after READY.
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            out.writeInt(WorkloadClientProcess.READY);
            out.writeLong(4);
            for (int i = 1; i < 16; i++)
            {
                out.writeLong(0);
            }
        }
        final ProcessWorkloadClient client = client(bytes.toByteArray(), "cat >/dev/null");
        try (client)
        {
            assertServeFails(client)
                .hasMessageStartingWith(client.name() + " its tally has 0 steps where the demo's has 8 (keys, lookup, acquire, verify, release, "
                    + "reserve, fill, commit)");
            assertGone(client);
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldRefuseGarbageNamingTheWordItWrote() throws Exception
    {
        final ProcessWorkloadClient client = client("this is not a tally: a client writing text on its stdout".getBytes(StandardCharsets.US_ASCII),
            "cat >/dev/null");
        try (client)
        {
            assertServeFails(client)
                .hasMessageStartingWith(client.name() + " answered a request of 4 pages with 0x74686973 (\"this\") where READY 0x4b565452 (\"KVTR\")");
            assertGone(client);
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldRefuseATallyThatCannotDescribeThePrompt() throws Exception
    {
        final RequestTally wrong = honestTally();
        wrong.hitL2 = 9;
        final ProcessWorkloadClient client = client(wire(wrong), "cat >/dev/null");
        try (client)
        {
            assertServeFails(client)
                .hasMessage(client.name() + " answered a request of 4 pages with a tally that cannot be right: hit_l2 9 is not from 0 to the "
                    + "prompt's 4 pages");
        }
        final RequestTally slow = honestTally();
        slow.stepNanos[ClientStep.VERIFY.ordinal()] = 30_000;
        final ProcessWorkloadClient second = client(wire(slow), "cat >/dev/null");
        try (second)
        {
            assertServeFails(second)
                .hasMessageContaining("step commit took 30000 ns where the request's latency is 90000 ns and the steps before it took 70000 ns");
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldNameTheExitCodeOfAClientThatDiesHalfWayThroughItsAnswer() throws Exception
    {
        final byte[] whole = wire(honestTally());
        final ProcessWorkloadClient client = client(java.util.Arrays.copyOf(whole, 24), "exit 3");
        try (client)
        {
            assertServeFails(client)
                .hasMessage(client.name() + " ended with exit code 3 after 24 of its answer's " + whole.length + " bytes, on a request of 4 pages");
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldPassOnTheMessageOfAClientThatFailed() throws Exception
    {
        final ProcessWorkloadClient client = client("FAIL\u0000\u0016LOOKUP_AND_LOCK failed".getBytes(StandardCharsets.US_ASCII), "exit 1");
        try (client)
        {
            assertServeFails(client)
                .hasMessage(client.name() + " failed on a request of 4 pages: LOOKUP_AND_LOCK failed");
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldKillASilentClientAndTheChildrenHoldingItsPipeOnceTheTimeoutPasses() throws Exception
    {
        // Not exec'd: the shell waits on a sleep that holds its stdout open, so killing the shell alone would leave the read blocked.
        final ProcessWorkloadClient client = client(new byte[0], "sleep 600", TIMEOUT);
        try (client)
        {
            Optional<ProcessHandle> sleep = Optional.empty();
            final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sleep.isEmpty() && System.nanoTime() < until)
            {
                sleep = client.process().descendants().findFirst();
                Thread.sleep(10);
            }
            assertThat(sleep).as("the shell's sleep started").isPresent();
            assertServeFails(client)
                .hasMessage(client.name() + " did not answer a request of 4 pages within 1.0 s (0 of its answer's 136 bytes came), so the demo killed it");
            assertGone(client);
            assertThat(sleep.get().onExit().get(10, TimeUnit.SECONDS).isAlive()).as("its child is killed too").isFalse();
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldKillAClientThatIsNeverReadyOnceTheTimeoutPasses()
    {
        assertThatThrownBy(() -> ProcessWorkloadClient.start(new ProcessBuilder("sh", "-c", "exec sleep 600"), CLIENT, LIBRARY, PAGE_TOKENS, TIMEOUT))
            .isInstanceOf(ClientProcessException.class)
            .hasMessageStartingWith(CLIENT + " (" + LIBRARY + ", pid ")
            .hasMessageEndingWith(" was not ready within 1.0 s of its start, so the demo killed it");
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldEndTheWholeRunWithTheBrokenClientsNameInsteadOfHanging() throws Exception
    {
        final Map<String, String> settings = Map.of(EngineConfig.POOL_PATH, "/dev/shm/kvtier-broken-client-" + ProcessHandle.current().pid() + "-" + System.nanoTime(),
            EngineConfig.POOL_SIZE, "8MiB", EngineConfig.POOL_PAGE_SIZE, "16KiB");
        try (Engine engine = Engine.start(EngineConfig.from(settings)))
        {
            // Client 2 answers with half a tally and then waits, as a client built for a shorter tally would; client 1 never answers.
            final Path file = Files.write(dir.resolve("half.bin"), java.util.Arrays.copyOf(wire(honestTally()), 70));
            final String halfAnswer = "printf KVTR; head -c 4 >/dev/null; cat '" + file + "'; cat >/dev/null";
            final WorkloadRunner runner = new WorkloadRunner(engine, new ChatWorkload(ChatWorkload.Shape.demo(11, 40)),
                new WorkloadRunner.Options(2, PAGE_TOKENS, new Namespace("broken-client-test", "page16", 0, "")),
                index -> ProcessWorkloadClient.start(new ProcessBuilder("sh", "-c", index == 1 ? halfAnswer : "printf KVTR; exec sleep 600"),
                    CLIENT + " " + index, LIBRARY, PAGE_TOKENS, TIMEOUT));
            assertThatThrownBy(() -> runner.run(null, 100)).isInstanceOf(ClientProcessException.class)
                .hasMessageMatching("workload client [12] of 2: " + CLIENT + " [01] \\(sh -c, pid \\d+\\) did not answer a request of \\d+ pages within 1.0 s "
                    + "\\(\\d+ of its answer's 136 bytes came\\), so the demo killed it");
        }
    }
}
