package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDescriptor;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.libc.UnixSockets;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The engine's end of the IPC protocol (docs/ipc-protocol.md): the socket at {@code ipc.socket-path},
 * the control file {@code <pool.path>.ipc}, and the IPC adapter ({@link IpcConductor}) that the engine
 * thread runs between its batches to serve every connected client, with the {@code kvtier-ipc-seal}
 * thread that checksums commits. Started by the engine when {@code ipc.enabled}; closing it marks
 * the control file CLOSED, disconnects every client (their pins and reservations go back through the
 * engine, which must still be running) and removes the socket and control files.
 */
public final class IpcServer implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(IpcServer.class.getName());
    /** Connections the kernel queues before the engine accepts them. */
    private static final int BACKLOG = 128;

    /**
     * The IPC settings, read once from the engine's.
     *
     * @param socketPath     {@code ipc.socket-path}
     * @param allowedUids    {@code ipc.allowed-uids}
     * @param allowedGids    {@code ipc.allowed-gids}
     * @param group          {@code ipc.group}, empty for none
     * @param ringBytes      {@code ipc.ring-bytes}
     * @param clientTimeout  {@code ipc.client-timeout}
     * @param maxKeys        slots a client gets at most: {@code ipc.max-keys}, bounded by {@code session.max-keys} and by what
     *                       fits half a ring
     * @param sessionTimeout {@code lease.session-timeout}, which the IPC adapter renews for live clients
     * @param allowedNamespaces {@code ipc.allowed-namespaces}
     * @param maxClients     {@code ipc.max-clients}
     * @param stuckAfter     {@code health.stuck-after}: how long one request may keep the sealer or the device thread busy
     */
    public record Settings(Path socketPath, int[] allowedUids, int[] allowedGids, String group, int ringBytes,
                           Duration clientTimeout, int maxKeys, Duration sessionTimeout, String allowedNamespaces,
                           int maxClients, Duration stuckAfter)
    {
        /**
         * @param config the engine's settings
         * @return the IPC settings
         */
        public static Settings from(final EngineConfig config)
        {
            final int ringBytes = (int)(long)config.get(EngineSettings.IPC_RING_BYTES);
            // Every request and every response must fit half a ring, so that one always fits whatever
            // position the ring is at (a record never wraps).
            final int half = ringBytes / 2;
            final int ringFit = Math.min((half - RequestDescriptor.HEADER_LENGTH) / RequestDescriptor.KEY_LENGTH,
                (half - ResponseDescriptor.HEADER_LENGTH) / ResponseDescriptor.ENTRY_LENGTH);
            final int maxKeys = Math.max(1, Math.min(Math.min(config.get(EngineSettings.IPC_MAX_KEYS), config.sessionMaxKeys()), ringFit));
            return new Settings(config.get(EngineSettings.IPC_SOCKET_PATH), config.get(EngineSettings.IPC_ALLOWED_UIDS).clone(),
                config.get(EngineSettings.IPC_ALLOWED_GIDS).clone(), config.get(EngineSettings.IPC_GROUP), ringBytes,
                config.get(EngineSettings.IPC_CLIENT_TIMEOUT), maxKeys, config.sessionTimeout(),
                config.get(EngineSettings.IPC_ALLOWED_NAMESPACES), config.get(EngineSettings.IPC_MAX_CLIENTS),
                config.get(EngineSettings.HEALTH_STUCK_AFTER));
        }
    }

    private final Settings settings;
    private final ControlFile control;
    private final IpcConductor conductor;

    private IpcServer(final Settings settings, final ControlFile control, final IpcConductor conductor, final Pipeline pipeline)
    {
        this.settings = settings;
        this.control = control;
        this.conductor = conductor;
        pipeline.attach(conductor, conductor.doorbell());
    }

    /**
     * Creates the control file and the socket and gives the engine thread the IPC adapter to run.
     *
     * @param config   the engine's settings
     * @param pool     the engine's pool
     * @param pipeline the engine's pipeline, where client requests go
     * @return the running server
     * @throws IOException if a file or the socket cannot be created, or the native fronts IPC needs are missing
     */
    public static IpcServer start(final EngineConfig config, final PagePool pool, final Pipeline pipeline) throws IOException
    {
        final Settings settings = Settings.from(config);
        final UnixSockets sockets = UnixSockets.instance().orElseThrow(() -> new IOException("IPC needs the UnixSockets front, which is unavailable: "
            + UnixSockets.unavailableReason().orElse("see the log") + " (clients get their files as descriptors passed over the socket)"));
        final IpcFiles files = new IpcFiles(settings.group());
        sweepStaleRings(pool.path());
        final int poolFd = files.openOwn(pool.path(), pool.layout().fileLength());
        ControlFile control = null;
        int listening = -1;
        try
        {
            control = ControlFile.create(Path.of(pool.path() + ".ipc"), pool.header().epochPlain(), files);
            // A socket file left by a dead engine refuses bind; the pool file's lock already proved that no
            // live engine uses this pool, hence this socket path.
            Files.deleteIfExists(settings.socketPath());
            listening = bindRestricted(sockets, settings.socketPath(), files);
            final IpcServer ipc = new IpcServer(settings, control,
                new IpcConductor(settings, sockets, pool, pipeline, control, files, listening, poolFd), pipeline);
            LOG.log(System.Logger.Level.INFO, "IPC: clients connect to {0} (control file {1}, {2} slots each, rings of {3} bytes)",
                settings.socketPath(), control.path(), settings.maxKeys(), settings.ringBytes());
            return ipc;
        }
        catch (final IOException | RuntimeException ex)
        {
            if (listening >= 0)
            {
                sockets.close(listening);
                IpcFiles.unlink(settings.socketPath());
            }
            if (control != null)
            {
                control.close();
            }
            files.close(poolFd);
            throw ex;
        }
    }

    /**
     * Removes the ring files a dead engine left beside this pool ({@code <pool.path>.client-*}): the
     * pool's lock proves no live engine uses them, and their clients have been told to reconnect.
     */
    private static void sweepStaleRings(final Path poolPath)
    {
        final Path directory = poolPath.toAbsolutePath().getParent();
        final String prefix = poolPath.getFileName() + ".client-";
        if (directory == null)
        {
            return;
        }
        int swept = 0;
        try (DirectoryStream<Path> stale = Files.newDirectoryStream(directory, entry -> entry.getFileName().toString().startsWith(prefix)))
        {
            for (final Path ring : stale)
            {
                if (Files.isRegularFile(ring, java.nio.file.LinkOption.NOFOLLOW_LINKS) && IpcFiles.unlink(ring))
                {
                    swept++;
                }
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "could not look for ring files a dead engine left in {0}: {1}", directory, ex.getMessage());
        }
        if (swept > 0)
        {
            LOG.log(System.Logger.Level.INFO, "removed {0} ring files a dead engine left beside {1}", swept, poolPath);
        }
    }

    /**
     * Binds the socket under a temporary name, gives it the IPC mode, and only then renames it to its
     * path, so that no client can connect while it still has the mode the umask gave it. A path too
     * long for its temporary name is bound in place and restricted right after (logged).
     *
     * @return the listening socket
     */
    private static int bindRestricted(final UnixSockets sockets, final Path path, final IpcFiles files) throws IOException
    {
        final Path temporary = path.resolveSibling(path.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        int fd = sockets.listen(temporary.toString(), BACKLOG);
        if (fd >= 0)
        {
            try
            {
                files.restrictSocket(temporary);
                Files.move(temporary, path, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                return fd;
            }
            catch (final IOException | RuntimeException ex)
            {
                sockets.close(fd);
                IpcFiles.unlink(temporary);
                throw ex;
            }
        }
        LOG.log(System.Logger.Level.DEBUG, "binding {0} under a temporary name failed (errno {1}); binding it in place", path, -fd);
        fd = sockets.listen(path.toString(), BACKLOG);
        if (fd < 0)
        {
            // Most often a path longer than a socket address holds (108 bytes on Linux), or a directory that is not there.
            final int error = -fd;
            final String why = error == 36 ? "the path is longer than the " + UnixSockets.MAX_PATH_BYTES + " bytes a socket address holds"
                : LibC.instance().map(libc -> libc.strerror(error)).orElse("errno " + error);
            throw new ConfigException(EngineSettings.IPC_SOCKET_PATH.key(), "cannot listen on " + EngineSettings.IPC_SOCKET_PATH.key() + " = \""
                + path + "\": " + why);
        }
        try
        {
            files.restrictSocket(path);
        }
        catch (final IOException | RuntimeException ex)
        {
            sockets.close(fd);
            IpcFiles.unlink(path);
            throw ex;
        }
        return fd;
    }

    /** @return the socket clients connect to */
    public Path socketPath()
    {
        return settings.socketPath();
    }

    /** @return the control file */
    public Path controlPath()
    {
        return control.path();
    }

    /** @return the settings it runs with */
    public Settings settings()
    {
        return settings;
    }

    /** @return IPC clients connected or still being released */
    public int clientCount()
    {
        return conductor.clientCount();
    }

    /**
     * Disconnects every client (State CLOSED, Disconnect Reason CLOSED), waits for the engine to release
     * what they held, and removes the socket and the control file. Call while the engine still runs.
     */
    @Override
    public void close()
    {
        conductor.stop();
        if (!conductor.awaitStopped(IpcConductor.SHUTDOWN_WAIT_NANOS + TimeUnit.SECONDS.toNanos(5)))
        {
            LOG.log(System.Logger.Level.WARNING, "the engine thread did not finish stopping IPC; removing its files anyway");
        }
        IpcFiles.unlink(settings.socketPath());
        control.close();
    }
}
