package io.kvtier.engine.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Frames the engine owns outside the pool, where reads of tiers it does not trust land: the tier reads
 * into a staging frame, and the batch copies it into the pool frame and verifies that on completion
 * ({@link TierIoBatch#complete}), so whatever the tier writes afterwards lands here and never in a
 * page a client is served. {@code l3.staging-frames} of them, each one page frame long and 4 KiB
 * aligned, allocated once at start.
 *
 * <p>The free frames form a FIFO on the engine thread, so a frame given back is reused as late as the
 * others allow: a late write into a frame already reused for another read can only make that read fail
 * its verification (a miss), never pass it with the wrong bytes. A read that finds no free frame waits
 * in its tier's queue until one is given back ({@link TierIo}).
 *
 * <p>Threads: {@link #take} and {@link #give} on the engine thread only; {@link #frame} from any thread.
 * The memory is freed only by {@link #close()}, which the engine skips while a tier may still write
 * into it.
 */
final class StagingFrames
{
    private static final long ALIGNMENT = 4096;

    private final Arena arena;
    private final MemorySegment[] frames;
    private final int[] free;
    private int head;
    private int count;

    /**
     * @param frameCount  how many frames
     * @param frameLength bytes per frame (one page frame: payload and trailer block)
     */
    StagingFrames(final int frameCount, final long frameLength)
    {
        if (frameCount < 1)
        {
            throw new IllegalArgumentException("staging needs at least one frame, not " + frameCount);
        }
        this.arena = Arena.ofShared();
        final MemorySegment region = arena.allocate(frameCount * frameLength, ALIGNMENT);
        this.frames = new MemorySegment[frameCount];
        this.free = new int[frameCount];
        for (int f = 0; f < frameCount; f++)
        {
            frames[f] = region.asSlice(f * frameLength, frameLength);
            free[f] = f;
        }
        this.count = frameCount;
    }

    /** @return how many frames there are */
    int capacity()
    {
        return frames.length;
    }

    /** @return frames free to take */
    int available()
    {
        return count;
    }

    /** @return the frame taken least recently given back; call only when {@link #available()} is positive */
    int take()
    {
        if (count == 0)
        {
            throw new IllegalStateException("no staging frame free: all " + frames.length + " are in reads");
        }
        final int frame = free[head];
        head = (head + 1) % free.length;
        count--;
        return frame;
    }

    /** Gives a frame back, to be taken after every frame now free. */
    void give(final int frame)
    {
        free[(head + count) % free.length] = frame;
        count++;
    }

    /**
     * @param frame a frame's index
     * @return its memory, one page frame long
     */
    MemorySegment frame(final int frame)
    {
        return frames[frame];
    }

    /** Frees the memory; only once no tier can still write into it. */
    void close()
    {
        arena.close();
    }
}
