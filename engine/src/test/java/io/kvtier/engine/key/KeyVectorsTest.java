package io.kvtier.engine.key;

import io.kvtier.client.Namespace;

import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The published test vectors of docs/keys.md, produced by docs/keys-reference.py (Python's hashlib):
 * the Java implementation must give the same keys byte for byte.
 */
class KeyVectorsTest
{
    private static String[] chain(final Namespace namespace, final int[] tokens, final int pageTokens)
    {
        final long[] root = {namespace.rootHigh(), namespace.rootLow()};
        final KeyChain chain = new KeyChain(16).compute(root[0], root[1], tokens, tokens.length, pageTokens, true);
        final String[] hex = new String[chain.size() + 1];
        hex[0] = new PageKey(root[0], root[1]).toHex();
        for (int i = 0; i < chain.size(); i++)
        {
            hex[i + 1] = chain.key(i).toHex();
        }
        return hex;
    }

    @Test
    void shouldMatchTheBasicVector()
    {
        assertThat(chain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, ""),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "0d8d5b6bec68e56e0fbbc9d39dcc0d8a",
            "a306ce302f3ed8d29a2b9b308d8a004e",
            "de9d1e0f01328e3c5d91aee32a7a6c74",
            "8b6ea36129dca0a99cd04d48645f869d");
    }

    @Test
    void shouldMatchTheTenantSaltVector()
    {
        assertThat(chain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "tenant-a"),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "02f0fbc3dbf959653fa7440cc0d3540b",
            "111b2ca5a20b5eb5192b6a75129009f1",
            "2308a94ef5b62283e4b1e317eb1599ab",
            "3e693d53b1b9dc29970298f01a01e3d5");
    }

    @Test
    void shouldMatchTheRankVector()
    {
        assertThat(chain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp2", 1, ""),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "f6e18b73798c10bacc34f49cd4d8b89c",
            "b3a2734ccb8c8046474967b920b473fa",
            "fdeca7856aee0e9d83b1955a665d08dc",
            "9bb1242cc2e1ab29b2150b676bfe5581");
    }

    @Test
    void shouldMatchTheLargeIdVectorWithUnsignedTokens()
    {
        assertThat(chain(new Namespace("Qwen/Qwen3-8B", "fp8/page4", 3, ""), new int[] {0, 151643, (int)4294967295L, 7, 9}, 4))
            .containsExactly(
                "40737e99457318b2b3f67d7364f833d5",
                "21d0ab516d55c6518418204168398d40",
                "59ea6f9fca8bf76b7bf844e318fcee24");
    }

    @Test
    void shouldGiveAPartialLastPageAKeyOfItsOwn()
    {
        final Namespace ns = new Namespace("m", "l", 0, "");
        final long[] root = {ns.rootHigh(), ns.rootLow()};
        final int[] tokens = IntStream.range(0, 32).toArray();
        final KeyChain full = new KeyChain(4).compute(root[0], root[1], tokens, 32, 16, true);
        final KeyChain partial = new KeyChain(4).compute(root[0], root[1], tokens, 24, 16, true);
        assertThat(partial.size()).isEqualTo(2);
        assertThat(partial.key(0)).isEqualTo(full.key(0));
        assertThat(partial.key(1)).isNotEqualTo(full.key(1));
        assertThat(partial.tokenCount(1)).isEqualTo(8);
        assertThat(new KeyChain(4).compute(root[0], root[1], tokens, 24, 16, false).size()).isEqualTo(1);
    }

    @Test
    void shouldRejectAChainLongerThanItsCapacity()
    {
        final Namespace ns = new Namespace("m", "l", 0, "");
        final long[] root = {ns.rootHigh(), ns.rootLow()};
        assertThatThrownBy(() -> new KeyChain(2).compute(root[0], root[1], new int[48], 48, 16, true))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("capacity of 2");
    }
}
