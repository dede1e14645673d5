package io.kvtier.engine.core;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;

/**
 * A client as the engine thread's parts see it, for their unit tests: the arrays a request reads and
 * writes, and a record of how each request ended. Single-threaded, like the parts.
 */
final class TestPort implements ClientPort
{
    private final PageKeyChain keys;
    private final int[] lengths;
    private final byte[] statuses;
    private final int[] pageIds;
    private final int[] generations;
    private int clientId;
    private boolean expired;

    /** Requests answered so far. */
    int completions;
    ErrorCode status;
    int resultCount;
    int l2Pages;
    int l3Pages;
    int fromPool;
    int fromL3;

    TestPort(final int capacity)
    {
        keys = new PageKeyChain(capacity);
        lengths = new int[capacity];
        statuses = new byte[capacity];
        pageIds = new int[capacity];
        generations = new int[capacity];
    }

    /** Fills the chain with keys {@code (salt, 1..n)}. */
    TestPort keys(final long salt, final int n)
    {
        keys.clear();
        for (int i = 0; i < n; i++)
        {
            keys.add(salt, i + 1);
        }
        return this;
    }

    int status(final int key)
    {
        return statuses[key];
    }

    int page(final int key)
    {
        return pageIds[key];
    }

    @Override
    public int clientId()
    {
        return clientId;
    }

    @Override
    public void clientId(final int id)
    {
        clientId = id;
    }

    @Override
    public boolean isExpired()
    {
        return expired;
    }

    @Override
    public void expired()
    {
        expired = true;
    }

    @Override
    public PageKeyChain keys()
    {
        return keys;
    }

    @Override
    public int[] lengths()
    {
        return lengths;
    }

    @Override
    public byte[] statuses()
    {
        return statuses;
    }

    @Override
    public int[] pageIds()
    {
        return pageIds;
    }

    @Override
    public int[] generations()
    {
        return generations;
    }

    @Override
    public void complete(final ErrorCode outcome, final int count, final int l2, final int l3, final int pool, final int l3Loaded)
    {
        completions++;
        status = outcome;
        resultCount = count;
        l2Pages = l2;
        l3Pages = l3;
        fromPool = pool;
        fromL3 = l3Loaded;
    }
}
