package io.kvtier.device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Layouts of every kind the planner meets, the byte pattern that marks where each byte belongs, and
 * images of what device and host memory must hold after a copy, for byte-by-byte comparisons.
 */
final class KvFixtures
{
    /** What the host segment holds before any copy: a page byte not written must still be this. */
    static final byte HOST_SENTINEL = (byte)0x5A;

    private KvFixtures()
    {
    }

    /** The kinds of layer-first layout an engine uses. */
    enum Kind
    {
        /** One allocation per tensor, in a shuffled order with gaps, so nothing is contiguous or regular. */
        SEPARATE_SHUFFLED,
        /** One allocation for everything. */
        CONTIGUOUS,
        /** Per layer [blocks][T]..., the layers' allocations back to back. */
        INTERLEAVED_REGULAR,
        /** Per layer [blocks][T]..., the layers' allocations at irregular gaps. */
        INTERLEAVED_IRREGULAR
    }

    static LayerFirstLayout layout(final Kind kind, final KvShape shape, final int blocks, final long seed)
    {
        final Random random = new Random(seed);
        final long tensorBytes = blocks * shape.blockBytes();
        return switch (kind)
        {
            case CONTIGUOUS -> LayerFirstLayout.contiguous(shape, blocks, 64);
            case SEPARATE_SHUFFLED ->
            {
                final List<Integer> order = new ArrayList<>();
                for (int i = 0; i < shape.slots(); i++)
                {
                    order.add(i);
                }
                Collections.shuffle(order, random);
                final long[] bases = new long[shape.slots()];
                long next = 8;
                for (final int slot : order)
                {
                    bases[slot] = next;
                    next += tensorBytes + 1 + random.nextInt(100);
                }
                yield LayerFirstLayout.separate(shape, blocks, bases);
            }
            case INTERLEAVED_REGULAR, INTERLEAVED_IRREGULAR ->
            {
                final long layerBytes = tensorBytes * shape.tensorsPerLayer();
                final long[] bases = new long[shape.layers()];
                long next = 0;
                for (int l = 0; l < shape.layers(); l++)
                {
                    bases[l] = next;
                    next += layerBytes + (kind == Kind.INTERLEAVED_IRREGULAR ? 1 + random.nextInt(100) : 0);
                }
                yield LayerFirstLayout.interleaved(shape, blocks, bases);
            }
        };
    }

    /** The byte that belongs at byte {@code i} of token {@code token} of block {@code block} of a tensor. */
    static byte pattern(final int layer, final int tensor, final int block, final int token, final long i)
    {
        long h = layer * 0x9E3779B97F4A7C15L ^ (tensor + 1) * 0xC2B2AE3D27D4EB4FL ^ (block + 7) * 0x165667B19E3779F9L
            ^ (token + 3) * 0x27D4EB2F165667C5L ^ (i + 11) * 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 29;
        return (byte)h;
    }

    /** Writes every byte of every block of the layout with its pattern. */
    static void fillDevice(final MemorySegment device, final LayerFirstLayout layout)
    {
        final KvShape shape = layout.shape();
        for (int l = 0; l < shape.layers(); l++)
        {
            for (int t = 0; t < shape.tensorsPerLayer(); t++)
            {
                for (int b = 0; b < layout.blocks(); b++)
                {
                    for (int n = 0; n < shape.blockTokens(); n++)
                    {
                        final long at = layout.tokenAddress(l, t, b, n);
                        for (long i = 0; i < shape.tokenBytes(); i++)
                        {
                            device.set(ValueLayout.JAVA_BYTE, at + i, pattern(l, t, b, n, i));
                        }
                    }
                }
            }
        }
    }

    /** The host segment after block {@code block}'s first {@code valid} tokens went to the page at {@code pageOffset}. */
    static byte[] expectedHost(final long hostBytes, final KvShape shape, final int block, final int valid, final long pageOffset)
    {
        return expectedHost(hostBytes, shape, new int[] {block}, new long[] {pageOffset}, valid);
    }

    /** The host segment after each block went to its page, the last one's first {@code lastValid} tokens only. */
    static byte[] expectedHost(final long hostBytes, final KvShape shape, final int[] blocks, final long[] pageOffsets, final int lastValid)
    {
        final byte[] image = new byte[Math.toIntExact(hostBytes)];
        java.util.Arrays.fill(image, HOST_SENTINEL);
        for (int b = 0; b < blocks.length; b++)
        {
            final int valid = b == blocks.length - 1 ? lastValid : shape.blockTokens();
            for (int l = 0; l < shape.layers(); l++)
            {
                for (int t = 0; t < shape.tensorsPerLayer(); t++)
                {
                    for (int n = 0; n < valid; n++)
                    {
                        final long at = pageOffsets[b] + KvPageDescriptor.tokenOffset(shape, l, t, n);
                        for (long i = 0; i < shape.tokenBytes(); i++)
                        {
                            image[Math.toIntExact(at + i)] = pattern(l, t, blocks[b], n, i);
                        }
                    }
                }
            }
        }
        return image;
    }

