package io.kvtier.bench.tier;

import java.io.IOException;
import java.io.InterruptedIOException;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A {@code mooncake_master} this process starts from a Mooncake install, on loopback, for
 * {@code kvtier bench tier --backend mooncake} and {@code kvtier demo --l3 mooncake}: RPC and metrics on
 * free ports of 127.0.0.1, no HTTP metadata server (tiers use {@code P2PHANDSHAKE}), its log in a file.
 * {@link #close()} stops it.
 *
 * <p>It knows the install's layout ({@value #BINARY}, {@code lib/}{@value #LIBRARY_FILE}) and nothing of the
 * Mooncake tier: a tier reaches the master through its {@code master} setting, and the engine hands the
 * tier the library through its {@code lib} setting. Stopping the master right after the engine closed is
 * safe because a Mooncake tier's close returns only once its client has unmounted its segment.
 */
public final class MooncakeMasterProcess implements AutoCloseable
{
    /** Environment variable naming a Mooncake install ({@code bin/mooncake_master}, {@code lib/libmooncake_store.so}). */
    public static final String HOME_ENV_NAME = "KVTIER_MOONCAKE_HOME";
    /** The master binary inside an install. */
    public static final String BINARY = "bin/mooncake_master";
    /** The Store's C library inside an install's {@code lib/}. */
    public static final String LIBRARY_FILE = "libmooncake_store.so";
    /** What to run when the master's shared libraries are missing. */
    public static final String RUNTIME_HINT = "install its runtime packages with plugins/mooncake/scripts/install-runtime.sh"
        + " (ldd " + BINARY + " names the libraries missing)";

    private static final int START_ATTEMPTS = 3;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private final Process process;
    private final int port;
    private final Path log;

    private MooncakeMasterProcess(final Process process, final int port, final Path log)
    {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * @param env the environment to read {@value #HOME_ENV_NAME} from
     * @return the install it names, when it holds a master binary
     */
    public static Optional<Path> homeFromEnvironment(final Map<String, String> env)
    {
        final String home = env.get(HOME_ENV_NAME);
        if (home == null || home.isBlank())
        {
            return Optional.empty();
        }
        final Path path = Path.of(home.trim());
        return Files.isRegularFile(path.resolve(BINARY)) ? Optional.of(path) : Optional.empty();
    }

    /**
     * @param home a Mooncake install
     * @return its Store library, the value of a Mooncake tier's {@code lib} setting
     */
    public static Path library(final Path home)
    {
        return home.resolve("lib").resolve(LIBRARY_FILE);
    }

    /**
     * Starts a master and waits until its RPC port accepts connections.
     *
     * @param home     a Mooncake install holding {@value #BINARY}
     * @param leaseTtl the objects' lease after a read ({@code --default_kv_lease_ttl})
     * @param logFile  where its output goes
     * @return the running master
     * @throws IOException if it does not start, naming the binary and with the end of its log
     */
    public static MooncakeMasterProcess start(final Path home, final Duration leaseTtl, final Path logFile) throws IOException
    {
        final Path binary = home.resolve(BINARY);
        if (!Files.isExecutable(binary))
        {
            throw new IOException(binary + " is not an executable: point " + HOME_ENV_NAME + " at a Mooncake install (" + BINARY + ", lib/"
                + LIBRARY_FILE + ")");
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
                throw new IOException("cannot start " + binary + ": " + ex.getMessage(), ex);
            }
            final long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
            while (process.isAlive() && System.nanoTime() - deadline < 0)
            {
                if (accepts(rpcPort))
                {
                    return new MooncakeMasterProcess(process, rpcPort, logFile);
                }
                sleepMillis(50);
            }
            process.destroyForcibly();
            waitFor(process);
            lastFailure = (process.isAlive() ? "did not open port " + rpcPort + " within " + READY_TIMEOUT : "exited with " + process.exitValue())
                + "; log " + logFile + " ends:\n" + tail(logFile);
        }
        throw new IOException(binary + " failed to start " + START_ATTEMPTS + " times: " + lastFailure + "\n(if a shared library is missing, "
            + RUNTIME_HINT + ")");
    }

    /** @return {@code 127.0.0.1:<rpc port>}, a Mooncake tier's {@code master} setting */
    public String address()
    {
        return "127.0.0.1:" + port;
    }

    /** @return the master's log file */
    public Path log()
    {
        return log;
    }

    /** @return whether the process is still running */
    public boolean isAlive()
    {
        return process.isAlive();
    }

    /**
     * Stops the master: SIGTERM, then SIGKILL after {@code 5 s}. Close the tiers using it first; each has
     * unmounted its segment by the time its close returns.
     */
    @Override
    public void close()
    {
        process.destroy();
        try
        {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
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
            process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits between two probes of the port; an interrupt ends the start with an error saying so. */
    private static void sleepMillis(final long millis) throws InterruptedIOException
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            final InterruptedIOException interrupted = new InterruptedIOException("interrupted while waiting for mooncake_master");
            interrupted.initCause(ex);
            throw interrupted;
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
