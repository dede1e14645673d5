package io.kvtier.client;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/RELIABILITY.md's promise that keys of a tenant with a salt cannot be computed by another tenant,
 * as far as a test can hold it: the salt goes into SHA-256 with the rest of the namespace exactly as
 * docs/keys.md writes it (recomputed here with the JDK's digest, not the client's code), so every key
 * of the chain depends on the salt through SHA-256 and nothing else; and two tenants whose salts differ,
 * even in one character, or one salted and one not, share no key for the same model, layout and tokens.
 */
class TenantSaltPropertiesTest
{
    @Property(tries = 300)
    void theRootIsSha256OverTheSaltAsKeysMdWritesIt(@ForAll @StringLength(max = 40) final String model,
                                                    @ForAll @StringLength(max = 40) final String layout,
                                                    @ForAll @IntRange(min = 0, max = 64) final int rank,
                                                    @ForAll("salts") final String salt)
    {
        Assume.that(!model.isEmpty() && !layout.isEmpty());
        final Namespace namespace = new Namespace(model, layout, rank, salt);
        assertThat(namespace.rootBytes()).isEqualTo(root(model, layout, rank, salt));
    }

    @Property(tries = 300)
    void tenantsOfDifferentSaltsShareNoKey(@ForAll("salts") final String saltA, @ForAll("salts") final String saltB,
                                           @ForAll("tokens") final int[] tokens, @ForAll @IntRange(min = 1, max = 16) final int pageTokens)
    {
        Assume.that(!saltA.equals(saltB));
        final String model = "meta-llama/Llama-3.1-8B-Instruct";
        final String layout = "bf16/page16/layer-first/tp1";
        final Set<String> a = keys(new Namespace(model, layout, 0, saltA), tokens, pageTokens);
        final Set<String> b = keys(new Namespace(model, layout, 0, saltB), tokens, pageTokens);
        final Set<String> oneCharacterOff = keys(new Namespace(model, layout, 0, saltA + "x"), tokens, pageTokens);
        assertThat(a).hasSize(b.size()).doesNotContainAnyElementsOf(b).doesNotContainAnyElementsOf(oneCharacterOff);
        assertThat(new Namespace(model, layout, 0, saltA).rootBytes()).isNotEqualTo(new Namespace(model, layout, 0, saltB).rootBytes());
    }

    @Provide
    Arbitrary<String> salts()
    {
        return Arbitraries.oneOf(Arbitraries.just(""), Arbitraries.strings().ofMinLength(1).ofMaxLength(32),
            Arbitraries.strings().withChars("tenant-ab0123").ofMinLength(1).ofMaxLength(12));
    }

    @Provide
    Arbitrary<int[]> tokens()
    {
        return Arbitraries.integers().between(0, 200_000).array(int[].class).ofMinSize(1).ofMaxSize(64);
    }

    private static Set<String> keys(final Namespace namespace, final int[] tokens, final int pageTokens)
    {
        final PageKeyChain chain = new PageKeyChain(tokens.length + 1).compute(namespace, tokens, tokens.length, pageTokens, true);
        final Set<String> keys = new HashSet<>();
        for (int i = 0; i < chain.size(); i++)
        {
            keys.add(chain.hex(i));
        }
        return keys;
    }

    /** docs/keys.md: SHA-256("kvtier:ns:v1" || field(model_id) || field(kv_layout) || u32le(tp_rank) || field(tenant_salt))[0:16]. */
    private static byte[] root(final String model, final String layout, final int rank, final String salt)
    {
        try
        {
            final MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update("kvtier:ns:v1".getBytes(StandardCharsets.US_ASCII));
            field(sha, model);
            field(sha, layout);
            sha.update(u32le(rank));
            field(sha, salt);
            return Arrays.copyOf(sha.digest(), 16);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static void field(final MessageDigest sha, final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        sha.update(u32le(bytes.length));
        sha.update(bytes);
    }

    private static byte[] u32le(final int value)
    {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }
}
