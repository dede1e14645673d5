package io.kvtier.device;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A reusable list of copies in one direction, kept as parallel arrays: what {@link CopyPlanBuilder}
 * fills and {@link CopyExecutor#submit(CopyOps, long, java.lang.foreign.MemorySegment)} runs. Unlike a
 * {@link CopyPlan} it is mutable and grows only when a request needs more copies than any before it,
 * so a steady stream of requests plans and copies without allocating. One thread at a time.
 */
public final class CopyOps
{
    private CopyDirection direction = CopyDirection.TO_DEVICE;
    private int size;
    private long[] deviceAddress;
    private long[] devicePitch;
    private long[] hostOffset;
    private long[] hostPitch;
    private long[] width;
    private long[] height;

    /** @param capacity copies held before the arrays grow */
    public CopyOps(final int capacity)
    {
        final int initial = Math.max(1, capacity);
        deviceAddress = new long[initial];
        devicePitch = new long[initial];
        hostOffset = new long[initial];
        hostPitch = new long[initial];
        width = new long[initial];
        height = new long[initial];
    }

    /**
     * Empties the list for copies going {@code newDirection}.
     *
     * @param newDirection which way the next copies go
     * @return this
     */
    public CopyOps clear(final CopyDirection newDirection)
    {
        this.direction = newDirection;
        this.size = 0;
        return this;
    }

    /**
     * Appends one copy, checked as {@link CopyOp} checks it.
     *
     * @param device      device address of the first row
     * @param devPitch    bytes between device rows
     * @param host        host offset of the first row
     * @param hPitch      bytes between host rows
     * @param rowBytes    bytes per row
     * @param rows        rows
     */
    public void add(final long device, final long devPitch, final long host, final long hPitch, final long rowBytes, final long rows)
    {
        CopyOp.check(devPitch, hPitch, rowBytes, rows);
        if (size == width.length)
        {
            final int grown = 2 * size;
            deviceAddress = Arrays.copyOf(deviceAddress, grown);
            devicePitch = Arrays.copyOf(devicePitch, grown);
            hostOffset = Arrays.copyOf(hostOffset, grown);
            hostPitch = Arrays.copyOf(hostPitch, grown);
            width = Arrays.copyOf(width, grown);
            height = Arrays.copyOf(height, grown);
        }
        deviceAddress[size] = device;
        devicePitch[size] = devPitch;
        hostOffset[size] = host;
        hostPitch[size] = hPitch;
        width[size] = rowBytes;
        height[size] = rows;
        size++;
    }

    /**
     * Appends every copy of {@code other} (same direction expected).
     *
     * @param other copies to append
     */
    public void addAll(final CopyOps other)
    {
        for (int i = 0; i < other.size; i++)
        {
            add(other.deviceAddress[i], other.devicePitch[i], other.hostOffset[i], other.hostPitch[i], other.width[i], other.height[i]);
        }
    }

    /** @return which way the bytes go */
    public CopyDirection direction()
    {
        return direction;
    }

    /** @return copies held */
    public int size()
    {
        return size;
    }

    /** @param i a copy @return its device address */
    public long deviceAddress(final int i)
    {
        return deviceAddress[i];
    }

    /** @param i a copy @return bytes between its device rows */
    public long devicePitch(final int i)
    {
        return devicePitch[i];
    }

    /** @param i a copy @return its host offset */
    public long hostOffset(final int i)
    {
        return hostOffset[i];
    }

    /** @param i a copy @return bytes between its host rows */
    public long hostPitch(final int i)
    {
        return hostPitch[i];
    }

    /** @param i a copy @return its bytes per row */
    public long width(final int i)
    {
        return width[i];
    }

    /** @param i a copy @return its rows */
    public long height(final int i)
    {
        return height[i];
    }

    /** @return bytes the copies move */
    public long totalBytes()
    {
        long total = 0;
        for (int i = 0; i < size; i++)
        {
            total += width[i] * height[i];
        }
        return total;
    }

    /** @return the copies as an immutable plan (allocates: for tests and reports) */
    public CopyPlan toPlan()
    {
        final List<CopyOp> ops = new ArrayList<>(size);
        for (int i = 0; i < size; i++)
        {
            ops.add(new CopyOp(deviceAddress[i], devicePitch[i], hostOffset[i], hostPitch[i], width[i], height[i]));
        }
        return new CopyPlan(direction, ops);
    }

    /**
     * @param plan an immutable plan
     * @return its copies in a new list
     */
    public static CopyOps of(final CopyPlan plan)
    {
        final CopyOps ops = new CopyOps(plan.ops().size());
        ops.clear(plan.direction());
        for (final CopyOp op : plan.ops())
        {
            ops.add(op.deviceAddress(), op.devicePitch(), op.hostOffset(), op.hostPitch(), op.width(), op.height());
        }
        return ops;
    }
}
