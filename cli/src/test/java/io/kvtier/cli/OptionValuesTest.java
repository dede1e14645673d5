package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Size and duration options read like engine settings, and a bad one is a usage error naming the option and the value. */
class OptionValuesTest
{
    @Test
    void shouldReadDurationsWithTheUnitsOfSettings()
    {
        final Converters.DurationConverter converter = new Converters.DurationConverter();
        assertThat(converter.convert("0")).isZero();
        assertThat(converter.convert("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(converter.convert("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(converter.convert("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThatThrownBy(() -> converter.convert("5")).isInstanceOf(CommandLine.TypeConversionException.class)
            .hasMessageContaining("'5' is not a duration").hasMessageContaining("unit");
    }

    @Test
    void shouldReadSizesWithTheUnitsOfSettings()
    {
        final Converters.SizeConverter converter = new Converters.SizeConverter();
        assertThat(converter.convert("16KiB").bytes()).isEqualTo(16 << 10);
        assertThat(converter.convert("1.5GB").bytes()).isEqualTo(1_500_000_000L);
        assertThat(converter.convert("4096").bytes()).isEqualTo(4096);
        assertThat(converter.convert("24MiB")).hasToString("24MiB");
        assertThatThrownBy(() -> converter.convert("12XB")).isInstanceOf(CommandLine.TypeConversionException.class)
            .hasMessageContaining("'12XB' is not a size").hasMessageContaining("KiB");
    }

    @Test
    void shouldRejectABadWatchIntervalNamingTheOptionAndTheValue()
    {
        final CliFixture.Result result = CliFixture.run("stat", "--pool", "/dev/shm/kvtier-no-such-pool", "--watch", "5");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("kvtier: Invalid value for option '--watch': '5' is not a duration").contains("kvtier stat --help");
    }

    @Test
    void shouldRejectABadStatsIntervalBeforeStartingAnything()
    {
        final CliFixture.Result result = CliFixture.run("serve", "--stats-interval", "soon", "--set", "pool.path=/no/such/dir/pool");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--stats-interval").contains("'soon'").doesNotContain("pool.path");
    }

    @Test
    void shouldRejectABadDemoSizeNamingTheOptionAndTheValue()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--pool-size", "12XB");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--pool-size").contains("'12XB' is not a size");
    }

    @Test
    void shouldRejectACountWithoutWatchAsAUsageError()
    {
        final CliFixture.Result result = CliFixture.run("stat", "--count", "3");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--count needs --watch").contains("kvtier stat --help");
        assertThat(CliFixture.run("stat", "--count", "three").err()).contains("--count").contains("three");
    }

    @Test
    void shouldRejectADemoWithoutConversationsAsAUsageError()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--conversations", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--conversations, --clients and --page-tokens must be at least 1");
    }
}
