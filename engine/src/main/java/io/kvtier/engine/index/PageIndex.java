package io.kvtier.engine.index;

import io.kvtier.engine.events.PageEvents;

import io.kvtier.collections.KeyTable;

/**
 * Engine semantics over the pool file's {@link KeyTable}: value = the pool page bound to the key or
 * {@link #NO_PAGE}; flags = one bit per L3 tier that holds the key, plus a second-chance bit; aux = the
 * namespace tag those L3 copies are stored under (an object's name in L3 depends on it: docs/keys.md).
 *
 * <p>Room for every pool page is always kept: entries known only from L3 are limited to
 * {@code maxEntries - pageCount}, and when that budget is spent the oldest unreferenced ones are
 * forgotten by a clock sweep (forgetting is safe: a lookup can probe L3 again). Binding a pool page
 * therefore never fails. Single writer: the engine thread.
 */
public final class PageIndex
{
    /** Value of a key with no pool page. */
    public static final int NO_PAGE = -1;
    /** Most L3 tiers an index entry can record. */
    public static final int MAX_TIERS = 30;
    private PageEvents events = PageEvents.NONE;

    private static final int REFERENCED = 1 << 30;
    private static final int TIER_BITS = REFERENCED - 1;

    private final KeyTable table;
    private final long l3OnlyLimit;
    /** Last use per cell of keys, in engine seconds (see {@link #noteUse}). */
    private final int[] lastUse;
    private final int lastUseMask;
    private int nowSeconds;
    private long boundPages;
    private long hand;
    private long forgotten;

    /**
     * @param table     the table in the pool file
     * @param pageCount pages in the pool: entries kept for them
     */
    public PageIndex(final KeyTable table, final int pageCount)
    {
        if (table.maxEntries() < pageCount)
        {
            throw new IllegalArgumentException("index of " + table.maxEntries() + " entries cannot hold " + pageCount + " pages");
        }
        this.table = table;
        this.l3OnlyLimit = table.maxEntries() - pageCount;
        final long cells = Long.highestOneBit(Math.max(1024L, Math.min(1L << 24, table.maxEntries())) * 2 - 1);
        this.lastUse = new int[(int)cells];
        this.lastUseMask = (int)cells - 1;
    }

    /**
     * Sets the time {@link #noteUse} records, in whole seconds of the engine clock; the engine thread
     * calls it on its ticks, so that recording a use reads no clock.
     *
     * @param seconds the engine clock in seconds
     */
    public void clockSeconds(final int seconds)
    {
        this.nowSeconds = seconds;
    }

    /** @return the time {@link #noteUse} records now, in seconds */
    public int clockSeconds()
    {
        return nowSeconds;
    }

    /**
     * Records that a key was used now: asked for, loaded, written. Keys share cells by a hash, and a cell
     * keeps the latest use of any of its keys, so a key's {@link #ageSeconds} is never longer than its true
     * age: a page may look younger than it is, never older, and a migration's minimum age is never cut short.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     */
    public void noteUse(final long keyHigh, final long keyLow)
    {
        lastUse[cell(keyHigh, keyLow)] = nowSeconds;
    }

    /**
     * @param keyHigh a key's high half
     * @param keyLow  its low half
     * @return seconds since a key sharing its cell was last used: never more than the key's own age
     */
    public int ageSeconds(final long keyHigh, final long keyLow)
    {
        return nowSeconds - lastUse[cell(keyHigh, keyLow)];
    }

    private int cell(final long keyHigh, final long keyLow)
    {
        final long h = (keyHigh ^ Long.rotateLeft(keyLow, 29)) * 0x9E3779B97F4A7C15L;
        return (int)(h >>> 40) & lastUseMask;
    }

    /**
     * Sets where the index reports that an L3 tier gained or lost a key (KV events, docs/kv-events.md);
     * the parts that change what the pool serves report through {@link #events()} too.
     *
     * @param events the engine's page events, {@link PageEvents#NONE} when off
     */
    public void events(final PageEvents events)
    {
        this.events = events;
    }

    /** @return the engine's page events, {@link PageEvents#NONE} when off */
    public PageEvents events()
    {
        return events;
    }

    /** @return the underlying table */
    public KeyTable table()
    {
        return table;
    }

    /** @return entries, pool-bound or not */
    public long size()
    {
        return table.size();
    }

    /** @return entries known only from L3 that were forgotten for room */
    public long forgotten()
    {
        return forgotten;
    }

    /**
     * @param keyHigh a key's high half
     * @param keyLow  its low half
     * @return the key's slot, or {@link KeyTable#NONE}
     */
    public int find(final long keyHigh, final long keyLow)
    {
        return table.find(keyHigh, keyLow);
    }

    /**
     * @param slot a slot from {@link #find}
     * @return the pool page bound to it, or {@link #NO_PAGE}
     */
    public int page(final int slot)
    {
        return table.value(slot);
    }

    /**
     * @param slot a slot from {@link #find}
     * @return bit {@code t} set when L3 tier {@code t} holds the key
     */
    public int tiers(final int slot)
    {
        return table.flags(slot) & TIER_BITS;
    }

