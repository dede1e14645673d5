package io.kvtier.engine.pool;

import io.kvtier.nativeaccess.libc.MemoryPolicy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code pool.numa}: on which NUMA nodes the pool's memory lies. On a host of several nodes a pool allocated by
 * whichever thread starts the engine lies on that thread's node, and every client and GPU copy on the other node
 * then crosses the interconnect; an operator places it next to the inference processes (or the GPUs' PCIe root)
 * instead, or interleaves it across nodes when clients sit on all of them.
 *
 * <p>Applied in two steps, because the pool's memory is allocated in two ways: the thread that creates the pool
 * takes the policy for itself ({@code set_mempolicy}) while it allocates the header, index and first pages, before
 * any mapping exists; and the pool's mapping gets it with {@code mbind}, which for a file on tmpfs sets the policy
 * of the file's own pages, so that the pages the background growth allocates later, and any page a client's fault
 * brings in, follow it too. {@code /proc/self/numa_maps} shows the result (the mapping's policy and pages per node).
 *
 * @param mode  {@link MemoryPolicy#MPOL_DEFAULT} for {@code off}, else bind, preferred or interleave
 * @param nodes the nodes named; empty for {@code off}
 * @param text  the setting as written, for messages
 */
public record NumaPlacement(int mode, BitSet nodes, String text)
{
    /** The kernel's default: memory on the node of the thread that allocates it. */
    public static final NumaPlacement OFF = new NumaPlacement(MemoryPolicy.MPOL_DEFAULT, new BitSet(), "off");

    /** Where the kernel lists the nodes that are online ("0" or "0-1,3"); absent on a kernel without NUMA. */
    public static final Path ONLINE_NODES = Path.of("/sys/devices/system/node/online");

    /** The setting's grammar, for its rule and messages. */
    public static final String GRAMMAR = "off, bind:NODES, preferred:NODE or interleave:NODES (NODES as 0, 0,1 or 0-3)";

    /** The highest node number accepted in a setting (the kernel's own limit is at most 1024). */
    static final int MAX_NODE = 1023;

    /**
     * @param text the setting's value
     * @return what it says
     * @throws IllegalArgumentException naming what is wrong, with {@link #GRAMMAR}
     */
    public static NumaPlacement parse(final String text)
    {
        final String value = text.strip().toLowerCase(Locale.ROOT);
        if (value.equals("off"))
        {
            return OFF;
        }
        final int colon = value.indexOf(':');
        if (colon < 0)
        {
            throw new IllegalArgumentException("\"" + text + "\" is not " + GRAMMAR);
        }
        final int mode = switch (value.substring(0, colon))
        {
            case "bind" -> MemoryPolicy.MPOL_BIND;
            case "preferred" -> MemoryPolicy.MPOL_PREFERRED;
            case "interleave" -> MemoryPolicy.MPOL_INTERLEAVE;
            default -> throw new IllegalArgumentException("\"" + text + "\": \"" + value.substring(0, colon) + "\" is not a policy; " + GRAMMAR);
        };
        final BitSet nodes = nodeList(value.substring(colon + 1), text);
        if (mode == MemoryPolicy.MPOL_PREFERRED && nodes.cardinality() != 1)
        {
            throw new IllegalArgumentException("\"" + text + "\": preferred takes one node, not " + nodes.cardinality());
        }
        return new NumaPlacement(mode, nodes, value);
    }

    /**
     * @param list a node list as the kernel writes one: numbers and ranges, comma separated ("0", "0,2", "0-3,6")
     * @param text the whole setting, for messages
     * @return the nodes
     * @throws IllegalArgumentException naming the part that is not a node or a range
     */
    static BitSet nodeList(final String list, final String text)
    {
        final BitSet nodes = new BitSet();
        if (list.isBlank())
        {
            throw new IllegalArgumentException("\"" + text + "\" names no node; " + GRAMMAR);
        }
        for (final String part : list.split(",", -1))
        {
            final String item = part.strip();
            final int dash = item.indexOf('-');
            final int first = node(dash < 0 ? item : item.substring(0, dash), text);
            final int last = dash < 0 ? first : node(item.substring(dash + 1), text);
            if (last < first)
            {
                throw new IllegalArgumentException("\"" + text + "\": the range " + item + " runs backwards");
            }
            nodes.set(first, last + 1);
        }
        return nodes;
    }

    private static int node(final String number, final String text)
    {
        try
        {
            final int node = Integer.parseInt(number.strip());
            if (node >= 0 && node <= MAX_NODE)
            {
                return node;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // named below
        }
        throw new IllegalArgumentException("\"" + text + "\": \"" + number + "\" is not a node number from 0 to " + MAX_NODE + "; " + GRAMMAR);
    }

    /** @return whether this asks for anything but the kernel's default */
    public boolean placed()
    {
        return mode != MemoryPolicy.MPOL_DEFAULT;
    }

    /**
     * @param online the kernel's list of online nodes ({@link #ONLINE_NODES})
     * @return why this placement cannot be made on this host (a node not online, a kernel without NUMA), or empty
     */
    public Optional<String> unavailableOn(final Path online)
    {
        if (!placed())
        {
            return Optional.empty();
        }
        final BitSet available;
        try
        {
            available = nodeList(Files.readString(online).strip(), online.toString());
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            return Optional.of("this host's kernel lists no NUMA nodes (" + online + " cannot be read: " + ex.getMessage()
                + "); set pool.numa = off");
        }
        final BitSet missing = (BitSet)nodes.clone();
        missing.andNot(available);
        if (!missing.isEmpty())
        {
            return Optional.of("node" + (missing.cardinality() > 1 ? "s " : " ") + list(missing) + " "
                + (missing.cardinality() > 1 ? "are" : "is") + " not online; this host's nodes are " + list(available));
        }
        if (MemoryPolicy.instance().isEmpty())
        {
            return Optional.of("the NUMA calls cannot be made here (native access is off, or this architecture has no syscall numbers"
                + " for them: the log says which); set pool.numa = off");
        }
        return Optional.empty();
    }

    /**
     * Sets the calling thread's policy to this one, or back to the default.
     *
     * @param apply true to take this placement, false to go back to the kernel's default
     * @return 0, or {@code -errno}
     */
    int applyToThisThread(final boolean apply)
    {
        if (!placed())
        {
            return 0;
        }
        final MemoryPolicy policy = MemoryPolicy.instance().orElseThrow();
        return apply ? policy.setThreadPolicy(mode, nodes) : policy.setThreadPolicy(MemoryPolicy.MPOL_DEFAULT, new BitSet());
    }

    /**
     * Sets the policy of a mapping's pages, moving those this process alone has placed elsewhere already.
     *
     * @param mapping the pool's mapping
     * @return 0, or {@code -errno}
     */
    int applyTo(final MemorySegment mapping)
    {
        if (!placed())
        {
            return 0;
        }
        return MemoryPolicy.instance().orElseThrow().mbind(mapping, mapping.byteSize(), mode, nodes, MemoryPolicy.MPOL_MF_MOVE);
    }

    /** @return the nodes as the kernel lists them, e.g. "0-1,3" */
    static String list(final BitSet nodes)
    {
        final StringBuilder text = new StringBuilder();
        for (int first = nodes.nextSetBit(0); first >= 0; )
        {
            final int end = nodes.nextClearBit(first);
            text.append(text.isEmpty() ? "" : ",").append(first).append(end - 1 > first ? "-" + (end - 1) : "");
            first = nodes.nextSetBit(end);
        }
        return text.toString();
    }
}
