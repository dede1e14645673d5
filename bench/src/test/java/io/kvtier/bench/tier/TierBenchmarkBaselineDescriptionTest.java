package io.kvtier.bench.tier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The report's description of fio says, for the 3fs backend, that fio and the tier take different paths. */
class TierBenchmarkBaselineDescriptionTest
{
    private static final String FIO = Fio.JOB_DESCRIPTION;

    @Test
    void shouldSayForThe3fsBackendThatFioDoesNotGoThroughUsrbio()
    {
        assertThat(TierBenchmark.baselineDescription("3fs", FIO)).startsWith(FIO).contains("USRBIO").contains("fake USRBIO library")
            .contains("says nothing of 3FS");
    }

    @Test
    void shouldLeaveOtherBackendsAndBaselinesAsTheyDescribeThemselves()
    {
        assertThat(TierBenchmark.baselineDescription("posix", FIO)).isEqualTo(FIO);
        assertThat(TierBenchmark.baselineDescription("3fs", "a C program against libmooncake_store.so")).isEqualTo("a C program against libmooncake_store.so");
    }
}