    /** Zeroed device memory after block {@code from}'s first {@code valid} tokens were loaded into block {@code to}. */
    static byte[] expectedDevice(final long deviceBytes, final LayerFirstLayout layout, final int from, final int to, final int valid)
    {
        return expectedDevice(deviceBytes, layout, new int[] {from}, new int[] {to}, valid);
    }

    /** Zeroed device memory after each {@code from[i]} was loaded into {@code to[i]}, the last one's first {@code lastValid} tokens only. */
    static byte[] expectedDevice(final long deviceBytes, final LayerFirstLayout layout, final int[] from, final int[] to, final int lastValid)
    {
        final KvShape shape = layout.shape();
        final byte[] image = new byte[Math.toIntExact(deviceBytes)];
        for (int b = 0; b < from.length; b++)
        {
            final int valid = b == from.length - 1 ? lastValid : shape.blockTokens();
            for (int l = 0; l < shape.layers(); l++)
            {
                for (int t = 0; t < shape.tensorsPerLayer(); t++)
                {
                    for (int n = 0; n < valid; n++)
                    {
                        final long at = layout.tokenAddress(l, t, to[b], n);
                        for (long i = 0; i < shape.tokenBytes(); i++)
                        {
                            image[Math.toIntExact(at + i)] = pattern(l, t, from[b], n, i);
                        }
                    }
                }
            }
        }
        return image;
    }

    /** @return the first index where the segment differs from the image, or -1 */
    static long firstDifference(final MemorySegment segment, final byte[] image)
    {
        return segment.mismatch(MemorySegment.ofArray(image));
    }

    /** Checks the plan's own properties: bytes, disjoint destinations, everything inside the page and the layout. */
    static void checkPlan(final CopyPlan plan, final LayerFirstLayout layout, final int valid, final long pageOffset)
    {
        checkPlan(plan, layout, new long[] {pageOffset}, valid);
    }

    private static boolean coveredByPages(final long start, final long length, final long[] pageOffsets, final long pageBytes)
    {
        final long[] sorted = pageOffsets.clone();
        java.util.Arrays.sort(sorted);
        long at = start;
        for (final long page : sorted)
        {
            if (page <= at && at < page + pageBytes)
            {
                at = page + pageBytes;
            }
        }
        return at >= start + length;
    }

    /** The same for a plan of several blocks, each row inside the pages. */
    static void checkPlan(final CopyPlan plan, final LayerFirstLayout layout, final long[] pageOffsets, final int lastValid)
    {
        final KvShape shape = layout.shape();
        final long expectedBytes = (pageOffsets.length - 1) * shape.pageBytes() + (long)shape.slots() * lastValid * shape.tokenBytes();
        if (plan.totalBytes() != expectedBytes)
        {
            throw new AssertionError("plan moves " + plan.totalBytes() + " bytes, the blocks have " + expectedBytes + ": " + plan);
        }
        final boolean toHost = plan.direction() == CopyDirection.TO_HOST;
        final List<long[]> destinations = new ArrayList<>();
        for (final CopyOp op : plan.ops())
        {
            for (long row = 0; row < op.height(); row++)
            {
                final long device = op.deviceAddress() + row * op.devicePitch();
                final long host = op.hostOffset() + row * op.hostPitch();
                // A row may run on from one page into the next when both sides are contiguous: check it
                // against the pages' union.
                if (!coveredByPages(host, op.width(), pageOffsets, shape.pageBytes()))
                {
                    throw new AssertionError("row " + row + " of " + op + " is not inside the pages " + java.util.Arrays.toString(pageOffsets));
                }
                if (device < 0 || device + op.width() > layout.extent())
                {
                    throw new AssertionError("row " + row + " of " + op + " leaves the layout's extent " + layout.extent());
                }
                destinations.add(new long[] {toHost ? host : device, op.width()});
            }
        }
        destinations.sort((a, b) -> Long.compare(a[0], b[0]));
        for (int i = 1; i < destinations.size(); i++)
        {
            if (destinations.get(i - 1)[0] + destinations.get(i - 1)[1] > destinations.get(i)[0])
            {
                throw new AssertionError("destination ranges overlap at " + destinations.get(i)[0] + ": " + plan);
            }
        }
    }
}
