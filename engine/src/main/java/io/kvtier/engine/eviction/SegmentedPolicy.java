package io.kvtier.engine.eviction;

import java.util.Locale;

/**
 * Chain-aware segmented recency with admission and frequency, in one of four fixed {@link Setting}s; the
 * {@link AdaptivePolicy} switches between them as the workload asks.
 *
 * <h2>What it keeps track of</h2>
 * <ul>
 *   <li><b>Sight.</b> A {@link FrequencySketch} counts every key inserted or hit, resident or not. A page
 *       inserted whose key the sketch has not seen before (a first sight) goes to the <i>probation</i> list;
 *       every other page (a hit, or a key seen before coming back) to the <i>main</i> lists. Most one-time pages
 *       (the last, partial block of a prompt; a document read once) are first sights, and a probation share of
 *       0 evicts them before anything else, like an admission filter that asks for a second sight.</li>
 *   <li><b>Chain level.</b> Each page carries the sketch frequency of the first page of its chain below the
 *       last hub (a page with {@value #HUB_CHILDREN} or more children inserted under it, such as a system prompt
 *       that every conversation starts with): for a conversation, about how many turns it has had. A page
 *       inherits the level of its parent, so all pages of one conversation share it. Main pages sit in one list
 *       per level (2, 3, ... {@value #LEVELS}+1 and above).</li>
 *   <li><b>Order within a chain.</b> Each page gets a stamp: its parent's stamp minus one, or the event clock
 *       for a page without a parent. So a request's pages are ordered tail first: the deepest page of a chain
 *       goes before the pages it depends on, and a chain loses its tail before its head. Each list
 *       stays sorted by stamp: a page goes just before its parent when both are in one list, else after the
 *       last page of its list that is older (at most {@value #MAX_SHIFT} steps back from the tail over this
 *       request's own pages, else it takes the clock).</li>
 *   <li><b>Lazy promotion.</b> A hit on a page below its parent, both bound for one list (the body of a chain
 *       re-read), moves nothing: the page takes its level and the stamp it would be placed with, and is marked
 *       touched. A walk that meets a touched page at its old place moves it, with its touched ancestors, just
 *       before its parent, topmost first: the order moving each hit at once gives, so a hit costs a few stores,
 *       as an LRU's does. Where a parent was hit again since (a request that re-read only a prefix), the page's
 *       place lies between the walk's cursor and the tail where O(1) cannot find it, and it goes to the end whose
 *       stamp is nearer. A chain's head, and a page whose parent is in another list, still move at once.</li>
 * </ul>
 *
 * <h2>Eviction order</h2>
 * When the probation list holds {@code probationShare × capacity} pages or more, the walk takes probation pages
 * first, oldest first, so that after an insertion they hold at most their share. Otherwise, and after them, it
 * merges all lists by {@code stamp + bonus}, oldest first, where a main list's bonus is
 * {@code frequencyWeight × capacity} events per level above 2: a page of a conversation at its fifth turn is
 * kept as if touched {@code 3 × frequencyWeight × capacity} events later.
 * With share 1 and weight 0 ({@link #CHAIN}) that is plain recency, tail first. Per call the work is a handful
 * of array accesses plus a comparison of the {@value #LISTS} list heads, and a walk's repairs are paid for by the
 * hits that touched the pages, once each: O(1) amortised.
 *
 * <p>Memory: 39 bytes of heap per page plus the sketch (16 counters of 4 bits per page, at least 512 KiB).
 */
