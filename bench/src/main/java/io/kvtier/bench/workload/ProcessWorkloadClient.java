package io.kvtier.bench.workload;

import io.kvtier.bench.ipc.JavaProcesses;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The parent's end of a {@link WorkloadClientProcess}: hands it each prompt and reads back its tally,
 * so the {@link WorkloadRunner} drives a client in another process as it drives a session.
 */
public final class ProcessWorkloadClient implements WorkloadClient
{
    private final Process process;
    private final DataOutputStream toChild;
    private final DataInputStream fromChild;

    private ProcessWorkloadClient(final Process process)
    {
        this.process = process;
        this.toChild = new DataOutputStream(new BufferedOutputStream(process.getOutputStream(), 1 << 16));
        this.fromChild = new DataInputStream(new BufferedInputStream(process.getInputStream(), 1 << 16));
    }

    /**
     * Starts a Java client process attached to the engine and waits until it is ready.
     *
     * @param socketPath the engine's IPC socket
     * @param pageTokens tokens per page
     * @param modelId    the namespace's model id
     * @param kvLayout   the namespace's KV layout (rank 0, no tenant salt)
     * @return the client
     * @throws UncheckedIOException if the process cannot start or attach
     */
    public static ProcessWorkloadClient start(final Path socketPath, final int pageTokens, final String modelId, final String kvLayout)
    {
        return start(JavaProcesses.java(WorkloadClientProcess.class, socketPath.toString(), Integer.toString(pageTokens), modelId, kvLayout));
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
     * @throws UncheckedIOException if the process cannot start or attach
     */
    public static ProcessWorkloadClient startPython(final Path script, final Path binding, final Path socketPath, final int pageTokens,
                                                    final String modelId, final String kvLayout)
    {
        return start(new ProcessBuilder("python3", script.toString(), binding.toString(), socketPath.toString(), Integer.toString(pageTokens),
            modelId, kvLayout).redirectError(ProcessBuilder.Redirect.INHERIT));
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
     * @throws UncheckedIOException if the process cannot start or attach
     */
    public static ProcessWorkloadClient startC(final Path binary, final Path socketPath, final int pageTokens, final String modelId, final String kvLayout)
    {
        return start(new ProcessBuilder(binary.toString(), socketPath.toString(), Integer.toString(pageTokens), modelId, kvLayout)
            .redirectError(ProcessBuilder.Redirect.INHERIT));
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

    private static ProcessWorkloadClient start(final ProcessBuilder builder)
    {
        final Process process;
        try
        {
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start a client process (" + builder.command().getFirst() + ")", ex);
        }
        final ProcessWorkloadClient client = new ProcessWorkloadClient(process);
        try
        {
            client.expectReady();
        }
        catch (final RuntimeException ex)
        {
            process.destroyForcibly();
            throw ex;
        }
        return client;
    }

    /** @return the client process */
    public Process process()
    {
        return process;
    }

    private void expectReady()
    {
        try
        {
            final int word = fromChild.readInt();
            if (word == WorkloadClientProcess.FAILED)
            {
                throw new IllegalStateException("client process " + process.pid() + ": " + fromChild.readUTF());
            }
            if (word != WorkloadClientProcess.READY)
            {
                throw new IllegalStateException("client process " + process.pid() + " wrote " + Integer.toHexString(word) + " on its pipe");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("client process " + process.pid() + " ended" + exitText(), ex);
        }
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

    @Override
    public void serve(final ChatWorkload.Request request, final RequestTally tally)
    {
        try
        {
            toChild.writeInt(request.length());
            for (int i = 0; i < request.length(); i++)
            {
                toChild.writeInt(request.tokens()[i]);
            }
            toChild.flush();
            expectReady();
            tally.readFrom(fromChild);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("client process " + process.pid() + " ended" + exitText(), ex);
        }
    }

    /** Ends stdin, so the child closes its client and exits; kills it if it does not within 30 s. */
    @Override
    public void close()
    {
        try
        {
            toChild.close();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
            }
        }
        catch (final IOException ex)
        {
            process.destroyForcibly();
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
