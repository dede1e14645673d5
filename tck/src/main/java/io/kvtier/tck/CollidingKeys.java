package io.kvtier.tck;

import io.kvtier.spi.PageKey;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Distinct page keys that careless indexing cannot tell apart, for the kit's collision test. A tier
 * must tell keys apart by all 128 bits; these keys are built so that each weaker identity maps many
 * of them to one value:
 *
 * <ul>
 *   <li>all but a few share one {@link PageKey#hashCode()}: they form a grid of highs and lows whose
 *       {@link Long#hashCode(long)} values are fixed, so every high is shared by many keys, every low
 *       too, and any combination of the two hashes collides (a tier indexing by {@code hashCode()}, by
 *       {@code high} or {@code low} alone, or naming objects by either half's hex digits);</li>
 *   <li>pairs whose halves are swapped ({@code high ^ low} and {@code high + low} collide);</li>
 *   <li>pairs whose halves, written in hex or decimal without leading zeros, concatenate to the same
 *       text ({@code 0x1, 0x23..} and {@code 0x12, 0x3..});</li>
 *   <li>keys made of zeros, all-ones and the extreme values (a table that takes 0 for "empty").</li>
 * </ul>
 *
 * <p>The hash code grid relies on how a record combines its components ({@code 31 * h(high) + h(low)});
 * {@link #generate} checks the keys it built do collide and throws if a JDK ever hashes records otherwise.
 */
final class CollidingKeys
{
    private static final List<PageKey> EDGES = List.of(
        new PageKey(0, 0), new PageKey(0, 1), new PageKey(1, 0), new PageKey(0, -1), new PageKey(-1, 0), new PageKey(-1, -1),
        new PageKey(Long.MIN_VALUE, 0), new PageKey(0, Long.MIN_VALUE), new PageKey(Long.MIN_VALUE, Long.MIN_VALUE),
        new PageKey(Long.MAX_VALUE, Long.MAX_VALUE), new PageKey(Long.MIN_VALUE, Long.MAX_VALUE));

    private CollidingKeys()
    {
    }

    /**
     * @param count  how many keys, at least 64
     * @param random where the free bits come from
     * @return {@code count} distinct keys, in random order; all but the first few of the
     *         {@link #sharedHashCodeKeys} share one hash code
     */
    static List<PageKey> generate(final int count, final SplittableRandom random)
    {
        if (count < 64)
        {
            throw new IllegalArgumentException("count=" + count + " must be at least 64 to hold every kind of collision");
        }
        final Set<PageKey> keys = new LinkedHashSet<>(EDGES);
        while (keys.size() < EDGES.size() + 8)
        {
            final long a = random.nextLong();
            final long b = random.nextLong();
            keys.add(new PageKey(a, b));
            keys.add(new PageKey(b, a));
        }
        // "1" + "23456789abcdef01" and "12" + "3456789abcdef01" (the low half's leading zero dropped).
        final long tail = random.nextLong() >>> 12;
        keys.add(new PageKey(0x1L, (0x2L << 60) | (0x3L << 56) | (tail & 0x00FF_FFFF_FFFF_FFFFL)));
        keys.add(new PageKey(0x12L, (0x3L << 56) | (tail & 0x00FF_FFFF_FFFF_FFFFL)));
        // Decimal: "1" + "23" and "12" + "3".
        keys.add(new PageKey(1, 23));
        keys.add(new PageKey(12, 3));
        keys.addAll(sharedHashCodeKeys(count - keys.size(), random));
        final List<PageKey> shuffled = new ArrayList<>(keys);
        Collections.shuffle(shuffled, new Random(random.nextLong()));
        return List.copyOf(shuffled);
    }

    /**
     * @param count  how many keys
     * @param random where the free bits come from
     * @return distinct keys sharing one {@link PageKey#hashCode()}, laid out as a grid of shared highs and lows
     */
    static List<PageKey> sharedHashCodeKeys(final int count, final SplittableRandom random)
    {
        final int side = (int)Math.ceil(Math.sqrt(count));
        final int highHash = random.nextInt();
        final int lowHash = random.nextInt();
        final List<Long> highs = halvesHashingTo(highHash, side, random);
        final List<Long> lows = halvesHashingTo(lowHash, side, random);
        final List<PageKey> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            keys.add(new PageKey(highs.get(i / side), lows.get(i % side)));
        }
        final int expected = 31 * highHash + lowHash;
        for (final PageKey key : keys)
        {
            if (key.hashCode() != expected)
            {
                throw new IllegalStateException("PageKey.hashCode() of " + key + " is " + key.hashCode() + ", not " + expected
                    + ": this JDK hashes records otherwise than 31 * h(high) + h(low), and CollidingKeys must follow it");
            }
        }
        return keys;
    }

    /** Distinct longs whose {@link Long#hashCode(long)} (upper half XOR lower half) is {@code hash}. */
    private static List<Long> halvesHashingTo(final int hash, final int count, final SplittableRandom random)
    {
        final Set<Long> values = new LinkedHashSet<>();
        while (values.size() < count)
        {
            final long upper = random.nextInt() & 0xFFFF_FFFFL;
            values.add((upper << 32) | ((hash ^ (int)upper) & 0xFFFF_FFFFL));
        }
        return List.copyOf(values);
    }
}
