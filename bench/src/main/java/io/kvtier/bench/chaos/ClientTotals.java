package io.kvtier.bench.chaos;

/**
 * What a chaos client process has done so far, as it last said on a {@code T} line (see
 * {@link ChaosClientProcess}): pages verified and read wrong, pages committed and acknowledged as in
 * L3, requests made and requests the engine refused.
 */
record ClientTotals(long verified, long wrong, long committed, long acknowledged, long requests, long refused)
{
    /** Before a client's first T line. */
    static final ClientTotals NONE = new ClientTotals(0, 0, 0, 0, 0, 0);

    /**
     * @param line {@code T verified wrong committed acked requests refused}
     * @throws IllegalArgumentException naming the line when it has not six counts after the T
     */
    static ClientTotals parse(final String line)
    {
        final String[] f = line.split(" ");
        if (f.length != 7 || !f[0].equals("T"))
        {
            throw new IllegalArgumentException("a totals line is 'T' and six counts, not '" + line + "'");
        }
        try
        {
            return new ClientTotals(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                Long.parseLong(f[5]), Long.parseLong(f[6]));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("a totals line is 'T' and six counts, not '" + line + "'", ex);
        }
    }
}
