package io.kvtier.tier.support;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TierSettingTest
{
    private enum Mode
    {
        URING, LIBC, FILE_CHANNEL
    }

    private static final TierSetting<Integer> THREADS = TierSetting.integer("io-threads").byDefault(2).range(1, 64)
        .documented("worker threads");
    private static final TierSetting<Long> CAPACITY = TierSetting.size("capacity").byDefault(Long.MAX_VALUE, "unbounded")
        .range(4096L, Long.MAX_VALUE).documented("most bytes kept");
    private static final TierSetting<Duration> MAX_AGE = TierSetting.duration("tmp-max-age").byDefault(Duration.ofMinutes(10))
        .documented("age of a dead writer's temp file");
    private static final TierSetting<Path> DIR = TierSetting.path("dir").documented("the directory");
    private static final TierSetting<Mode> IO = TierSetting.choice("io", Mode.class).byDefault(Mode.URING).documented("how bytes move");
    private static final TierSetting<Double> HIGH = TierSetting.ratio("evict-high").byDefault(0.9).documented("high water");
    private static final TierSetting<Integer> EVEN = TierSetting.integer("stripes").byDefault(8).range(2, 64)
        .rule("an even whole number from 2 to 64", n -> n % 2 == 0).documented("lock stripes");
    private static final TierSetting<Integer> SPARES = TierSetting.integer("spare-temp-files").derivedDefault("`4 × io-threads`")
        .range(0, 4096).documented("files made ahead | of writes");
    private static final TierSetting<String> PREFIX = TierSetting.verbatim("key-prefix").byDefault("").documented("put before each key");
    private static final TierSetting<Double> LOW = TierSetting.ratio("evict-low").byDefault(0.8).note("below evict-high").documented("low water");

    @Test
    void shouldReturnTheDefaultWhenTheSettingIsAbsent()
    {
        final TierConfig config = config(Map.of());
        assertThat(THREADS.get(config)).isEqualTo(2);
        assertThat(CAPACITY.get(config)).isEqualTo(Long.MAX_VALUE);
        assertThat(MAX_AGE.get(config)).isEqualTo(Duration.ofMinutes(10));
        assertThat(IO.get(config)).isEqualTo(Mode.URING);
    }

    @Test
    void shouldParseWhatTheOperatorWrote()
    {
        final TierConfig config = config(Map.of("io-threads", " 8 ", "capacity", "1GiB", "tmp-max-age", "30s", "dir", "/mnt/x", "io",
            "FILE-channel", "evict-high", "95%"));
        assertThat(THREADS.get(config)).isEqualTo(8);
        assertThat(CAPACITY.get(config)).isEqualTo(1L << 30);
        assertThat(MAX_AGE.get(config)).isEqualTo(Duration.ofSeconds(30));
        assertThat(DIR.get(config)).isEqualTo(Path.of("/mnt/x"));
        assertThat(IO.get(config)).isEqualTo(Mode.FILE_CHANNEL);
        assertThat(HIGH.get(config)).isEqualTo(0.95);
    }

    @Test
    void shouldNameTheKeyTheValueAndWhatIsAllowedWhenAValueIsOutOfRange()
    {
        assertThatThrownBy(() -> THREADS.get(config(Map.of("io-threads", "65"))))
            .isInstanceOf(TierConfigException.class)
            .hasMessage("invalid tier.t.io-threads = \"65\": expected a whole number from 1 to 64");
        assertThatThrownBy(() -> CAPACITY.get(config(Map.of("capacity", "1KiB"))))
            .hasMessageContaining("invalid tier.t.capacity = \"1KiB\"").hasMessageContaining("to unbounded");
    }

    @Test
    void shouldNameTheKeyAndValueWhenAValueDoesNotParse()
    {
        assertThatThrownBy(() -> THREADS.get(config(Map.of("io-threads", "two"))))
            .isInstanceOf(TierConfigException.class)
            .hasMessage("invalid tier.t.io-threads = \"two\": expected a whole number from 1 to 64");
        assertThatThrownBy(() -> IO.get(config(Map.of("io", "aio"))))
            .hasMessage("invalid tier.t.io = \"aio\": expected uring, libc or file-channel");
        assertThatThrownBy(() -> MAX_AGE.get(config(Map.of("tmp-max-age", "ten"))))
            .hasMessageStartingWith("invalid tier.t.tmp-max-age = \"ten\": expected a number with a unit");
    }

    @Test
    void shouldApplyARuleAfterTheRange()
    {
        assertThat(EVEN.get(config(Map.of("stripes", "16")))).isEqualTo(16);
        assertThatThrownBy(() -> EVEN.get(config(Map.of("stripes", "15"))))
            .hasMessage("invalid tier.t.stripes = \"15\": expected an even whole number from 2 to 64");
        assertThatThrownBy(() -> EVEN.get(config(Map.of("stripes", "66")))).hasMessageContaining("\"66\"");
        assertThatThrownBy(() -> EVEN.get(config(Map.of("stripes", "x"))))
            .as("a value that does not parse is told the syntax and range, not the rule")
            .hasMessage("invalid tier.t.stripes = \"x\": expected a whole number from 2 to 64");
    }

    @Test
    void shouldNameAMissingRequiredSetting()
    {
        assertThat(DIR.isRequired()).isTrue();
        assertThatThrownBy(() -> DIR.get(config(Map.of())))
            .isInstanceOf(TierConfigException.class)
            .hasMessage("missing setting tier.t.dir: expected a filesystem path");
    }

    @Test
    void shouldListKeysForRejectUnknownAndRefuseADuplicate()
    {
        assertThat(TierSetting.keys(List.of(THREADS, DIR, IO))).containsExactly("io-threads", "dir", "io");
        assertThatThrownBy(() -> TierSetting.keys(List.of(THREADS, THREADS))).hasMessageContaining("io-threads is declared twice");
    }

    @Test
    void shouldRenderTheDocsTableFromTheDeclarations()
    {
        assertThat(TierSetting.table(List.of(DIR, THREADS, CAPACITY, MAX_AGE, IO, SPARES, PREFIX, LOW))).isEqualTo("""
            | key | default | allowed | meaning |
            |---|---|---|---|
            | `dir` | required | a filesystem path | the directory |
            | `io-threads` | `2` | a whole number from 1 to 64 | worker threads |
            | `capacity` | `unbounded` | a size from 4KiB to unbounded | most bytes kept |
            | `tmp-max-age` | `10m` | %s | age of a dead writer's temp file |
            | `io` | `uring` | uring, libc or file-channel | how bytes move |
            | `spare-temp-files` | `4 × io-threads` | a whole number from 0 to 4096 | files made ahead \\| of writes |
            | `key-prefix` | empty | text | put before each key |
            | `evict-low` | `0.8` | %s; below evict-high | low water |
            """.formatted(ConfigValues.DURATION_SYNTAX, "a fraction between 0 and 1 such as 0.9, or a percentage such as 90%"));
    }

    @Test
    void shouldTellASizeThatDoesNotParseItsSyntaxAndOneOutOfRangeItsRange()
    {
        assertThatThrownBy(() -> CAPACITY.get(config(Map.of("capacity", "lots"))))
            .hasMessage("invalid tier.t.capacity = \"lots\": expected " + ConfigValues.SIZE_SYNTAX);
        assertThatThrownBy(() -> CAPACITY.get(config(Map.of("capacity", "1KiB"))))
            .hasMessage("invalid tier.t.capacity = \"1KiB\": expected a size from 4KiB to unbounded");
    }

    @Test
    void shouldLeaveADerivedDefaultToTheTier()
    {
        assertThat(SPARES.isDerived()).isTrue();
        assertThat(SPARES.get(config(Map.of()), () -> 32)).isEqualTo(32);
        assertThat(SPARES.get(config(Map.of("spare-temp-files", "5")), () -> 32)).isEqualTo(5);
        assertThatThrownBy(() -> SPARES.get(config(Map.of("spare-temp-files", "5000")), () -> 32))
            .hasMessage("invalid tier.t.spare-temp-files = \"5000\": expected a whole number from 0 to 4096");
        assertThatThrownBy(() -> SPARES.get(config(Map.of())))
            .as("a derived default read without its derivation is the tier's mistake, not the operator's")
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("spare-temp-files");
    }

    @Test
    void shouldFindOnlyAValueTheOperatorSet()
    {
        assertThat(THREADS.find(config(Map.of()))).isEmpty();
        assertThat(THREADS.find(config(Map.of("io-threads", "3")))).contains(3);
        assertThatThrownBy(() -> THREADS.find(config(Map.of("io-threads", "0")))).hasMessageContaining("\"0\"");
    }

    @Test
    void shouldTakeAVerbatimSettingExactlyAsWritten()
    {
        assertThat(PREFIX.get(config(Map.of()))).isEmpty();
        assertThat(PREFIX.get(config(Map.of("key-prefix", "")))).as("empty is a value, not a missing setting").isEmpty();
        assertThat(PREFIX.get(config(Map.of("key-prefix", " a ")))).isEqualTo(" a ");
        assertThatThrownBy(() -> THREADS.get(config(Map.of("io-threads", " "))))
            .as("a blank value of any other setting is missing").hasMessage("missing setting tier.t.io-threads");
    }

    @Test
    void shouldParseACustomTypeAndShowANoteInTheDocsOnly()
    {
        final TierSetting<List<String>> hosts = TierSetting.<List<String>>custom("hosts", text ->
        {
            if (text.contains(",,"))
            {
                throw new IllegalArgumentException("empty entry");
            }
            return List.of(text.split(","));
        }, "a comma-separated list of hosts", list -> String.join(",", list)).byDefault(List.of()).documented("hosts");
        assertThat(hosts.get(config(Map.of("hosts", "a,b")))).containsExactly("a", "b");
        assertThatThrownBy(() -> hosts.get(config(Map.of("hosts", "a,,b"))))
            .hasMessage("invalid tier.t.hosts = \"a,,b\": expected a comma-separated list of hosts");
        assertThat(LOW.allowed()).doesNotContain("evict-high");
        assertThat(LOW.documentedAllowed()).endsWith("; below evict-high");
    }

    private static TierConfig config(final Map<String, String> values)
    {
        return new TierConfig("t", values);
    }
}