    /**
     * Marks an L3-only entry as recently useful, sparing it from the next sweep.
     *
     * @param slot a slot from {@link #find}
     */
    public void touch(final int slot)
    {
        final int flags = table.flags(slot);
        if ((flags & REFERENCED) == 0)
        {
            table.flags(slot, flags | REFERENCED);
        }
    }

    /**
     * Binds a pool page to a key.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param page    the page
     */
    public void bindPage(final long keyHigh, final long keyLow, final int page)
    {
        int slot = table.insert(keyHigh, keyLow);
        if (slot == KeyTable.NONE)
        {
            forgetOne();
            slot = table.insert(keyHigh, keyLow);
            if (slot == KeyTable.NONE)
            {
                throw new IllegalStateException("index full of pool pages: " + boundPages + " bound of " + table.maxEntries());
            }
        }
        if (table.value(slot) == NO_PAGE)
        {
            boundPages++;
        }
        table.value(slot, page);
        noteUse(keyHigh, keyLow);
    }

    /**
     * Unbinds a page from its key, keeping the entry while an L3 tier holds the key.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param page    the page that was bound; nothing happens if another is
     */
    public void unbindPage(final long keyHigh, final long keyLow, final int page)
    {
        final int slot = table.find(keyHigh, keyLow);
        if (slot == KeyTable.NONE || table.value(slot) != page)
        {
            return;
        }
        boundPages--;
        if (tiers(slot) == 0)
        {
            table.removeAt(slot);
        }
        else
        {
            table.value(slot, NO_PAGE);
        }
    }

    /**
     * @param slot a slot from {@link #find}
     * @return the namespace tag the key's L3 copies are stored under (docs/keys.md, the name of a page in
     *         L3), meaningful while {@link #tiers} is not 0
     */
    public long tierTag(final int slot)
    {
        return table.aux(slot);
    }

    /**
     * Records that a tier holds a key, stored under a namespace tag. Every tier bit of a key is for one
     * tag: a copy under another tag replaces what the index knew (the key is another namespace's now).
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param tier    the tier's index
     * @param tag     the namespace tag it is stored under
     * @return false when the key was new and there was no room for it
     */
    public boolean addTier(final long keyHigh, final long keyLow, final int tier, final long tag)
    {
        int held = 0;
        int slot = table.find(keyHigh, keyLow);
        if (slot == KeyTable.NONE)
        {
            if (table.size() - boundPages >= l3OnlyLimit && !forgetOne())
            {
                return false;
            }
            slot = table.insert(keyHigh, keyLow);
            if (slot == KeyTable.NONE)
            {
                return false;
            }
            table.aux(slot, tag);
        }
        else if ((table.flags(slot) & TIER_BITS) != 0 && table.aux(slot) != tag)
        {
            for (int bits = table.flags(slot) & TIER_BITS; bits != 0; bits &= bits - 1)
            {
                events.removed(keyHigh, keyLow, table.aux(slot), PageEvents.tierMedium(Integer.numberOfTrailingZeros(bits)));
            }
            table.flags(slot, table.flags(slot) & ~TIER_BITS);
        }
        else
        {
            held = table.flags(slot) & TIER_BITS;
        }
        table.aux(slot, tag);
        table.flags(slot, table.flags(slot) | (1 << tier));
        if ((held & (1 << tier)) == 0)
        {
            events.stored(keyHigh, keyLow, tag, PageEvents.tierMedium(tier));
        }
        return true;
    }

    /**
     * Records that a tier holds a key of no namespace (tag 0).
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param tier    the tier's index
     * @return false when the key was new and there was no room for it
     */
    public boolean addTier(final long keyHigh, final long keyLow, final int tier)
    {
        return addTier(keyHigh, keyLow, tier, 0);
    }

    /**
     * Records that a tier no longer holds a key; drops the entry when nothing holds it.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param tier    the tier's index
     */
    public void removeTier(final long keyHigh, final long keyLow, final int tier)
    {
        final int slot = table.find(keyHigh, keyLow);
        if (slot == KeyTable.NONE)
        {
            return;
        }
        if ((table.flags(slot) & (1 << tier)) != 0)
        {
            events.removed(keyHigh, keyLow, table.aux(slot), PageEvents.tierMedium(tier));
        }
        final int flags = table.flags(slot) & ~(1 << tier);
        if ((flags & TIER_BITS) == 0 && table.value(slot) == NO_PAGE)
        {
            table.removeAt(slot);
        }
        else
        {
            table.flags(slot, flags);
        }
    }

    private boolean forgetOne()
    {
        final long slots = table.slotCount();
        for (long step = 0; step < 2 * slots; step++)
        {
            final long slot = hand;
            if (table.isOccupied(slot) && table.value(slot) == NO_PAGE)
            {
                final int flags = table.flags(slot);
                if ((flags & REFERENCED) != 0)
                {
                    table.flags(slot, flags & ~REFERENCED);
                }
                else
                {
                    table.removeAt(slot);
                    forgotten++;
                    return true;
                }
            }
            hand = (hand + 1) & (slots - 1);
        }
        return false;
    }
}
