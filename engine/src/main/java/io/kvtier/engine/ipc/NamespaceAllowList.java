package io.kvtier.engine.ipc;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * {@code ipc.allowed-namespaces}: which namespace roots (docs/keys.md) each connecting user or group
 * may name in its HELLO. Empty, any admitted client may name any namespace; otherwise every root a
 * HELLO names must be listed for the peer's uid, for its primary gid (both from SO_PEERCRED), or for
 * everyone ({@code *}), and a HELLO naming another is refused with NAMESPACE_DENIED. Together with the
 * namespace tag every page carries, this is what keeps one tenant's clients off another tenant's pages.
 * A client that names no namespace works on the untagged pages (tag 0), which belong to no tenant: once
 * the list is set, only a peer listed for {@code untagged} may do so, and any other must name an allowed
 * namespace.
 *
 * <p>Syntax: comma-separated entries {@code uid:<n>=<root>}, {@code gid:<n>=<root>} or {@code *=<root>},
 * the root as 32 hex digits ({@code kvtier namespace} prints a namespace's root) or the word
 * {@code untagged}.
 */
final class NamespaceAllowList
{
    /** What the setting's rule says it wants. */
    static final String SYNTAX = "empty, or comma-separated uid:<n>=<root>, gid:<n>=<root> or *=<root>, each root 32 hex digits"
        + " or the word untagged";
    /** The root word that lets a peer name no namespace at all. */
    static final String UNTAGGED = "untagged";
    /** {@link #firstDenied}: the HELLO names no namespace, and the peer may not work on untagged pages. */
    static final int UNTAGGED_DENIED = -2;

    private record Entry(int kind, int id, boolean untagged, long rootHigh, long rootLow)
    {
    }

    private static final int ANYONE = 0;
    private static final int USER = 1;
    private static final int GROUP = 2;

    private final List<Entry> entries;

    private NamespaceAllowList(final List<Entry> entries)
    {
        this.entries = entries;
    }

    /**
     * @param text the setting's value
     * @return the list
     * @throws IllegalArgumentException naming the entry that is wrong
     */
    static NamespaceAllowList parse(final String text)
    {
        final List<Entry> entries = new ArrayList<>();
        if (text == null || text.isBlank())
        {
            return new NamespaceAllowList(entries);
        }
        for (final String raw : text.split(","))
        {
            final String entry = raw.trim();
            final int equals = entry.indexOf('=');
            if (equals < 0)
            {
                throw new IllegalArgumentException("entry '" + entry + "' has no '=': " + SYNTAX);
            }
            final String who = entry.substring(0, equals).trim().toLowerCase(Locale.ROOT);
            final String root = entry.substring(equals + 1).trim();
            final boolean untagged = root.equalsIgnoreCase(UNTAGGED);
            if (!untagged && (root.length() != 32 || !root.chars().allMatch(c -> Character.digit(c, 16) >= 0)))
            {
                throw new IllegalArgumentException("entry '" + entry + "': the root must be 32 hex digits or " + UNTAGGED + ", not '" + root + "'");
            }
            final byte[] bytes = untagged ? new byte[16] : HexFormat.of().parseHex(root);
            final long high = java.nio.ByteBuffer.wrap(bytes).getLong(0);
            final long low = java.nio.ByteBuffer.wrap(bytes).getLong(8);
            if (who.equals("*"))
            {
                entries.add(new Entry(ANYONE, 0, untagged, high, low));
            }
            else if (who.startsWith("uid:") || who.startsWith("gid:"))
            {
                final int id;
                try
                {
                    id = Integer.parseInt(who.substring(4));
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException("entry '" + entry + "': '" + who.substring(4) + "' is not a numeric id");
                }
                if (id < 0)
                {
                    throw new IllegalArgumentException("entry '" + entry + "': ids are not negative");
                }
                entries.add(new Entry(who.startsWith("uid:") ? USER : GROUP, id, untagged, high, low));
            }
            else
            {
                throw new IllegalArgumentException("entry '" + entry + "' names '" + who + "', not uid:<n>, gid:<n> or *: " + SYNTAX);
            }
        }
        return new NamespaceAllowList(entries);
    }

    /** @return whether any client may name any namespace */
    boolean isOpen()
    {
        return entries.isEmpty();
    }

    /** @return the user ids the list names */
    int[] userIds()
    {
        return entries.stream().filter(e -> e.kind == USER).mapToInt(Entry::id).distinct().toArray();
    }

    /** @return the group ids the list names */
    int[] groupIds()
    {
        return entries.stream().filter(e -> e.kind == GROUP).mapToInt(Entry::id).distinct().toArray();
    }

    /**
     * @param isPeerUser  whether a user id is the peer's
     * @param isPeerGroup whether a group id is the peer's primary group
     * @param roots       the HELLO's roots, 16 bytes each
     * @return the index of the first root the peer may not name, {@link #UNTAGGED_DENIED} when the HELLO
     *         names none and the peer may not work on untagged pages, or -1 when all is allowed
     */
    int firstDenied(final java.util.function.IntPredicate isPeerUser, final java.util.function.IntPredicate isPeerGroup, final byte[] roots)
    {
        if (entries.isEmpty())
        {
            return -1;
        }
        if (roots.length == 0)
        {
            return allows(isPeerUser, isPeerGroup, true, 0, 0) ? -1 : UNTAGGED_DENIED;
        }
        for (int n = 0; n < roots.length / 16; n++)
        {
            final long high = java.nio.ByteBuffer.wrap(roots, 16 * n, 8).getLong();
            final long low = java.nio.ByteBuffer.wrap(roots, 16 * n + 8, 8).getLong();
            if (!allows(isPeerUser, isPeerGroup, false, high, low))
            {
                return n;
            }
        }
        return -1;
    }

    private boolean allows(final java.util.function.IntPredicate isPeerUser, final java.util.function.IntPredicate isPeerGroup, final boolean untagged,
                           final long high, final long low)
    {
        for (final Entry e : entries)
        {
            final boolean who = e.kind == ANYONE || (e.kind == USER && isPeerUser.test(e.id)) || (e.kind == GROUP && isPeerGroup.test(e.id));
            if (who && e.untagged == untagged && (untagged || (e.rootHigh == high && e.rootLow == low)))
            {
                return true;
            }
        }
        return false;
    }
}
