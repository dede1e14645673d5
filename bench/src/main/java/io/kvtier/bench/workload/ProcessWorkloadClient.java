package io.kvtier.bench.workload;

import io.kvtier.bench.ipc.JavaProcesses;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The parent's end of a {@link WorkloadClientProcess}: hands it each prompt and reads back its tally,
 * so the {@link WorkloadRunner} drives a client in another process as it drives a session.
 *
 * <p>Nothing a client process does can hang the demo: every wait for it (its start, each answer, and writing
 * it a prompt) is bounded by the answer timeout, past which a watchdog thread kills it and its descendants, so
 * the blocked read ends; an answer is checked (its first word, its step count, then its counts against the
 * prompt) before it is added up. Any failure is a {@link ClientProcessException} naming the client, its
 * library and what was wrong, and the process is killed, so a broken client never leaves the demo waiting.
 */
public final class ProcessWorkloadClient implements WorkloadClient
{
    /**
     * How long a client process may take to start and get ready, or to answer one prompt, before the demo kills
     * it: far above what a request takes even on a loaded host (milliseconds), so only a broken or stuck client
     * reaches it.
     */
    public static final Duration ANSWER_TIMEOUT_DEFAULT = Duration.ofSeconds(60);

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    /** The longest the watchdog sleeps between looks at the deadline: how late past it the kill may come. */
    private static final long WATCHDOG_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final Process process;
    private final String name;
    private final int pageTokens;
    private final long timeoutNanos;
    private final DataOutputStream toChild;
    private final InputStream fromChild;
    /** One answer as it comes: its first word, then the tally. */
    private final byte[] answer = new byte[Integer.BYTES + RequestTally.WIRE_BYTES];
    private final Thread watchdog;
    /** When the wait under way is too long ({@link System#nanoTime}), 0 when none is; the serving thread's, read by the watchdog. */
    private volatile long dueNanos;
    /** Set by the watchdog when it killed the process for an answer that did not come in time. */
    private volatile boolean timedOut;
    private volatile boolean closed;
    /** Set on the serving thread once the process broke the protocol and was killed. */
    private boolean broken;

    private ProcessWorkloadClient(final Process process, final String client, final String library, final int pageTokens, final Duration timeout)
    {
        this.process = process;
        this.name = client + " (" + library + ", pid " + process.pid() + ")";
        this.pageTokens = pageTokens;
        this.timeoutNanos = timeout.toNanos();
        this.toChild = new DataOutputStream(new BufferedOutputStream(process.getOutputStream(), 1 << 16));
        this.fromChild = new BufferedInputStream(process.getInputStream(), 1 << 16);
        this.watchdog = Thread.ofPlatform().daemon(true).name("kvtier-client-watchdog-" + process.pid()).unstarted(this::watch);
    }

    /**
     * Starts a Java client process attached to the engine and waits until it is ready.
     *
     * @param socketPath the engine's IPC socket
     * @param pageTokens tokens per page
     * @param modelId    the namespace's model id
     * @param kvLayout   the namespace's KV layout (rank 0, no tenant salt)
     * @return the client
     * @throws ClientProcessException naming the client and what was wrong, if it cannot start or attach, or is not ready in time
     */
    public static ProcessWorkloadClient start(final Path socketPath, final int pageTokens, final String modelId, final String kvLayout)
    {
        return start(JavaProcesses.java(WorkloadClientProcess.class, socketPath.toString(), Integer.toString(pageTokens), modelId, kvLayout),
            "the Java demo client", "WorkloadClientProcess over the Java client library", pageTokens, ANSWER_TIMEOUT_DEFAULT);
    }

