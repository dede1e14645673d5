package io.kvtier.engine.ipc;

import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The IPC files and their access. Only the socket is ever opened to others: mode 0600, or 0660 with
 * group {@code ipc.group} so that users of that group may connect. Every file a client maps (the pool,
 * the control file, its rings) stays 0600, the engine's alone: a client of protocol 1.2 gets them as
 * descriptors passed over its socket, and a client of an older minor version, which opens them by
 * name, must be of the engine's own user. So no user can open another's ring, whatever their groups.
 *
 * <p>Files are created with every block allocated ({@code posix_fallocate}), as the pool is: a
 * filesystem that fills up later (any local user can fill {@code /dev/shm}) must refuse the client
 * now, not fault the engine's first store into a page of it.
 */
final class IpcFiles
{
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_AND_GROUP = PosixFilePermissions.fromString("rw-rw----");
    private static final int OWNER_READ_WRITE = 0600;

    /** A file the engine created and mapped, and the descriptor it may pass on (or -1 once closed). */
    record Mapped(MemorySegment segment, int fd)
    {
    }

    private final GroupPrincipal group;
    private final LibC libc;
    private final FileDescriptors descriptors;

    /**
     * @param groupName {@code ipc.group}, empty for none
     * @throws IOException if the group does not exist, or the native fronts the IPC files need are missing
     */
    IpcFiles(final String groupName) throws IOException
    {
        this.group = groupName.isEmpty() ? null : FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(groupName);
        this.libc = LibC.instance().orElseThrow(() -> new IOException("the IPC server needs the LibC front, which is unavailable (see the log)"));
        this.descriptors = FileDescriptors.instance()
            .orElseThrow(() -> new IOException("the IPC server needs the FileDescriptors front, which is unavailable (see the log)"));
    }

    /** Gives the socket file the IPC mode: 0600, or 0660 and {@code ipc.group}. */
    void restrictSocket(final Path path) throws IOException
    {
        final PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
        if (group != null)
        {
            view.setGroup(group);
            view.setPermissions(OWNER_AND_GROUP);
        }
        else
        {
            view.setPermissions(OWNER_ONLY);
        }
    }

    /** @return the descriptors front */
    FileDescriptors descriptors()
    {
        return descriptors;
    }

    /**
     * Creates a new file of {@code length} zero bytes, mode 0600, every block allocated, and maps it.
     *
     * @param path   a path that must not exist (a link there is refused, not followed)
     * @param length its size
     * @param arena  owns the mapping
     * @param keepFd whether to return its descriptor open (else it is closed; the mapping stays)
     * @return the mapping, and the descriptor when kept
     * @throws IOException naming the path and the error; the file is gone again
     */
    Mapped createMapped(final Path path, final long length, final Arena arena, final boolean keepFd) throws IOException
    {
        final int fd;
        try (Arena scratch = Arena.ofConfined())
        {
            fd = libc.open(scratch.allocateFrom(path.toString(), StandardCharsets.UTF_8),
                LibC.O_RDWR | LibC.O_CREAT | LibC.O_EXCL | LibC.O_NOFOLLOW | LibC.O_CLOEXEC, OWNER_READ_WRITE);
        }
        if (fd < 0)
        {
            throw new IOException("cannot create " + path + ": " + libc.strerror(fd));
        }
        try
        {
            final int fchmod = descriptors.changeMode(fd, OWNER_READ_WRITE); // the umask may have taken bits away, never added any
            final int allocated = fchmod < 0 ? fchmod : descriptors.allocate(fd, length);
            if (allocated < 0)
            {
                throw new IOException("cannot allocate " + length + " bytes for " + path + ": " + libc.strerror(allocated)
                    + (allocated == -LibC.ENOSPC ? " (its filesystem is full)" : ""));
            }
            final MemorySegment segment = descriptors.map(fd, length, arena);
            if (!keepFd)
            {
                libc.close(fd);
            }
            return new Mapped(segment, keepFd ? fd : -1);
        }
        catch (final IOException | RuntimeException ex)
        {
            libc.close(fd);
            unlink(path);
            throw ex;
        }
    }

    /**
     * Creates an anonymous memory file (no name anywhere: only descriptors reach it), every block
     * allocated, sealed so that it can neither shrink nor grow, and maps it.
     *
     * @param name   its name in {@code /proc/<pid>/fd} listings
     * @param length its size
     * @param arena  owns the mapping
     * @return the mapping and its descriptor, which the caller closes once it has passed it on
     * @throws IOException naming the error
     */
    Mapped createMemoryFile(final String name, final long length, final Arena arena) throws IOException
    {
        final int fd = descriptors.memoryFile(name, length);
        if (fd < 0)
        {
            throw new IOException("cannot create a memory file of " + length + " bytes for " + name + ": " + libc.strerror(fd)
                + (fd == -LibC.ENOSPC || fd == -12 ? " (out of memory for shared memory)" : ""));
        }
        try
        {
            final int sealed = descriptors.addSeals(fd, FileDescriptors.F_SEAL_SHRINK | FileDescriptors.F_SEAL_GROW | FileDescriptors.F_SEAL_SEAL);
            if (sealed < 0)
            {
                throw new IOException("cannot seal the memory file " + name + ": " + libc.strerror(sealed));
            }
            return new Mapped(descriptors.map(fd, length, arena), fd);
        }
        catch (final IOException | RuntimeException ex)
        {
            libc.close(fd);
            throw ex;
        }
    }

    /**
     * Opens an existing file of the engine's (the pool) read-write, to pass its descriptor on.
     *
     * @param path   the file
     * @param length the size it must have
     * @return its descriptor
     * @throws IOException if it cannot be opened or is not that size
     */
    int openOwn(final Path path, final long length) throws IOException
    {
        final int fd;
        try (Arena scratch = Arena.ofConfined())
        {
            fd = libc.open(scratch.allocateFrom(path.toString(), StandardCharsets.UTF_8), LibC.O_RDWR | LibC.O_NOFOLLOW | LibC.O_CLOEXEC, 0);
        }
        if (fd < 0)
        {
            throw new IOException("cannot open " + path + ": " + libc.strerror(fd));
        }
        final long size = descriptors.status(fd).size();
        if (size != length)
        {
            libc.close(fd);
            throw new IOException(path + " is " + size + " bytes, not the " + length + " the engine mapped");
        }
        return fd;
    }

    /** Closes a descriptor the engine kept; -1 is ignored. */
    void close(final int fd)
    {
        if (fd >= 0)
        {
            libc.close(fd);
        }
    }

    /** Removes a file if it is there; a failure is logged by the caller's context, never thrown. */
    static boolean unlink(final Path path)
    {
        try
        {
            return Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            return false;
        }
    }
}
