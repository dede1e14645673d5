package io.kvtier.engine.core;

/**
 * Bytes that may pass per unit of time, with a burst: a migration's rate limit, a tier's write budget.
 * Refills by the elapsed time whenever asked; allocates nothing. Engine thread only.
 */
final class TokenBucket
{
    private final double bytesPerNano;
    private final long burst;
    private double tokens;
    private long lastNanos;

    /**
     * @param bytesPerSecond how many bytes pass per second, at length
     * @param burst          the most that may pass at once; the bucket starts full
     * @param nowNanos       the engine clock now
     */
    TokenBucket(final double bytesPerSecond, final long burst, final long nowNanos)
    {
        this.bytesPerNano = bytesPerSecond / 1e9;
        this.burst = Math.max(1, burst);
        this.tokens = this.burst;
        this.lastNanos = nowNanos;
    }

    private void refill(final long nowNanos)
    {
        final long elapsed = nowNanos - lastNanos;
        if (elapsed > 0)
        {
            tokens = Math.min(burst, tokens + elapsed * bytesPerNano);
            lastNanos = nowNanos;
        }
    }

    /**
     * @param bytes    bytes that would pass
     * @param nowNanos the engine clock now
     * @return whether they may pass now (without taking them)
     */
    boolean allows(final long bytes, final long nowNanos)
    {
        refill(nowNanos);
        return tokens >= Math.min(bytes, burst);
    }

    /**
     * Takes bytes that passed; the bucket may go below zero for a page larger than the burst, which later
     * refills repay.
     *
     * @param bytes    bytes that passed
     * @param nowNanos the engine clock now
     */
    void take(final long bytes, final long nowNanos)
    {
        refill(nowNanos);
        tokens -= bytes;
    }

    /** @return bytes that may pass now, without refilling */
    long available()
    {
        return (long)Math.max(0, tokens);
    }

    /** @return the most that may pass at once */
    long burst()
    {
        return burst;
    }
}
