package io.kvtier.bench;

import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The median the benchmarks report over their rounds, one slow round not moving it: the middle value, or the
 * mean of the middle two for an even count. (TierBenchmark takes the lower middle of its runs instead, so that
 * its figure is one run's; DeviceCopyBenchmark the upper.)
 */
public final class Median
{
    private Median()
    {
    }

    /**
     * @param values the rounds' values, left as they are
     * @return their median, NaN for none
     */
    public static double of(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return ofSorted(sorted);
    }

    /**
     * @param rounds one item per round
     * @param figure what to take of each
     * @param <T>    the rounds' type
     * @return the figure's median over the rounds, NaN for none
     */
    public static <T> double of(final List<T> rounds, final ToDoubleFunction<? super T> figure)
    {
        return ofSorted(rounds.stream().mapToDouble(figure).sorted().toArray());
    }

    private static double ofSorted(final double[] sorted)
    {
        final int n = sorted.length;
        if (n == 0)
        {
            return Double.NaN;
        }
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
