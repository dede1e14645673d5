package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.KvBufferRegistration;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.ResponseDecoder;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A client of {@link IpcOtherUserTest} that runs as another user than the engine's (nobody), in a JVM of
 * its own, and tries what the hardening review found possible: opening the engine's files and other
 * clients' rings by name, and registering a host file through a directory that is swapped with a link
 * to a file only the engine's user may read. Prints one line of counts and exits 0 if it finished.
 *
 * <p>Arguments: socket path, the pool's directory, the registration path, the marker of the forbidden
 * file (a long), the marker of its own file, registrations to try.
 */
public final class IpcOtherUserClient
{
    /** 1 layer of K and V, 4 tokens, 2 heads of 8 fp16 elements: blocks of 128 bytes, pages of 256. */
    static final int[] SHAPE = {1, 2, 4, 2, 8, 2};
    static final int BLOCKS = 4;
    static final long FILE_BYTES = 256L * BLOCKS;

    private IpcOtherUserClient()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path socket = Path.of(args[0]);
        final Path poolDirectory = Path.of(args[1]);
        final Path registered = Path.of(args[2]);
        final long forbidden = Long.parseLong(args[3]);
        final long own = Long.parseLong(args[4]);
        final int tries = Integer.parseInt(args[5]);

        // Every file of the engine's beside the pool: none may be opened for writing by this user.
        int opened = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(poolDirectory))
        {
            for (final Path file : files)
            {
                if (Files.isRegularFile(file) && file.getFileName().toString().startsWith("pool"))
                {
                    try (FileChannel ignored = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
                    {
                        opened++;
                        System.out.println("OPENED " + file);
                    }
                    catch (final java.io.IOException refused)
                    {
                        // what must happen
                    }
                }
            }
        }

        int accepted = 0;
        int refused = 0;
        int leaked = 0;
        int ownBytes = 0;
        long key = 0x7700;
        while (accepted + refused < tries)
        {
            try (IpcConnection client = IpcConnection.connect(socket, 8))
            {
                for (int layouts = 0; layouts < DeviceRequestDescriptor.MAX_LAYOUTS && accepted + refused < tries; )
                {
                    final ResponseDecoder answer = client.awaitResponse(client.sendRegisterKv(KvBufferRegistration.hostFiles(
                        DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, SHAPE, BLOCKS, new Path[] {registered}, new long[] {0})));
                    final int status = answer.status();
                    final int layout = answer.resultCount();
                    client.releaseResponse();
                    if (status != 0)
                    {
                        refused++;
                        continue;
                    }
                    accepted++;
                    layouts++;
                    key++;
                    final ResponseDecoder reserved = client.awaitResponse(client.send(MessageType.RESERVE, 0, 1, new long[] {key}, new long[] {key}));
                    final int page = reserved.entryStatus(0) == PageEntryStatus.RESERVED ? reserved.entryPageId(0) : -1;
                    client.releaseResponse();
                    if (page < 0)
                    {
                        throw new IllegalStateException("no page reserved for the save");
                    }
                    client.awaitResponse(client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, 1, new int[] {0}, new int[] {4}));
                    client.releaseResponse();
                    // What the engine copied from the file it mapped: the client's own bytes, never the forbidden file's.
                    final MemorySegment bytes = client.page(page);
                    final long first = bytes.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                    if (first == forbidden)
                    {
                        leaked++;
                    }
                    else if (first == own)
                    {
                        ownBytes++;
                    }
                }
            }
        }
        System.out.println("RESULT opened=" + opened + " accepted=" + accepted + " refused=" + refused + " leaked=" + leaked + " own=" + ownBytes);
    }
}