    /**
     * Starts a Python client process (the Python binding of the C client, running
     * {@link #extractPythonClient the demo's Python driver}) and waits until it is ready.
     *
     * @param script     the driver, from {@link #extractPythonClient()}
     * @param binding    the binding's directory (clients/python)
     * @param socketPath the engine's IPC socket
     * @param pageTokens tokens per page
     * @param modelId    the namespace's model id
     * @param kvLayout   the namespace's KV layout
     * @return the client
     * @throws ClientProcessException naming the client and what was wrong, if it cannot start or attach, or is not ready in time
     */
    public static ProcessWorkloadClient startPython(final Path script, final Path binding, final Path socketPath, final int pageTokens,
                                                    final String modelId, final String kvLayout)
    {
        return start(new ProcessBuilder("python3", script.toString(), binding.toString(), socketPath.toString(), Integer.toString(pageTokens),
            modelId, kvLayout).redirectError(ProcessBuilder.Redirect.INHERIT),
            "the Python demo client", "python_demo_client.py over the Python binding in " + binding + " and libkvtier_client.so", pageTokens,
            ANSWER_TIMEOUT_DEFAULT);
    }

    /** The C demo driver (clients/c/demo/kvtier_demo_client.c) as clients/c's Makefile builds it. */
    public static final Path C_CLIENT = Path.of("clients", "c", "build", "kvtier_demo_client");

    /**
     * Starts a C client process (the demo's C driver over the C client library) and waits until it is ready.
     *
     * @param binary     the driver, from {@link #findCClient()}
     * @param socketPath the engine's IPC socket
     * @param pageTokens tokens per page
     * @param modelId    the namespace's model id
     * @param kvLayout   the namespace's KV layout
     * @return the client
     * @throws ClientProcessException naming the client and what was wrong, if it cannot start or attach, or is not ready in time
     */
    public static ProcessWorkloadClient startC(final Path binary, final Path socketPath, final int pageTokens, final String modelId, final String kvLayout)
    {
        return start(new ProcessBuilder(binary.toString(), socketPath.toString(), Integer.toString(pageTokens), modelId, kvLayout)
            .redirectError(ProcessBuilder.Redirect.INHERIT), "the C demo client", binary + " over libkvtier_client.so", pageTokens,
            ANSWER_TIMEOUT_DEFAULT);
    }

