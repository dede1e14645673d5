package io.kvtier.bench.chaos;

import io.kvtier.bench.workload.PagePattern;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The values the C and Python chaos clients' restatements of {@link PagePattern} and of the request draws are
 * checked against (clients/c/test/kvtier_client_test.c test_chaos_pattern, clients/python/test_kvtier_chaos.py),
 * asserted here of the Java itself: a change to the pattern fails this test, which says where else to change it.
 */
class ChaosClientVectorsTest
{
    private static final String ELSEWHERE = "; the C and Python chaos clients restate this (clients/c/chaos/page_pattern.h,"
        + " clients/python/kvtier/chaos_client.py): change them and their tests with it";

    /** high, low, word 0, word 1, word 2047, and the SHA-256 of the 16 KiB page. */
    private static final Object[][] PAGES = {
        {0L, 0L, 0xe220a8397b1dcdafL, 0x6e789e6aa1b965f4L, 0x28b3bf5520dddf02L, "b4f179edd8a88ae4fa68d7e5bf2e987c90d5d19f093bef2e0847487253b64678"},
        {0x0123456789abcdefL, 0xfedcba9876543210L, 0x1727f342e7bd80deL, 0x73c5b0f22f84f43fL, 0x9dee89a02a073577L,
            "8184e86c166376dcf455fb168813c507e264b5b3143a01835367a69de77e067c"},
        {-1L, 0L, 0xe4d971771b652c20L, 0xe99ff867dbf682c9L, 0xfda5fa35cc1123d6L, "486814438291a8bcb51808a4289d46438bb59a0064f2299098b634b40b2cae57"},
        {0x4c1475d89b15738aL, 0x68acd1ba4cb6e331L, 0x57cd2f6528f45cecL, 0xe1fad11b3700e0a1L, 0x69e53abd02ef4df4L,
            "814dd13727b2a33a27617123ce1b44caabd3a0b7697e2661b6699a822f323ab1"},
    };

    @Test
    void shouldFillPagesWithTheWordsTheOtherClientsExpect() throws Exception
    {
        // The other clients write the words little-endian: the Java writes them in native order.
        assertThat(ByteOrder.nativeOrder()).as("the machine's byte order").isEqualTo(ByteOrder.LITTLE_ENDIAN);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment page = arena.allocate(16384);
            for (final Object[] v : PAGES)
            {
                PagePattern.fill(page, (long)v[0], (long)v[1], 16384);
                final String key = String.format("key %016x%016x", (long)v[0], (long)v[1]);
                assertThat(new long[] {page.get(ValueLayout.JAVA_LONG_UNALIGNED, 0), page.get(ValueLayout.JAVA_LONG_UNALIGNED, 8),
                    page.get(ValueLayout.JAVA_LONG_UNALIGNED, 16376)}).as(key + ELSEWHERE).containsExactly((long)v[2], (long)v[3], (long)v[4]);
                assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(page.toArray(ValueLayout.JAVA_BYTE))))
                    .as(key + ELSEWHERE).isEqualTo(v[5]);
            }
        }
    }

    @Test
    void shouldKeyTheLastVectorPageFromTheChaosNamespace()
    {
        final int[] tokens = new int[32];
        for (int i = 0; i < 32; i++)
        {
            tokens[i] = i < 16 ? i : 50_000_000 + 3 * 100_003 + i - 16;
        }
        final PageKeyChain chain = new PageKeyChain(2);
        chain.compute(new Namespace(ChaosCampaign.MODEL, "chaos-page16", 0, ""), tokens, 32, ChaosClientProcess.PAGE_TOKENS, false);
        assertThat(new long[] {chain.high(1), chain.low(1)}).containsExactly((long)PAGES[3][0], (long)PAGES[3][1]);
    }

    @Test
    void shouldDrawTheRequestsTheOtherClientsDrawFromTheSameSeed()
    {
        final long[] seeds = {20_000_061L, -7L};
        final int[][] draws = {
            {2, 2, 0, 7, 13, 1, 3, 0, 2, 0, 3, 2, 4, 11, 2, 3, 5, 2, 7, 13, 2, 0, 4, 2, 6, 15, 2, 7, 14, 1, 3, 8, 2, 3, 7, 2},
            {2, 1, 1, 5, 11, 1, 1, 0, 2, 3, 7, 0, 5, 10, 0, 5, 10, 1, 5, 13, 0, 2, 8, 1, 7, 15, 1, 7, 15, 1, 7, 15, 2, 6, 12, 0},
        };
        for (int s = 0; s < seeds.length; s++)
        {
            final SplittableRandom random = new SplittableRandom(seeds[s]);
            final int[] got = new int[draws[s].length];
            for (int i = 0; i < got.length; i++)
            {
                got[i] = random.nextInt(new int[] {8, 16, 3}[i % 3]);
            }
            assertThat(got).as("seed %d%s", seeds[s], ELSEWHERE).containsExactly(draws[s]);
        }
    }
}
