package io.kvtier.engine.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The IPC files' access: mode 0600, or 0660 with group {@code ipc.group} so that clients of other
 * users in that group can open them. A file is created 0600 and only then widened, so it is never
 * open to more than it should be, even for an instant.
 */
final class IpcFiles
{
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_AND_GROUP = PosixFilePermissions.fromString("rw-rw----");

    private final GroupPrincipal group;

    /**
     * @param groupName {@code ipc.group}, empty for none
     * @throws IOException if the group does not exist
     */
    IpcFiles(final String groupName) throws IOException
    {
        this.group = groupName.isEmpty() ? null : FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(groupName);
    }

    /** Gives an existing file the IPC mode and group. */
    void restrict(final Path path) throws IOException
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

    /**
     * Creates a new file of {@code length} zero bytes with the IPC mode and maps it.
     *
     * @param path   a path that must not exist
     * @param length its size
     * @param arena  owns the mapping
     * @return the mapping
     */
    MemorySegment createMapped(final Path path, final long length, final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(OWNER_ONLY)))
        {
            restrict(path);
            channel.write(ByteBuffer.allocate(1), length - 1);
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
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