    /**
     * @return the built C demo driver ({@link #C_CLIENT}) in the checkout this class runs from (or the
     *         working directory's), or empty when clients/c was not built (no gcc or make)
     */
    public static java.util.Optional<Path> findCClient()
    {
        final java.util.List<Path> starts = new java.util.ArrayList<>();
        try
        {
            starts.add(Path.of(ProcessWorkloadClient.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath());
        }
        catch (final java.net.URISyntaxException | RuntimeException ex)
        {
            // no code source: the working directory alone
        }
        starts.add(Path.of("").toAbsolutePath());
        for (final Path start : starts)
        {
            for (Path at = start; at != null; at = at.getParent())
            {
                final Path binary = at.resolve(C_CLIENT);
                if (java.nio.file.Files.isRegularFile(binary) && java.nio.file.Files.isExecutable(binary))
                {
                    return java.util.Optional.of(binary);
                }
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * @return the demo's Python driver (WorkloadClientProcess's pipe protocol over the Python binding),
     *         copied into a temporary file for python3 to run; the caller deletes it
     * @throws IOException if it cannot be written
     */
    public static Path extractPythonClient() throws IOException
    {
        final Path script = java.nio.file.Files.createTempFile("kvtier-demo-client-", ".py");
        try (java.io.InputStream in = ProcessWorkloadClient.class.getResourceAsStream("python_demo_client.py"))
        {
            if (in == null)
            {
                throw new IOException("python_demo_client.py is missing from the class path");
            }
            java.nio.file.Files.write(script, in.readAllBytes());
        }
        return script;
    }

    /**
     * Starts a client process speaking {@link WorkloadClientProcess}'s pipe protocol and waits until it is ready.
     *
     * @param builder    the process
     * @param client     which client it is, for messages ("the C demo client")
     * @param library    what it runs over, for messages (its program and client library)
     * @param pageTokens tokens per page, from which each prompt's pages are known to check its tallies
     * @param timeout    how long it may take to get ready and to answer each prompt before it is killed
     * @return the client
     * @throws ClientProcessException naming the client and what was wrong, if it cannot start, fails or is not ready in time
     */
    static ProcessWorkloadClient start(final ProcessBuilder builder, final String client, final String library, final int pageTokens,
                                       final Duration timeout)
    {
        final Process process;
        try
        {
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new ClientProcessException("cannot start " + client + " (" + library + "): " + ex.getMessage(), ex);
        }
        final ProcessWorkloadClient started = new ProcessWorkloadClient(process, client, library, pageTokens, timeout);
        started.watchdog.start();
        try
        {
            started.expectReady();
        }
        catch (final RuntimeException ex)
        {
            started.close();
            throw ex;
        }
        return started;
    }

    /** @return the client process */
    public Process process()
    {
        return process;
    }

    /** @return the client, its library and its pid, as messages name it */
    public String name()
    {
        return name;
    }

    private void expectReady()
    {
        dueNanos = System.nanoTime() + timeoutNanos;
        try
        {
            final int got = read(0, Integer.BYTES);
            if (got < Integer.BYTES)
            {
                throw failure(timedOut ? "was not ready within " + seconds() + " of its start, so the demo killed it"
                    : "ended before it was ready" + exitText() + (got > 0 ? ", after " + got + " bytes" : ""), null);
            }
            final int word = (int)INT.get(answer, 0);
            if (word == WorkloadClientProcess.FAILED)
            {
                throw failure("failed: " + failedMessage(), null);
            }
            if (word != WorkloadClientProcess.READY)
            {
                throw failure("wrote " + wordText(word) + " on its pipe where READY " + wordText(WorkloadClientProcess.READY)
                    + " or FAILED " + wordText(WorkloadClientProcess.FAILED) + " was expected", null);
            }
        }
        finally
        {
            dueNanos = 0;
        }
    }

    @Override
    public void serve(final ChatWorkload.Request request, final RequestTally tally)
    {
        if (broken)
        {
            throw new ClientProcessException(name + " was killed after an earlier failure", null);
        }
        final long pages = request.length() / pageTokens;
        // Armed before the prompt is written: a client that stops reading its stdin fills the pipe and blocks the write.
        dueNanos = System.nanoTime() + timeoutNanos;
        try
        {
            try
            {
                toChild.writeInt(request.length());
                for (int i = 0; i < request.length(); i++)
                {
                    toChild.writeInt(request.tokens()[i]);
                }
                toChild.flush();
            }
            catch (final IOException ex)
            {
                throw failure((timedOut ? "did not read a prompt of " + request.length() + " tokens within " + seconds() + ", so the demo killed it"
                    : "stopped reading prompts") + exitText(), ex);
            }
            int got = read(0, Integer.BYTES);
            if (got == Integer.BYTES)
            {
                final int word = (int)INT.get(answer, 0);
                if (word == WorkloadClientProcess.FAILED)
                {
                    throw failure("failed on a request of " + pages + " pages: " + failedMessage(), null);
                }
                if (word != WorkloadClientProcess.READY)
                {
                    throw failure("answered a request of " + pages + " pages with " + wordText(word) + " where READY "
                        + wordText(WorkloadClientProcess.READY) + " or FAILED " + wordText(WorkloadClientProcess.FAILED) + " was expected", null);
                }
                got += read(Integer.BYTES, Integer.BYTES);
                if (got == 2 * Integer.BYTES)
                {
                    // the step count first: a client of another tally format may never write as many bytes as this one waits for
                    final String wrongFormat = RequestTally.stepCountProblem((int)INT.get(answer, Integer.BYTES));
                    if (wrongFormat != null)
                    {
                        throw failure(wrongFormat, null);
                    }
                    got += read(2 * Integer.BYTES, RequestTally.WIRE_BYTES - Integer.BYTES);
                }
            }
            if (got < answer.length)
            {
                throw failure(timedOut
                    ? "did not answer a request of " + pages + " pages within " + seconds() + " (" + got + " of its answer's " + answer.length
                        + " bytes came), so the demo killed it"
                    : "ended" + exitText() + " after " + got + " of its answer's " + answer.length + " bytes, on a request of " + pages + " pages", null);
            }
        }
        finally
        {
            dueNanos = 0;
        }
        tally.readFrom(answer, Integer.BYTES);
        final String implausible = tally.implausibility(pages);
        if (implausible != null)
        {
            throw failure("answered a request of " + pages + " pages with a tally that cannot be right: " + implausible, null);
        }
    }

    /**
     * Reads into {@link #answer} until {@code length} bytes came or the pipe ended (the process exited or was killed).
     *
     * @return the bytes that came
     */
    private int read(final int offset, final int length)
    {
        int got = 0;
        while (got < length)
        {
            final int n;
            try
            {
                n = fromChild.read(answer, offset + got, length - got);
            }
            catch (final IOException ex)
            {
                return got;
            }
            if (n < 0)
            {
                return got;
            }
            got += n;
        }
        return got;
    }

    /** @return the message after a FAILED word (a u16 length, then modified UTF-8, as {@link DataInputStream#readUTF} reads it) */
    private String failedMessage()
    {
        if (read(0, 2) < 2)
        {
            return "(its message did not come" + (timedOut ? " within " + seconds() : "") + ")";
        }
        final int length = ((answer[0] & 0xFF) << 8) | (answer[1] & 0xFF);
        final byte[] message = new byte[2 + length];
        message[0] = answer[0];
        message[1] = answer[1];
        int got = 0;
        try
        {
            while (got < length)
            {
                final int n = fromChild.read(message, 2 + got, length - got);
                if (n < 0)
                {
                    break;
                }
                got += n;
            }
        }
        catch (final IOException ex)
        {
            // what came is all there is
        }
        if (got < length)
        {
            return "(" + got + " of its message's " + length + " bytes came" + (timedOut ? " within " + seconds() : "") + ")";
        }
        try
        {
            return new DataInputStream(new ByteArrayInputStream(message)).readUTF();
        }
        catch (final IOException ex)
        {
            return "(a message that is not modified UTF-8: " + ex.getMessage() + ")";
        }
    }

    /** Kills the process and marks this client broken; returns the exception naming the client and what was wrong. */
    private ClientProcessException failure(final String what, final Throwable cause)
    {
        broken = true;
        kill();
        return new ClientProcessException(name + " " + what, cause);
    }

    private static String wordText(final int word)
    {
        final StringBuilder text = new StringBuilder("0x").append(String.format("%08x", word)).append(" (\"");
        for (int shift = 24; shift >= 0; shift -= 8)
        {
            final int b = (word >>> shift) & 0xFF;
            text.append(b >= 0x20 && b < 0x7F ? (char)b : '.');
        }
        return text.append("\")").toString();
    }

    private String seconds()
    {
        return Duration.ofNanos(timeoutNanos).toMillis() / 1000.0 + " s";
    }

    /** The watchdog: kills the process once a wait for it runs past its deadline, which ends the blocked read or write. */
    private void watch()
    {
        while (!closed)
        {
            final long due = dueNanos;
            final long now = System.nanoTime();
            if (due != 0 && now - due >= 0)
            {
                timedOut = true;
                kill();
                return;
            }
            LockSupport.parkNanos(this, due == 0 ? WATCHDOG_PERIOD_NANOS : Math.min(WATCHDOG_PERIOD_NANOS, due - now));
        }
    }

    /** Kills the process and its descendants (which may hold its stdout open too), theirs listed first as they are reparented once it dies. */
    private void kill()
    {
        final List<ProcessHandle> descendants = process.descendants().toList();
        process.destroyForcibly();
        descendants.forEach(ProcessHandle::destroyForcibly);
    }

    private String exitText()
    {
        try
        {
            return process.waitFor(5, TimeUnit.SECONDS) ? " with exit code " + process.exitValue() : "";
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Ends stdin, so the child closes its client and exits; kills it if it does not within 30 s. */
    @Override
    public void close()
    {
        closed = true;
        LockSupport.unpark(watchdog);
        if (broken)
        {
            kill();
            return;
        }
        try
        {
            toChild.close();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                kill();
            }
        }
        catch (final IOException ex)
        {
            kill();
        }
        catch (final InterruptedException ex)
        {
            kill();
            Thread.currentThread().interrupt();
        }
    }
}
