package io.kvtier.client;

import java.util.List;

/**
 * What a client asks for when it connects.
 *
 * @param namespaces the namespaces whose keys it will send, at most 16; requests name one by its index
 *                   in this list (0 when the list is empty)
 * @param maxKeys    slots wanted (1..65536): the most keys all of its leases and one request hold at once
 */
public record ClientOptions(List<Namespace> namespaces, int maxKeys)
{
    /** Most namespaces a HELLO carries. */
    public static final int MAX_NAMESPACES = 16;
    /** Most slots a client may ask for. */
    public static final int MAX_KEYS_LIMIT = 65_536;

    /** Validates and copies. */
    public ClientOptions
    {
        namespaces = List.copyOf(namespaces);
        if (namespaces.size() > MAX_NAMESPACES)
        {
            throw new IllegalArgumentException(namespaces.size() + " namespaces, more than the " + MAX_NAMESPACES + " a client may use");
        }
        if (maxKeys < 1 || maxKeys > MAX_KEYS_LIMIT)
        {
            throw new IllegalArgumentException("maxKeys=" + maxKeys + " must be within 1.." + MAX_KEYS_LIMIT);
        }
    }

    /**
     * @param maxKeys    slots wanted
     * @param namespaces the namespaces, index 0 first
     * @return the options
     */
    public static ClientOptions of(final int maxKeys, final Namespace... namespaces)
    {
        return new ClientOptions(List.of(namespaces), maxKeys);
    }
}
