package io.kvtier.device;

import java.util.List;

/**
 * The copies that move blocks between the layer-first device buffers and page-first pool pages.
 * Destination ranges never overlap, so the copies may run in any order or all at once.
 *
 * @param direction which way the bytes go
 * @param ops       the copies
 */
record CopyPlan(CopyDirection direction, List<CopyOp> ops)
{
    /**
     * @param direction which way
     * @param ops       the copies, copied
     */
    public CopyPlan
    {
        ops = List.copyOf(ops);
    }

    /** @return bytes the plan moves */
    public long totalBytes()
    {
        long total = 0;
        for (final CopyOp op : ops)
        {
            total += op.bytes();
        }
        return total;
    }

    /** @return copies that are strided (more than one row) */
    public int stridedOps()
    {
        int n = 0;
        for (final CopyOp op : ops)
        {
            n += op.isContiguous() ? 0 : 1;
        }
        return n;
    }

    /** @return rows across all copies: how many contiguous copies the plan stands for */
    public long rows()
    {
        long rows = 0;
        for (final CopyOp op : ops)
        {
            rows += op.height();
        }
        return rows;
    }
}
