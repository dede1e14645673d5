package io.kvtier.cli;

import io.kvtier.admin.AdminServer;
import io.kvtier.engine.operations.EvictRequest;
import io.kvtier.engine.operations.Health;
import io.kvtier.engine.operations.MarkRequest;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.Retention;
import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kvtier admin ...} against a real admin API (on a free loopback port) over a test double of the
 * engine's operations: what each command sends, prints (a table, or the JSON as it came) and exits with.
 */
class AdminCommandTest
{
    private static final String TOKEN = "cli-test-token-0123456789abcdef";
    private static final String KEY = "a306ce302f3ed8d29a2b9b308d8a004e";

    @TempDir
    Path dir;

    private final AdminOperationsDouble operations = new AdminOperationsDouble();
    private AdminServer server;
    private Path tokenFile;

    @BeforeEach
    void start() throws IOException
    {
        server = AdminServer.builder().token(TOKEN.getBytes(StandardCharsets.UTF_8)).start(operations);
        tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, TOKEN + "\n");
    }

    @AfterEach
    void stop()
    {
        server.close();
    }

    private CliFixture.Result admin(final String... args)
    {
        final String[] all = new String[args.length + 3];
        all[0] = "admin";
        System.arraycopy(args, 0, all, 1, args.length);
        all[args.length + 1] = "--url";
        all[args.length + 2] = server.uri().toString();
        return CliFixture.run(all);
    }

    @Test
    void shouldPrintTheTiersAsATableOrTheJsonAsItCame()
    {
        final CliFixture.Result table = admin("tiers");
        assertThat(table.exitCode()).as(table.err()).isEqualTo(ExitCode.OK);
        final List<String> lines = table.out().lines().toList();
        assertThat(lines.get(0)).startsWith("TIER").contains("CAPACITY").contains("HITS").contains("MIGRATION");
        assertThat(lines.get(1)).startsWith("nvme").contains("posix").contains("1GiB").contains("4GiB").contains("25.0%").contains("0.90/0.80")
            .contains("above 0.7 copy to shared");
        assertThat(lines.get(2)).startsWith("shared").contains(" - ");

        final CliFixture.Result json = admin("tiers", "--json");
        assertThat(json.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(json.out()).startsWith("{\"tiers\":[{\"name\":\"nvme\"").contains("\"capacity_bytes\":null");
    }

    @Test
    void shouldStartAMigrationWithEveryOptionAndTheToken()
    {
        final CliFixture.Result result = admin("migrate", "--source", "nvme", "--target", "shared", "--namespace", "0d8d5b6bec68e56e",
            "--min-age", "10m", "--fraction", "0.5", "--limit", "20", "--method", "both", "--retention", "keep-source", "--dry-run",
            "--token-file", tokenFile.toString());
        assertThat(result.exitCode()).as(result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).startsWith("migration 41 (admin): dry-run").contains("nvme -> shared").contains("refused: too_young 2");
        assertThat(operations.calls).containsExactly(new MigrateRequest("nvme", "shared", List.of(), 0x0d8d5b6bec68e56eL, Duration.ofMinutes(10),
            0.5, 20, MigrationMethod.BOTH, Retention.KEEP_SOURCE, true));

        operations.calls.clear();
        final CliFixture.Result keys = admin("migrate", "--source", "nvme", "--target", "shared", "--key", KEY, "--key", KEY.replace('a', 'b'),
            "--token-file", tokenFile.toString());
        assertThat(keys.exitCode()).as(keys.err()).isEqualTo(ExitCode.OK);
        assertThat(((MigrateRequest) operations.calls.getFirst()).keys()).containsExactly(PageKey.fromHex(KEY), PageKey.fromHex(KEY.replace('a', 'b')));
    }

    @Test
    void shouldExitWithUsageNamingTheFieldWhenTheApiRefusesTheRequest()
    {
        final CliFixture.Result result = admin("migrate", "--source", "nvme", "--target", "shared", "--key", "xyz", "--token-file", tokenFile.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("answered 400").contains("keys[0]").contains("\"xyz\"");
        assertThat(operations.calls).isEmpty();

        final CliFixture.Result json = admin("evict", "--tier", "nvme", "--limit", "0", "--json", "--token-file", tokenFile.toString());
        assertThat(json.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(json.out()).as("--json prints the refusal's JSON too").contains("\"field\":\"limit\"");
    }

    @Test
    void shouldExitNotAuthorizedWithoutOrWithAWrongToken() throws IOException
    {
        final CliFixture.Result none = admin("evict", "--tier", "nvme");
        assertThat(none.exitCode()).isEqualTo(ExitCode.NOT_AUTHORIZED);
        assertThat(none.err()).contains("answered 401");
        final Path wrong = dir.resolve("wrong");
        Files.writeString(wrong, "not-the-token-at-all-0000");
        final CliFixture.Result refused = admin("unmark", "7", "--token-file", wrong.toString());
        assertThat(refused.exitCode()).isEqualTo(ExitCode.NOT_AUTHORIZED);
        assertThat(refused.err()).contains("answered 403").contains("wrong admin token");
        assertThat(operations.calls).isEmpty();
    }

    @Test
    void shouldExitNotFoundForAnUnknownTierMigrationOrMark()
    {
        final CliFixture.Result tier = admin("evict", "--tier", "tape", "--token-file", tokenFile.toString());
        assertThat(tier.exitCode()).isEqualTo(ExitCode.NOT_FOUND);
        assertThat(tier.err()).contains("no tier tape").contains("[field tier]");
        assertThat(admin("migration", "5").exitCode()).isEqualTo(ExitCode.NOT_FOUND);
        assertThat(admin("unmark", "8", "--token-file", tokenFile.toString()).exitCode()).isEqualTo(ExitCode.NOT_FOUND);
    }

    @Test
    void shouldShowMigrationsAndOneMigration()
    {
        final CliFixture.Result one = admin("migration", "41");
        assertThat(one.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(one.out()).startsWith("migration 41 (admin): done").contains("copied 8").contains("2MiB copied");
        final CliFixture.Result all = admin("migrations");
        assertThat(all.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(all.out().lines().toList()).hasSize(2);
        assertThat(all.out().lines().toList().get(1)).startsWith("41").contains("nvme -> shared").contains("copy");
    }

    @Test
    void shouldEvictMarkListMarksAndUnmark()
    {
        final CliFixture.Result evicted = admin("evict", "--tier", "shared", "--key", KEY, "--dry-run", "--token-file", tokenFile.toString());
        assertThat(evicted.exitCode()).as(evicted.err()).isEqualTo(ExitCode.OK);
        assertThat(evicted.out()).isEqualTo("would remove 2 pages from shared (dry run: nothing changed); not removed: not_held 1" + System.lineSeparator());

        final CliFixture.Result marked = admin("mark", "--tier", "shared", "--key", KEY, "--ttl", "1h", "--token-file", tokenFile.toString());
        assertThat(marked.exitCode()).as(marked.err()).isEqualTo(ExitCode.OK);
        assertThat(marked.out()).isEqualTo("mark 7: 1 pages -> shared until 2026-11-27T11:00:00Z" + System.lineSeparator());

        final CliFixture.Result marks = admin("marks");
        assertThat(marks.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(marks.out().lines().toList().get(1)).startsWith("7").contains("0d8d5b6bec68e56e");

        final CliFixture.Result unmarked = admin("unmark", "7", "--token-file", tokenFile.toString());
        assertThat(unmarked.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(unmarked.out()).isEqualTo("mark 7 removed" + System.lineSeparator());
        assertThat(operations.calls).containsExactly(new EvictRequest("shared", List.of(PageKey.fromHex(KEY)), 0, 1, true),
            new MarkRequest("shared", List.of(PageKey.fromHex(KEY)), 0, Duration.ofHours(1)), "marks", "unmark 7");
    }

    @Test
    void shouldExitZeroWhenHealthyAndOneWithTheReasonOtherwise()
    {
        final CliFixture.Result healthy = admin("health");
        assertThat(healthy.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(healthy.out()).isEqualTo("live, ready" + System.lineSeparator());
        operations.health = new Health(true, false, "tier shared is out of service");
        final CliFixture.Result notReady = admin("health");
        assertThat(notReady.exitCode()).isEqualTo(ExitCode.FAILURE);
        assertThat(notReady.out()).isEqualTo("live, not ready: tier shared is out of service" + System.lineSeparator());
        final CliFixture.Result json = admin("health", "--json");
        assertThat(json.exitCode()).isEqualTo(ExitCode.FAILURE);
        assertThat(json.out()).contains("\"ready\":false");
    }

    @Test
    void shouldExitWithFailureWhenTheServerFails()
    {
        operations.failure = new IllegalStateException("a bug in the engine");
        final CliFixture.Result result = admin("tiers");
        assertThat(result.exitCode()).isEqualTo(ExitCode.FAILURE);
        assertThat(result.err()).contains("answered 500").contains("a bug in the engine");
    }

    @Test
    void shouldExitUnavailableWhenNothingAnswers() throws IOException
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        final CliFixture.Result result = CliFixture.run("admin", "health", "--url", "http://127.0.0.1:" + port + "/", "--timeout", "5s");
        assertThat(result.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(result.err()).contains("nothing answers at http://127.0.0.1:" + port + "/health").contains("admin.listen");
    }

    @Test
    void shouldTakeTheUrlAndTheTokenFileFromTheEnginesConfig() throws IOException
    {
        final Path config = dir.resolve("kvtier.conf");
        Files.write(config, List.of("admin.listen = 0.0.0.0:" + server.address().getPort(), "admin.token-file = " + tokenFile));
        final CliFixture.Result result = CliFixture.run("admin", "unmark", "7", "--config", config.toString());
        assertThat(result.exitCode()).as(result.err()).isEqualTo(ExitCode.OK);
        assertThat(operations.calls).containsExactly("unmark 7");

        Files.write(config, List.of("admin.listen = 127.0.0.1:0"));
        final CliFixture.Result zero = CliFixture.run("admin", "tiers", "--config", config.toString());
        assertThat(zero.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(zero.err()).contains("admin.listen = 127.0.0.1:0").contains("--url");
    }

    @Test
    void shouldRefuseAUrlThatIsNotHttp()
    {
        final CliFixture.Result result = CliFixture.run("admin", "tiers", "--url", "ftp://x/");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--url");
    }

    @Test
    void shouldListTheAdminExitCodesInItsHelp()
    {
        for (final String[] help : new String[][] {{"admin", "--help"}, {"admin", "migrate", "--help"}})
        {
            final CliFixture.Result result = CliFixture.run(help);
            assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).containsOnlyOnce("Exit codes:").contains("  6   kvtier admin: the API refused the token")
                .contains("  7   kvtier admin: the API does not know");
        }
        assertThat(CliFixture.run("admin", "--help").out()).contains("tiers").contains("migrate").contains("migrations").contains("evict")
            .contains("mark").contains("unmark").contains("marks").contains("health");
    }
}
