package io.kvtier.engine.key;

import io.kvtier.client.Namespace;

import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's KeyChain over the one key implementation (the client module's PageKeyHasher, whose
 * KeyVectorsTest checks every published vector of docs/keys.md): one vector through the engine's
 * path, and what the chain itself adds.
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
