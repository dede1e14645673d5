package io.kvtier.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NamespaceCommandTest
{
    @Test
    void printsThePublishedRootOfTheTenantSaltVectorAndItsAllowListEntry()
    {
        // docs/keys.md, vector "tenant salt".
        final CliFixture.Result result = CliFixture.run("namespace", "--model", "meta-llama/Llama-3.1-8B-Instruct",
            "--layout", "bf16/page16/layer-first/tp1", "--salt", "tenant-a", "--uid", "1001");
        assertThat(result.exitCode()).isZero();
        assertThat(result.out()).contains("root 02f0fbc3dbf959653fa7440cc0d3540b")
            .contains("tag  02f0fbc3dbf95965")
            .contains("uid:1001=02f0fbc3dbf959653fa7440cc0d3540b");
    }

    @Test
    void refusesANegativeRankNamingIt()
    {
        final CliFixture.Result result = CliFixture.run("namespace", "--model", "m", "--layout", "l", "--rank", "-1");
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("tpRank");
    }
}
