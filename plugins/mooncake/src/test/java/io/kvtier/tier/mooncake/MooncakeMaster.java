package io.kvtier.tier.mooncake;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code mooncake_master} this module's tests start on loopback: RPC and metrics on free ports of
 * 127.0.0.1, no HTTP metadata server (tiers use {@code P2PHANDSHAKE}), its log in a file. {@link #close()}
 * stops it. kvtier's own launcher is bench's {@code MooncakeMasterProcess}, which this module cannot
 * depend on (bench loads this tier): the tests keep this small copy of it.
 */
final class MooncakeMaster implements AutoCloseable
{
    /** The master binary inside an install. */
    static final String BINARY = "bin/mooncake_master";

    private static final int START_ATTEMPTS = 3;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);

    private final Process process;
    private final int port;
    private final Path log;

    private MooncakeMaster(final Process process, final int port, final Path log)
    {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts a master and waits until its RPC port accepts connections.
     *
     * @param home     a Mooncake install holding {@value #BINARY}
     * @param leaseTtl the objects' lease after a read ({@code --default_kv_lease_ttl})
     * @param logFile  where its output goes
     * @return the running master
     * @throws MooncakeUnavailableException if it does not start, with the end of its log
     */
    static MooncakeMaster start(final Path home, final Duration leaseTtl, final Path logFile)
    {
        final Path binary = home.resolve(BINARY);
        if (!Files.isExecutable(binary))
        {
            throw new MooncakeUnavailableException(binary + " is not an executable: point " + MooncakeLibrary.HOME_ENV_NAME
                + " at a Mooncake install (bin/mooncake_master, lib/libmooncake_store.so)");
        }
        String lastFailure = "";
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++)
        {
            // Free now, maybe taken by the time the master binds: another attempt picks new ports.
            final int rpcPort = freePort();
            final int metricsPort = freePort();
            final List<String> command = new ArrayList<>(List.of(binary.toString(), "--rpc_address=127.0.0.1", "--rpc_port=" + rpcPort,
                "--metrics_host=127.0.0.1", "--metrics_port=" + metricsPort, "--default_kv_lease_ttl=" + leaseTtl.toMillis(),
                "--enable_http_metadata_server=false"));
            final Process process;
            try
            {
                Files.createDirectories(logFile.toAbsolutePath().getParent());
                process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logFile.toFile()).start();
            }
            catch (final IOException ex)
            {
                throw new MooncakeUnavailableException("cannot start " + binary + ": " + ex.getMessage(), ex);
            }
            final long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
            while (process.isAlive() && System.nanoTime() - deadline < 0)
            {
                if (accepts(rpcPort))
                {
                    return new MooncakeMaster(process, rpcPort, logFile);
                }
                sleepMillis(50);
            }
            process.destroyForcibly();
            waitFor(process);
            lastFailure = (process.isAlive() ? "did not open port " + rpcPort + " within " + READY_TIMEOUT : "exited with " + process.exitValue())
                + "; log " + logFile + " ends:\n" + tail(logFile);
        }
        throw new MooncakeUnavailableException(binary + " failed to start " + START_ATTEMPTS + " times: " + lastFailure
            + "\n(if a shared library is missing, " + MooncakeLibrary.RUNTIME_HINT + ")");
    }

    /** @return {@code 127.0.0.1:<rpc port>}, the tier's {@code master} setting */
    String address()
    {
        return "127.0.0.1:" + port;
    }

    /** @return the master's log file */
    Path log()
    {
        return log;
    }

    /** @return whether the process is still running */
    boolean isAlive()
    {
        return process.isAlive();
    }

    /**
     * Stops the master. A closed Mooncake tier has unmounted its segment already
     * ({@link MooncakeTier#close()} waits for it), so none is left calling a master that is gone.
     */
    @Override
    public void close()
    {
        process.destroy();
        try
        {
            if (!process.waitFor(5, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                waitFor(process);
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort()
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("no free loopback port", ex);
        }
    }

    private static boolean accepts(final int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    private static void waitFor(final Process process)
    {
        try
        {
            process.waitFor(5, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepMillis(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new MooncakeUnavailableException("interrupted while waiting for mooncake_master", ex);
        }
    }

    private static String tail(final Path file)
    {
        try
        {
            final List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        }
        catch (final IOException | UncheckedIOException ex)
        {
            return "(unreadable: " + ex.getMessage() + ")";
        }
    }
}
