package io.kvtier.tier.support;

import io.kvtier.spi.PageKey;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class PathLayoutTest
{
    private static final PageKey KEY = PageKey.fromHex("0123456789abcdeffedcba9876543210");

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void shouldBuildTheSamePathAsBytesAndAsAPath(final int levels)
    {
        final PathLayout layout = new PathLayout(Path.of("/data/kv"), levels);
        final byte[] buffer = new byte[layout.maxPathLength()];
        final int length = layout.writePagePath(KEY.high(), KEY.low(), buffer);
        final String expected = switch (levels)
        {
            case 0 -> "/data/kv/0123456789abcdeffedcba9876543210.kvp";
            case 1 -> "/data/kv/01/0123456789abcdeffedcba9876543210.kvp";
            case 2 -> "/data/kv/01/23/0123456789abcdeffedcba9876543210.kvp";
            default -> "/data/kv/01/23/45/0123456789abcdeffedcba9876543210.kvp";
        };
        assertThat(new String(buffer, 0, length, StandardCharsets.UTF_8)).isEqualTo(expected);
        assertThat(layout.pagePath(KEY.high(), KEY.low())).isEqualTo(Path.of(expected));
        assertThat(new String(buffer, 0, layout.directoryLength(levels), StandardCharsets.UTF_8))
            .isEqualTo(Path.of(expected).getParent().toString());

        final int tempLength = PathLayout.appendTempSuffix(buffer, length, 0xABCDEFL, 7);
        assertThat(tempLength + 1).isLessThanOrEqualTo(layout.maxPathLength());
        assertThat(new String(buffer, 0, tempLength, StandardCharsets.UTF_8)).isEqualTo(expected + ".0000000000abcdef00000007.tmp");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void shouldRecogniseOnlyPagesInTheirOwnDirectory(final int levels)
    {
        final PathLayout layout = new PathLayout(Path.of("/data/kv"), levels);
        final Path page = layout.pagePath(KEY.high(), KEY.low());
        assertThat(layout.pageKeyOf(page)).isEqualTo(KEY);
        assertThat(layout.pageKeyOf(page.resolveSibling(page.getFileName() + ".0000000000abcdef00000007.tmp"))).isNull();
        assertThat(layout.pageKeyOf(page.resolveSibling(KEY.toHex().toUpperCase() + ".kvp"))).isNull();
        assertThat(layout.pageKeyOf(Path.of("/data/kv/ff/ff").resolve(page.getFileName()))).isNull();
        assertThat(layout.pageKeyOf(page.resolveSibling("notes.txt"))).isNull();
    }
}
