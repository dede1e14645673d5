package io.kvtier.cli;

import io.kvtier.bench.workload.ClientProcessException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a command that throws prints and exits with. */
class FailuresTest
{
    @Test
    void shouldEndTheDemoOnABrokenClientProcessWithItsMessageAloneAndExitCode1()
    {
        final Failures.Outcome outcome = Failures.outcome(new ClientProcessException(
            "workload client 2 of 2: the C demo client (kvtier_demo_client over libkvtier_client.so, pid 7) ended with exit code 139", null));
        assertThat(outcome.exitCode()).isEqualTo(ExitCode.FAILURE);
        assertThat(outcome.line()).isEqualTo(
            "kvtier: workload client 2 of 2: the C demo client (kvtier_demo_client over libkvtier_client.so, pid 7) ended with exit code 139");
        assertThat(outcome.stackTrace()).as("a broken client is no bug of the command's: its message says it all").isFalse();
    }
}
