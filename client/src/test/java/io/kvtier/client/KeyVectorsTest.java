package io.kvtier.client;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The published vectors of docs/keys.md (from docs/keys-reference.py, Python's hashlib): the client
 * computes keys without the engine's code and must give the same bytes.
 */
class KeyVectorsTest
{
    private static String[] rootAndChain(final Namespace namespace, final int[] tokens, final int pageTokens)
    {
        final PageKeyChain chain = new PageKeyChain(16).compute(namespace, tokens, tokens.length, pageTokens, true);
        final String[] hex = new String[chain.size() + 1];
        hex[0] = HexFormat.of().formatHex(namespace.rootBytes());
        for (int i = 0; i < chain.size(); i++)
        {
            hex[i + 1] = chain.hex(i);
        }
        return hex;
    }

    @Test
    void shouldMatchTheBasicVector()
    {
        assertThat(rootAndChain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, ""),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "0d8d5b6bec68e56e0fbbc9d39dcc0d8a",
            "a306ce302f3ed8d29a2b9b308d8a004e",
            "de9d1e0f01328e3c5d91aee32a7a6c74",
            "8b6ea36129dca0a99cd04d48645f869d");
    }

    @Test
    void shouldNameObjectsInL3AsTheL3Vectors()
    {
        final Namespace basic = new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "");
        final PageKeyChain chain = new PageKeyChain(1).compute(basic, IntStream.range(0, 16).toArray(), 16, 16, false);
        assertThat(String.format("%016x", basic.tag())).isEqualTo("0d8d5b6bec68e56e");
        final String[][] expected = {
            {"", "a306ce302f3ed8d29a2b9b308d8a004e", "eaa000c3a32ec3aabaef2b099cc23199"},
            {"tenant-a", "1c03fe66482b0d3982ac3e16e7c42250", "8c52112966a641d0e5f1418d4be75a14"}};
        for (final String[] vector : expected)
        {
            final L3ObjectName name = new L3ObjectName(vector[0]);
            name.name(0, chain.high(0), chain.low(0));
            assertThat(String.format("%016x%016x", name.high(), name.low())).as("untagged, salt '%s'", vector[0]).isEqualTo(vector[1]);
            name.name(basic.tag(), chain.high(0), chain.low(0));
            assertThat(String.format("%016x%016x", name.high(), name.low())).as("tagged, salt '%s'", vector[0]).isEqualTo(vector[2]);
        }
    }

    @Test
    void shouldMatchTheEnginePageIdVectors()
    {
        final String[] sglang = {
            "600d09dbd8d8ac802f5040e66bf03fda1dc0ad81c81b0e0238101e6570799276",
            "b8682f237e183a55a80dee347452d604f4d345f2a32c648348029a651a4baa28"};
        final String block = "fa8e730bce6dbc9102511486407c1db4ac6ee0c9cc367b8766a707fd0eae2ac0";
        // bytes, the same with group 1, the int 1234 and the int -2 (mod 2^64) as 32 bytes big-endian
        final String[] vllmHashes = {block, block, "00".repeat(30) + "04d2", "00".repeat(24) + "fffffffffffffffe"};
        final int[] groups = {0, 1, 0, 3};
        final String[][] expected = {
            {"", "430f263b9dc95918deb7ee45953afe6b", "3d741f8f68f3c8b1a9af1d9007163394",
                "2009f7e3f4b58e370db07e4be8e7e603", "9f6c9bc89b440664847b82a50520fce3", "0bf1b92f2bc83a846866735f5b06bda9",
                "35bffc88ddf5e3b8d8cb7899c214912b"},
            {"tenant-a", "3a89da3184daf12093d1754e399fc776", "5a1d17b21ad0e9169b7f5922cb8768f4",
                "a56066e62a24a6b15f262df0a950d20d", "399fe0ccaac3384ec41a3ddc6e43dfbe", "e51ac7db86e30880ded7656160056e8f",
                "a4ae0bc3c5c6053df941b656bf3bd403"}};
        final HexFormat hex = HexFormat.of();
        for (final String[] vector : expected)
        {
            final Namespace namespace = new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, vector[0]);
            for (int i = 0; i < sglang.length; i++)
            {
                assertThat(hex.formatHex(EnginePageKeys.sglang(namespace, sglang[i]))).as("salt '%s' sglang %d", vector[0], i)
                    .isEqualTo(vector[1 + i]);
            }
            for (int i = 0; i < vllmHashes.length; i++)
            {
                assertThat(hex.formatHex(EnginePageKeys.vllm(namespace, hex.parseHex(vllmHashes[i]), groups[i])))
                    .as("salt '%s' vllm %d", vector[0], i).isEqualTo(vector[3 + i]);
            }
        }
        assertThatThrownBy(() -> EnginePageKeys.sglang(new Namespace("m", "l", 0, ""), ""))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> EnginePageKeys.vllm(new Namespace("m", "l", 0, ""), new byte[0], 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be empty");
    }

    @Test
    void shouldMatchTheTenantSaltVector()
    {
        assertThat(rootAndChain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "tenant-a"),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "02f0fbc3dbf959653fa7440cc0d3540b",
            "111b2ca5a20b5eb5192b6a75129009f1",
            "2308a94ef5b62283e4b1e317eb1599ab",
            "3e693d53b1b9dc29970298f01a01e3d5");
    }

    @Test
    void shouldMatchTheRankVector()
    {
        assertThat(rootAndChain(new Namespace("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp2", 1, ""),
            IntStream.range(0, 40).toArray(), 16)).containsExactly(
            "f6e18b73798c10bacc34f49cd4d8b89c",
            "b3a2734ccb8c8046474967b920b473fa",
            "fdeca7856aee0e9d83b1955a665d08dc",
            "9bb1242cc2e1ab29b2150b676bfe5581");
    }

    @Test
    void shouldMatchTheLargeIdVectorWithUnsignedTokens()
    {
        assertThat(rootAndChain(new Namespace("Qwen/Qwen3-8B", "fp8/page4", 3, ""), new int[] {0, 151643, (int)4294967295L, 7, 9}, 4))
            .containsExactly(
                "40737e99457318b2b3f67d7364f833d5",
                "21d0ab516d55c6518418204168398d40",
                "59ea6f9fca8bf76b7bf844e318fcee24");
    }

    @Test
    void shouldKeyAPartialLastPageOnlyWhenAskedAndNeverAsTheFullPage()
    {
        final Namespace namespace = new Namespace("m", "l", 0, "");
        final int[] tokens = IntStream.range(0, 32).toArray();
        final PageKeyChain full = new PageKeyChain(4).compute(namespace, tokens, 32, 16, true);
        final PageKeyChain partial = new PageKeyChain(4).compute(namespace, tokens, 24, 16, true);
        final PageKeyChain fullPagesOnly = new PageKeyChain(4).compute(namespace, tokens, 24, 16, false);

        assertThat(partial.size()).isEqualTo(2);
        assertThat(partial.hex(0)).isEqualTo(full.hex(0));
        assertThat(partial.hex(1)).isNotEqualTo(full.hex(1));
        assertThat(fullPagesOnly.size()).isEqualTo(1);
    }

    @Test
    void shouldRefuseMorePagesThanItHolds()
    {
        assertThatThrownBy(() -> new PageKeyChain(1).compute(new Namespace("m", "l", 0, ""), new int[32], 32, 16, false))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity of 1");
        assertThatThrownBy(() -> new PageKeyChain(1).add(1, 2).add(3, 4)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldReplaceAKeyItHoldsAndRefuseAPositionItDoesNot()
    {
        final PageKeyChain chain = new PageKeyChain(4).add(1, 2).add(3, 4);
        chain.set(1, 5, 6);
        assertThat(chain.high(1)).isEqualTo(5);
        assertThat(chain.low(1)).isEqualTo(6);
        assertThat(chain.high(0)).isEqualTo(1);
        assertThatThrownBy(() -> chain.set(2, 7, 8)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
