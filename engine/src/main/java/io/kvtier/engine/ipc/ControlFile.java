package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ControlFileDescriptor;
import io.kvtier.client.protocol.FutexWord;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.LittleEndian;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The engine's control file, {@code <pool.path>.ipc} ({@link ControlFileDescriptor}): written whole
 * under a temporary name and renamed into place, so a client never maps a half-written one and a client
 * still mapping a dead engine's file keeps seeing that file's CLOSED state or stopped heartbeat. The
 * State is stored last, with release.
 */
final class ControlFile implements AutoCloseable
{
    private final Path path;
    private final MemorySegment control;
    private final FutexWord doorbell;
    private final IpcFiles files;
    private final int fd;
    private long heartbeat;

    private ControlFile(final Path path, final MemorySegment control, final IpcFiles files, final int fd)
    {
        this.path = path;
        this.control = control;
        this.files = files;
        this.fd = fd;
        this.doorbell = new FutexWord(control, ControlFileDescriptor.DOORBELL_OFFSET);
    }

    /**
     * @param path  where it goes
     * @param epoch the pool's epoch
     * @param files makes the IPC files
     * @return the open control file, State OPEN, with a descriptor kept to pass to clients
     */
    static ControlFile create(final Path path, final long epoch, final IpcFiles files) throws IOException
    {
        final Path temporary = path.resolveSibling(path.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        IpcFiles.unlink(temporary);
        // Never unmapped by hand: the engine's ring producers wake the engine thread through the Doorbell
        // with no lock, and may do so after close; the mapping (one page) goes when the engine is collected.
        final Arena arena = Arena.ofAuto();
        try
        {
            final IpcFiles.Mapped mapped = files.createMapped(temporary, ControlFileDescriptor.LENGTH, arena, true);
            final MemorySegment control = mapped.segment();
            control.set(LittleEndian.LONG, ControlFileDescriptor.MAGIC_OFFSET, ControlFileDescriptor.MAGIC);
            control.set(LittleEndian.SHORT, ControlFileDescriptor.MAJOR_VERSION_OFFSET, (short)HandshakeDescriptor.MAJOR_VERSION);
            control.set(LittleEndian.SHORT, ControlFileDescriptor.MINOR_VERSION_OFFSET, (short)HandshakeDescriptor.MINOR_VERSION);
            control.set(LittleEndian.LONG, ControlFileDescriptor.EPOCH_OFFSET, epoch);
            control.set(LittleEndian.LONG, ControlFileDescriptor.ENGINE_PID_OFFSET, ProcessHandle.current().pid());
            ControlFileDescriptor.stateRelease(control, ControlFileDescriptor.STATE_OPEN);
            try
            {
                Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            catch (final IOException | RuntimeException ex)
            {
                files.close(mapped.fd());
                throw ex;
            }
            return new ControlFile(path, control, files, mapped.fd());
        }
        catch (final IOException | RuntimeException ex)
        {
            IpcFiles.unlink(temporary);
            throw ex;
        }
    }

    Path path()
    {
        return path;
    }

    /** @return a read-write descriptor of the file, passed to clients of protocol 1.2 */
    int fd()
    {
        return fd;
    }

    FutexWord doorbell()
    {
        return doorbell;
    }

    /** Engine Heartbeat +1, release. */
    void beatRelease()
    {
        ControlFileDescriptor.engineHeartbeatRelease(control, ++heartbeat);
    }

    /** State CLOSED (release): clients still mapping the file stop using the pool. */
    void closedRelease()
    {
        ControlFileDescriptor.stateRelease(control, ControlFileDescriptor.STATE_CLOSED);
    }

    /** Marks it CLOSED and unlinks it; the mapping stays valid for wake-ups that race with the close. */
    @Override
    public void close()
    {
        closedRelease();
        IpcFiles.unlink(path);
        files.close(fd);
    }
}
