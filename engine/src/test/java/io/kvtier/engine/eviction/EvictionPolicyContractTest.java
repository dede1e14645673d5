package io.kvtier.engine.eviction;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every policy promises, whatever order it chooses: a walk visits each resident page once, stays valid while
 * the caller removes pages, ends with an insertion, and nothing is allocated once the arrays exist.
 */
class EvictionPolicyContractTest
{
    private static final int CAPACITY = 64;
    private static final int KEYS = 4096;

    static List<String> policies()
    {
        return EvictionPolicies.names();
    }

    /** Requests over a hub key 0 and chains of consecutive keys, some repeated soon, some never. */
    private static int[][] workload(final long seed, final int requests)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final int[][] out = new int[requests][];
        for (int r = 0; r < requests; r++)
        {
            final int length = 1 + random.nextInt(12);
            final boolean underHub = random.nextInt(3) == 0;
            final int base = 1 + random.nextInt(random.nextBoolean() ? 200 : KEYS - 20);
            final int[] keys = new int[length];
            for (int i = 0; i < length; i++)
            {
                keys[i] = underHub && i == 0 ? 0 : base + i;
            }
            out[r] = keys;
        }
        return out;
    }

    private static Replayer replayed(final EvictionPolicy policy, final long seed, final int requests)
    {
        final Replayer replayer = new Replayer(policy, CAPACITY, KEYS);
        for (final int[] keys : workload(seed, requests))
        {
            replayer.request(keys, keys.length);
        }
        return replayer;
    }

    private static Set<Integer> residentPages(final Replayer replayer)
    {
        final Set<Integer> pages = new HashSet<>();
        for (int key = 0; key < KEYS; key++)
        {
            if (replayer.resident(key))
            {
                pages.add(replayer.pageOf(key));
            }
        }
        return pages;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldWalkEveryResidentPageExactlyOnce(final String name)
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
            final Replayer replayer = replayed(policy, seed, 300);
            final Set<Integer> seen = new HashSet<>();
            for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
            {
                assertThat(page).isBetween(0, CAPACITY - 1);
                assertThat(seen.add(page)).as("page %d twice in one walk (seed %d)", page, seed).isTrue();
            }
            assertThat(seen).as("seed %d", seed).isEqualTo(residentPages(replayer)).hasSize(CAPACITY);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldKeepWalkingWhenTheCallerEvictsEachCandidateAfterReadingNext(final String name)
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
            final Set<Integer> resident = residentPages(replayed(policy, seed, 300));
            final Set<Integer> seen = new HashSet<>();
            int visited = 0;
            for (int page = policy.first(); page != EvictionPolicy.NONE; )
            {
                final int next = policy.next(page);
                assertThat(seen.add(page)).isTrue();
                // Evict two in three, skip the rest, as the engine skips pinned pages.
                if (visited++ % 3 != 2)
                {
                    policy.onRemove(page);
                }
                page = next;
            }
            assertThat(seen).as("seed %d", seed).isEqualTo(resident);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldKeepWalkingWhenTheCallerEvictsEachCandidateBeforeNext(final String name)
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
            final Set<Integer> resident = residentPages(replayed(policy, seed, 300));
            final Set<Integer> seen = new HashSet<>();
            for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
            {
                assertThat(seen.add(page)).isTrue();
                policy.onRemove(page);
            }
            assertThat(seen).as("seed %d", seed).isEqualTo(resident);
            assertThat(policy.first()).as("everything was evicted").isEqualTo(EvictionPolicy.NONE);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldNotReturnAPageRemovedAheadOfTheWalk(final String name)
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
            final Set<Integer> resident = residentPages(replayed(policy, seed, 300));
            final SplittableRandom random = new SplittableRandom(seed);
            final Set<Integer> removed = new HashSet<>();
            final Set<Integer> seen = new HashSet<>();
            for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
            {
                assertThat(removed).as("seed %d", seed).doesNotContain(page);
                seen.add(page);
                // Free a random page the walk has not reached, as the engine frees pages for other reasons.
                final int other = random.nextInt(CAPACITY);
                if (!seen.contains(other) && resident.contains(other) && random.nextInt(4) == 0)
                {
                    policy.onRemove(other);
                    removed.add(other);
                }
            }
            final Set<Integer> expected = new HashSet<>(resident);
            expected.removeAll(removed);
            assertThat(seen).as("seed %d", seed).isEqualTo(expected);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldWalkTheSameOrderWhetherPutOffWorkIsDoneOrNot(final String name)
    {
        for (long seed = 1; seed <= 10; seed++)
        {
            final EvictionPolicy idle = EvictionPolicies.forName(name, CAPACITY);
            final EvictionPolicy busy = EvictionPolicies.forName(name, CAPACITY);
            final SplittableRandom random = new SplittableRandom(seed);
            final Replayer idleReplayer = new Replayer(idle, CAPACITY, KEYS);
            final Replayer busyReplayer = new Replayer(busy, CAPACITY, KEYS);
            for (final int[] keys : workload(seed, 600))
            {
                idleReplayer.request(keys, keys.length);
                busyReplayer.request(keys, keys.length);
                idle.maintain(1 + random.nextInt(32));
            }
            // Maintenance in the middle of a walk, too: it ends no walk.
            final List<Integer> idleWalk = new ArrayList<>();
            for (int page = idle.first(); page != EvictionPolicy.NONE; page = idle.next(page))
            {
                idleWalk.add(page);
                idle.maintain(1 + random.nextInt(4));
            }
            final List<Integer> busyWalk = new ArrayList<>();
            for (int page = busy.first(); page != EvictionPolicy.NONE; page = busy.next(page))
            {
                busyWalk.add(page);
            }
            assertThat(idleReplayer.hits()).as("seed %d", seed).isEqualTo(busyReplayer.hits());
            assertThat(idleWalk).as("seed %d", seed).isEqualTo(busyWalk).hasSize(CAPACITY);
            idle.maintain(Integer.MAX_VALUE);
            assertThat(idle.maintain(1)).as("an unbounded budget left nothing (seed %d)", seed).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldEndTheWalkOnAnInsertion(final String name)
    {
        final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
        final Replayer replayer = replayed(policy, 7, 100);
        final int first = policy.first();
        policy.onRemove(first);
        final int key = replayer.keyOf(first);
        policy.onInsert(first, EvictionPolicy.NONE, Replayer.hash(key));

        assertThatThrownBy(() -> policy.next(first)).isInstanceOf(IllegalStateException.class).hasMessageContaining("first() starts a walk");
        assertThat(policy.first()).isBetween(0, CAPACITY - 1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldStartEmptyAndEndEmpty(final String name)
    {
        final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
        assertThat(policy.first()).isEqualTo(EvictionPolicy.NONE);
        assertThat(policy.name()).isEqualTo(name);

        policy.onInsert(3, EvictionPolicy.NONE, 42);
        policy.onRemove(3);
        policy.onRemove(3);
        assertThat(policy.first()).as("a removed page, removed twice").isEqualTo(EvictionPolicy.NONE);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldReplayAPoolOfOnePage(final String name)
    {
        final EvictionPolicy policy = EvictionPolicies.forName(name, 1);
        final Replayer replayer = new Replayer(policy, 1, 16);
        final int[] keys = {1, 2, 2, 3};
        replayer.request(keys, keys.length);
        replayer.request(new int[] {3}, 1);

        assertThat(replayer.resident(3)).isTrue();
        assertThat(replayer.hits()).isEqualTo(1);
        assertThat(policy.first()).isZero();
        assertThat(policy.next(0)).isEqualTo(EvictionPolicy.NONE);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldTakeAPageGivenAsItsOwnParentForAChainHead(final String name)
    {
        final EvictionPolicy policy = EvictionPolicies.forName(name, 4);
        policy.onInsert(2, 2, 99);
        policy.onAccess(2, 2);

        assertThat(policy.first()).isEqualTo(2);
        assertThat(policy.next(2)).isEqualTo(EvictionPolicy.NONE);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldStayWithinItsCapacityWhenPagesAreFreed(final String name)
    {
        final EvictionPolicy policy = EvictionPolicies.forName(name, CAPACITY);
        final Replayer replayer = replayed(policy, 3, 200);
        final SplittableRandom random = new SplittableRandom(3);
        for (final int[] keys : workload(4, 400))
        {
            replayer.request(keys, keys.length);
            if (random.nextInt(5) == 0)
            {
                final int page = random.nextInt(replayer.size());
                replayer.free(replayer.keyOf(page));
            }
        }
        final Set<Integer> seen = new HashSet<>();
        for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
        {
            seen.add(page);
        }
        assertThat(seen).isEqualTo(residentPages(replayer));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void shouldNotAllocateInTheSteadyState(final String name)
    {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);

        final int capacity = 512;
        final EvictionPolicy policy = EvictionPolicies.forName(name, capacity);
        final Replayer replayer = new Replayer(policy, capacity, KEYS);
        final int[][] requests = workload(11, 2_000);
        // Measure windows until one is clean: the interpreter and the JIT allocate while they warm up.
        long best = Long.MAX_VALUE;
        long operations = 0;
        for (int window = 0; window < 60 && best > 0; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int r = 0; r < requests.length; r++)
            {
                replayer.request(requests[r], requests[r].length);
                if (r % 2 == 0)
                {
                    policy.maintain(16); // half the requests followed by idle time, half back to back
                }
            }
            for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
            {
                operations++;
            }
            best = Math.min(best, threads.getCurrentThreadAllocatedBytes() - before);
        }
        assertThat(replayer.evictions()).as("the pool turned over").isGreaterThan(capacity);
        assertThat(operations).isPositive();
        assertThat(best).as("bytes allocated by 2,000 requests (with evictions) and a full walk, in the best window").isZero();
    }
}
