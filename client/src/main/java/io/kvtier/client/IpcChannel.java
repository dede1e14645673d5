package io.kvtier.client;

import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/** {@link RequestChannel} over an {@link IpcConnection}: its checked failures become {@link KvtierException}s. */
final class IpcChannel implements RequestChannel
{
    private final IpcConnection connection;
    private final HandshakeDescriptor.Welcome welcome;
    private final MemorySegment pool;
    private long requestId;

    private IpcChannel(final IpcConnection connection)
    {
        this.connection = connection;
        this.welcome = connection.welcome();
        this.pool = connection.pool();
    }

    static IpcChannel connect(final Path socketPath, final ClientOptions options, final IdleStrategy.Kind idleKind) throws IOException
    {
        final byte[] roots = new byte[HandshakeDescriptor.NAMESPACE_ROOT_LENGTH * options.namespaces().size()];
        for (int i = 0; i < options.namespaces().size(); i++)
        {
            System.arraycopy(options.namespaces().get(i).rootBytes(), 0, roots, i * HandshakeDescriptor.NAMESPACE_ROOT_LENGTH,
                HandshakeDescriptor.NAMESPACE_ROOT_LENGTH);
        }
        try
        {
            return new IpcChannel(IpcConnection.connect(socketPath, options.maxKeys(), roots, HandshakeDescriptor.MAJOR_VERSION, idleKind));
        }
        catch (final IpcException ex)
        {
            throw new KvtierException(ex.code(), 0, ex.getMessage());
        }
    }

    @Override
    public RequestEncoder begin(final int type, final int bodyLength, final int firstSlot, final int count, final int namespaceIndex, final int flags)
    {
        try
        {
            return connection.claim(type, firstSlot, count, namespaceIndex, flags, bodyLength);
        }
        catch (final IpcException ex)
        {
            throw new KvtierException(ex.code(), type, ex.getMessage());
        }
    }

    @Override
    public ResponseDecoder sendAndAwait()
    {
        requestId = connection.publish();
        try
        {
            return connection.awaitResponse(requestId);
        }
        catch (final IpcException ex)
        {
            throw new KvtierException(ex.code(), 0, ex.getMessage());
        }
    }

    @Override
    public void finish()
    {
        connection.releaseResponse();
    }

    @Override
    public MemorySegment pool()
    {
        return pool;
    }

    @Override
    public int pageSize()
    {
        return welcome.pageSize();
    }

    @Override
    public long dataOffset()
    {
        return welcome.dataOffset();
    }

    @Override
    public long frameLength()
    {
        return welcome.frameLength();
    }

    @Override
    public int maxKeys()
    {
        return welcome.maxKeys();
    }

    @Override
    public int maxMessageLength()
    {
        return welcome.maxMessageLength();
    }

    @Override
    public IdleStrategy.Counts waitCounts()
    {
        return connection.waitCounts();
    }

    @Override
    public void close()
    {
        connection.close();
    }
}