final class SegmentedPolicy implements EvictionPolicy
{
    /**
     * A fixed configuration.
     *
     * @param name            the policy name it goes by
     * @param probationShare  the most of the capacity that first-sight pages keep before they are evicted
     *                        first, from 0 (evicted before anything else) to 1 (never preferred)
     * @param frequencyWeight how many times the capacity, in events, a main page's recency gains per chain
     *                        level above 2; 0 for plain recency
     */
    public record Setting(String name, double probationShare, double frequencyWeight)
    {
        /**
         * @param name            the policy name it goes by
         * @param probationShare  from 0 to 1
         * @param frequencyWeight from 0 to 16
         */
        public Setting
        {
            if (name == null || !(probationShare >= 0 && probationShare <= 1) || !(frequencyWeight >= 0 && frequencyWeight <= 16))
            {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "setting %s: probationShare=%s must be in [0, 1] and frequencyWeight=%s in [0, 16]", name, probationShare, frequencyWeight));
            }
        }
    }

    /** Chain-aware recency: no admission, no frequency. */
    public static final Setting CHAIN = new Setting("chain", 1.0, 0.0);

    /** First-sight pages keep at most half of the pool. */
    public static final Setting PROBATION = new Setting("probation", 0.5, 0.0);

    /** First-sight pages are evicted before any other. */
    public static final Setting ADMISSION = new Setting("admission", 0.0, 0.0);

    /** As {@link #ADMISSION}, and pages of chains seen more often are kept longer. */
    public static final Setting FREQUENCY = new Setting("frequency", 0.0, 1.0);

    /** Main lists: chain levels 2 to {@code LEVELS + 1} and above. */
    static final int LEVELS = 8;

    /** The probation list, then the main lists. */
    static final int LISTS = 1 + LEVELS;

    /** A page with this many children inserted under it is a hub: its children start chains of their own. */
    static final int HUB_CHILDREN = 3;

    private static final int PROBATION_LIST = 0;
    private static final int DEPTH_BITS = 16;
    private static final long DEPTH_MASK = (1L << DEPTH_BITS) - 1;
    private static final int MAX_SHIFT = 16;

    private final int capacity;
    private final FrequencySketch sketch;
    private final boolean countsKeys;
    private final PageLists lists;
    private final long[] keyHash;
    private final long[] stamp;
    /**
     * Positive: the stamp a page's last hit gave it, the page not moved there yet (it is <i>touched</i>). Otherwise
     * minus the number of the last walk that returned it (0: none), which tells a repair not to put a page before it.
     */
    private final long[] touched;
    /** A touched page's parent at its hit, which it goes just before when the walk repairs it. */
    private final int[] touchedParent;
    private final byte[] level;
    private final byte[] children;
    private final long[] bonus = new long[LISTS];
    private final int[] cursor = new int[LISTS];
    private Setting setting;
    private int probationLimit;
    /** Pages on the probation list that were hit since they were placed: they belong to the main lists. */
    private int probationTouched;
    private long clock;
    private boolean walking;
    private boolean probationFirst;
    private int walkLast = NONE;
    /** The number of the current (or last) walk, for {@link #touched}. */
    private long walks;

    /**
     * @param capacity pages range over {@code [0, capacity)}
     * @param setting  the configuration
     */
    public SegmentedPolicy(final int capacity, final Setting setting)
    {
        this(capacity, setting, new FrequencySketch(FrequencySketch.countersFor(capacity)), true);
    }

    /**
     * @param capacity   pages range over {@code [0, capacity)}
     * @param setting    the configuration
     * @param sketch     the frequency sketch to read
     * @param countsKeys whether this policy counts its keys in the sketch, or another policy sharing it does
     */
    SegmentedPolicy(final int capacity, final Setting setting, final FrequencySketch sketch, final boolean countsKeys)
    {
        if (capacity < 0)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 0");
        }
        this.capacity = capacity;
        this.sketch = sketch;
        this.countsKeys = countsKeys;
        this.lists = new PageLists(capacity, LISTS);
        this.keyHash = new long[capacity];
        this.stamp = new long[capacity];
        this.touched = new long[capacity];
        this.touchedParent = new int[capacity];
        this.level = new byte[capacity];
        this.children = new byte[capacity];
        configure(setting);
    }

    /**
     * Changes the configuration; pages keep their place, and the next eviction follows the new one. Ends a walk.
     *
     * @param next the configuration
     */
    void configure(final Setting next)
    {
        setting = next;
        probationLimit = (int)Math.min(capacity, Math.floor(next.probationShare() * capacity));
        for (int list = 1; list < LISTS; list++)
        {
            bonus[list] = (long)(next.frequencyWeight() * capacity * (list - 1)) << DEPTH_BITS;
        }
        walking = false;
    }

    /** @return the current configuration */
    public Setting setting()
    {
        return setting;
    }

    @Override
    public void onInsert(final int page, final int parent, final long hash)
    {
        insert(page, parent, hash, countsKeys ? sketch.incrementAndEstimate(hash) : sketch.frequency(hash));
    }

    /**
     * {@link #onInsert} with the key's sketch estimate given: a caller that shares the sketch and has counted the key
     * already (the adaptive policy, for its pool and its miniatures) saves finding its counters again.
     *
     * @param page   the page, not resident
     * @param parent as for {@link #onInsert}
     * @param hash   the key's hash
     * @param seen   the sketch's estimate for the key, after this sight was counted
     */
    void insert(final int page, final int parent, final long hash, final int seen)
    {
        walking = false;
        forget(page);
        lists.remove(page);
        keyHash[page] = hash;
        children[page] = 0;
        final int parentPage = resident(page, parent);
        if (parentPage != NONE && children[parentPage] < Byte.MAX_VALUE)
        {
            children[parentPage]++;
        }
        place(page, parentPage, seen, seen <= 1);
    }

    @Override
    public void onAccess(final int page, final int parent)
    {
        final long hash = keyHash[page];
        access(page, parent, countsKeys ? sketch.incrementAndEstimate(hash) : sketch.frequency(hash));
    }

    /**
     * {@link #onAccess} with the key's sketch estimate given, as for {@link #insert}.
     *
     * @param page   a resident page
     * @param parent as for {@link #onAccess}
     * @param seen   the sketch's estimate for the page's key, after this sight was counted
     */
    void access(final int page, final int parent, final int seen)
    {
        walking = false;
        final int parentPage = resident(page, parent);
        final boolean inherits = inherits(parentPage);
        if (inherits && (stampOf(parentPage) & DEPTH_MASK) != 1 && (touched[parentPage] > 0 || lists.listOf(parentPage) == mainList(level[parentPage])))
        {
            // Lazy promotion: a page below its parent, in its parent's list, takes the stamp it would be placed with and
            // stays where it is; the walk that meets it moves it there, just before its parent (repair), so such a hit
            // costs a few stores, as an LRU's does.
            level[page] = level[parentPage];
            clock++;
            if (touched[page] <= 0 && lists.listOf(page) == PROBATION_LIST)
            {
                probationTouched++;
            }
            touched[page] = stampOf(parentPage) - 1;
            touchedParent[page] = parentPage;
            return;
        }
        forget(page);
        place(page, parentPage, Math.max(2, seen), false); // place moves the page only if it must
    }

    /** @return the stamp the page is ordered by once its last hit is acted on */
    private long stampOf(final int page)
    {
        final long hit = touched[page];
        return hit > 0 ? hit : stamp[page];
    }

    /** @return whether a page placed under {@code parent} (or {@link #NONE}) takes its parent's chain level */
    private boolean inherits(final int parent)
    {
        return parent != NONE && children[parent] < HUB_CHILDREN && level[parent] > 0;
    }

    /** Drops a hit not yet acted on, for a page placed again or leaving the pool. */
    private void forget(final int page)
    {
        if (touched[page] > 0 && lists.listOf(page) == PROBATION_LIST)
        {
            probationTouched--;
        }
        touched[page] = 0;
    }

    /** @return the parent if it is a resident page other than the page itself, else {@link #NONE} */
    private int resident(final int page, final int parent)
    {
        return parent == NONE || parent == page || lists.listOf(parent) == PageLists.UNLINKED ? NONE : parent;
    }

    /**
     * Puts a page where its stamp says, in the list its level says: just before its parent when both are in one list
     * and the parent is in place, else after the last page of the list that is older (at most {@value #MAX_SHIFT}
     * steps back from the tail over this request's own pages, else it takes the clock). A page already linked stays
     * where it is when that is where it would go (a hit on the head of the chain touched last, at the tail of its list
     * already): only its stamp changes, which leaves the order as moving it would.
     */
    private void place(final int page, final int parent, final int seen, final boolean firstSight)
    {
        level[page] = (byte)(inherits(parent) ? level[parent] : Math.max(1, seen));
        final int list = firstSight ? PROBATION_LIST : mainList(level[page]);
        clock++;
        // Tail first: just below the parent, unless the chain is 65,535 pages deep already.
        final long parentStamp = parent == NONE ? 0 : stampOf(parent);
        if (parent != NONE && (parentStamp & DEPTH_MASK) != 1)
        {
            final long below = parentStamp - 1;
            if (touched[parent] <= 0 && lists.listOf(parent) == list)
            {
                stamp[page] = below;
                if (lists.listOf(page) != list || lists.next(page) != parent)
                {
                    lists.remove(page);
                    lists.addBefore(parent, page);
                }
                return;
            }
            lists.remove(page);
            // Elsewhere (another list, or a parent hit and not moved yet), the pages newer than the parent's stamp are
            // this request's own, at the tail.
            int after = lists.tail(list);
            for (int steps = 0; after != NONE && stamp[after] > below && steps < MAX_SHIFT; steps++)
            {
                after = lists.prev(after);
            }
            if (after == NONE || stamp[after] <= below)
            {
                stamp[page] = below;
                if (after == NONE)
                {
                    lists.addFirst(list, page);
                }
                else
                {
                    lists.addAfter(after, page);
                }
                return;
            }
        }
        stamp[page] = clock << DEPTH_BITS;
        if (lists.listOf(page) != list || lists.next(page) != NONE)
        {
            lists.remove(page);
            lists.addLast(list, page);
        }
    }

    /** @return the main list of a chain level */
    private static int mainList(final int level)
    {
        return Math.min(Math.max(level, 2), LEVELS + 1) - 1;
    }

    /**
     * Acts on the hits of a touched page the walk met and of its touched ancestors: each goes where its hit would have
     * put it, just before its parent, the topmost first. The chain up is followed by reversing its parent links (no
     * stack), and every page on it is touched, so the work is that of hits already counted: O(1) amortised.
     *
     * @param page a touched page, the walk's cursor already past it
     */
    private void repair(final int page)
    {
        // Up: while the parent is touched by the hit just before this one in the same request, reverse the link.
        int below = NONE;
        int top = page;
        while (true)
        {
            final int parent = touchedParent[top];
            if (lists.listOf(parent) == PageLists.UNLINKED || touched[parent] != touched[top] + 1 || level[parent] != level[top])
            {
                break;
            }
            touchedParent[top] = below;
            below = top;
            top = parent;
        }
        // The topmost goes just before its parent if that one is in place, was not returned by this walk, and still has
        // the stamp the hit counted on; else where its stamp says, from the tail.
        final int parent = touchedParent[top];
        final long hitStamp = touched[top];
        final int list = mainList(level[top]);
        detach(top);
        if (lists.listOf(parent) == list && touched[parent] != -walks && stamp[parent] == hitStamp + 1)
        {
            lists.addBefore(parent, top);
            if (cursor[list] == parent)
            {
                cursor[list] = top;
            }
        }
        else
        {
            insertByStamp(list, top);
        }
        // Down: each page just before the one above it, placed a moment ago (so after the cursor).
        int above = top;
        while (below != NONE)
        {
            final int next = touchedParent[below];
            detach(below);
            lists.addBefore(above, below);
            if (cursor[list] == above)
            {
                cursor[list] = below;
            }
            above = below;
            below = next;
        }
    }

    /** Takes a touched page out of its list for a repair, its hit's stamp becoming its own, the walk's cursor kept valid. */
    private void detach(final int page)
    {
        final int from = lists.listOf(page);
        if (cursor[from] == page)
        {
            cursor[from] = lists.next(page);
        }
        stamp[page] = touched[page];
        forget(page);
        lists.remove(page);
    }

    /**
     * Links a detached page into a list where its stamp says, searched from the tail back over at most
     * {@value #MAX_SHIFT} newer pages and never before the walk's cursor, so that the walk still visits it. Past that
     * many (its parent was hit again, or left, since its hit, and the pages placed after it are many), its place is
     * somewhere between the cursor and the tail, which an O(1) step cannot find: it goes to the end whose stamp is
     * nearer its own. (Always the tail kept the Mooncake conversation trace's hits at 3e6 tokens 11 blocks below
     * moving each hit at once; always the cursor lost 0.005 at 1e7: see docs/PERFORMANCE.md, round six.)
     */
    private void insertByStamp(final int list, final int page)
    {
        final int cursorPage = cursor[list];
        if (cursorPage == NONE)
        {
            lists.addLast(list, page);
            cursor[list] = page;
            return;
        }
        final long pageStamp = stamp[page];
        int after = lists.tail(list);
        for (int steps = 0; after != cursorPage && stamp[after] > pageStamp && steps < MAX_SHIFT; steps++)
        {
            after = lists.prev(after);
        }
        if (stamp[after] <= pageStamp)
        {
            lists.addAfter(after, page);
        }
        else if (after == cursorPage || pageStamp - stamp[cursorPage] < stamp[lists.tail(list)] - pageStamp)
        {
            lists.addBefore(cursorPage, page);
            cursor[list] = page;
        }
        else
        {
            lists.addAfter(after, page);
        }
    }

    @Override
    public void onRemove(final int page)
    {
        final int list = lists.listOf(page);
        if (list == PageLists.UNLINKED)
        {
            return;
        }
        if (walking && cursor[list] == page)
        {
            cursor[list] = lists.next(page);
        }
        forget(page);
        lists.remove(page);
    }

    @Override
    public int first()
    {
        walking = true;
        walks++;
        final int probation = lists.size(PROBATION_LIST) - probationTouched;
        probationFirst = probation > 0 && probation >= probationLimit;
        for (int list = 0; list < LISTS; list++)
        {
            cursor[list] = lists.head(list);
        }
        return advance();
    }

    @Override
    public int next(final int page)
    {
        if (!walking || page != walkLast || page == NONE)
        {
            throw new IllegalStateException("next(" + page + ") outside a walk: the walk last returned " + (walking ? walkLast : NONE) +
                " (first() starts a walk; onInsert and onAccess end it)");
        }
        return advance();
    }

    private int advance()
    {
        while (true)
        {
            int chosen = -1;
            if (probationFirst && cursor[PROBATION_LIST] != NONE)
            {
                chosen = PROBATION_LIST;
            }
            else
            {
                long oldest = Long.MAX_VALUE;
                for (int list = 0; list < LISTS; list++)
                {
                    final int candidate = cursor[list];
                    if (candidate != NONE && stamp[candidate] + bonus[list] < oldest)
                    {
                        oldest = stamp[candidate] + bonus[list];
                        chosen = list;
                    }
                }
            }
            if (chosen < 0)
            {
                walkLast = NONE;
                return NONE;
            }
            final int page = cursor[chosen];
            cursor[chosen] = lists.next(page);
            if (touched[page] > 0)
            {
                repair(page); // each hit is acted on once, so the walk stays O(1) amortised
                continue;
            }
            touched[page] = -walks;
            walkLast = page;
            return page;
        }
    }

    /**
     * @param page a resident page
     * @return the key hash it was inserted with
     */
    long keyHash(final int page)
    {
        return keyHash[page];
    }

    /**
     * @param page a resident page
     * @return its chain level: the sketch frequency of its chain's first page below the last hub
     */
    int chainLevel(final int page)
    {
        return level[page];
    }

    /**
     * @param page a resident page
     * @return whether {@value #HUB_CHILDREN} or more pages were inserted under it
     */
    boolean isHub(final int page)
    {
        return children[page] >= HUB_CHILDREN;
    }

    /**
     * @param page a page
     * @return whether it is resident
     */
    boolean isResident(final int page)
    {
        return lists.listOf(page) != PageLists.UNLINKED;
    }

    /** @return the number of resident pages */
    public int size()
    {
        int size = 0;
        for (int list = 0; list < LISTS; list++)
        {
            size += lists.size(list);
        }
        return size;
    }

    /** @return the number of resident pages on probation */
    public int probationSize()
    {
        return lists.size(PROBATION_LIST) - probationTouched;
    }

    @Override
    public String name()
    {
        return setting.name();
    }

    @Override
    public String toString()
    {
        return setting.name() + "(probationShare=" + setting.probationShare() + ", frequencyWeight=" + setting.frequencyWeight() + ")";
    }
}
