package io.kvtier.cli;

import io.kvtier.engine.Engine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code kvtier serve} with {@code admin.*} settings: refused before the engine starts, or serving the API beside it. */
class ServeAdminTest
{
    private static final String TOKEN = "serve-test-token-0123456789abcdef";

    private static Path config(final Path dir, final Path pool, final String... more) throws Exception
    {
        final Path config = dir.resolve("kvtier.conf");
        final List<String> lines = new java.util.ArrayList<>(List.of("pool.path = " + pool, "pool.size = 2MiB", "pool.page-size = 64KiB",
            "tier.disk.type = posix", "tier.disk.dir = " + dir.resolve("l3")));
        lines.addAll(Arrays.asList(more));
        Files.write(config, lines);
        return config;
    }

    private static Path tokenFile(final Path dir, final String mode) throws Exception
    {
        final Path file = dir.resolve("admin-token");
        Files.writeString(file, TOKEN);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void shouldRefuseATokenFileOthersCanReadBeforeTheEngineStarts(@TempDir final Path dir) throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-serve-admin-refused-" + ProcessHandle.current().pid());
        final Path token = tokenFile(dir, "rw-r--r--");
        final CliFixture.Result result = CliFixture.run("serve", "--config",
            config(dir, pool, "admin.listen = 127.0.0.1:0", "admin.token-file = " + token).toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("admin.token-file").contains(token.toString()).contains("0644");
        assertThat(pool).as("no engine started").doesNotExist();
    }

    @Test
    void shouldRefuseANonLoopbackListenAddressUnlessAllowed(@TempDir final Path dir) throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-serve-admin-remote-" + ProcessHandle.current().pid());
        final CliFixture.Result result = CliFixture.run("serve", "--config", config(dir, pool, "admin.listen = 0.0.0.0:0").toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("admin.listen = 0.0.0.0:0").contains("admin.allow-remote");
        assertThat(pool).doesNotExist();
    }

    /**
     * The end-to-end check of issue 18's "done when" for the admin API. It needs the engine's operations
     * ({@code Engine.operations()}, the engine part of the issue) and {@code ServeCommand.operations} calling
     * it: until the engine has the method, the test is skipped.
     */
    @Test
    void shouldServeTheAdminApiBesideTheEngineAndStopItFirst(@TempDir final Path dir) throws Exception
    {
        assumeTrue(Arrays.stream(Engine.class.getMethods()).anyMatch(method -> method.getName().equals("operations")
            && method.getParameterCount() == 0), "Engine.operations() is not in this build yet");
        final Path pool = Path.of("/dev/shm/kvtier-serve-admin-test-" + ProcessHandle.current().pid());
        final Path config = config(dir, pool, "admin.listen = 127.0.0.1:0", "admin.token-file = " + tokenFile(dir, "rw-------"));
        final Path out = dir.resolve("out.txt");
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try (HttpClient client = HttpClient.newHttpClient())
        {
            final Pattern announced = Pattern.compile("kvtier admin API: (http://127\\.0\\.0\\.1:\\d+/)");
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Matcher matcher = announced.matcher(Files.readString(out));
            while (!matcher.find())
            {
                assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced its admin API in time; output: %s", Files.readString(out)).isLessThan(deadline);
                Thread.sleep(50);
                matcher = announced.matcher(Files.readString(out));
            }
            final URI api = URI.create(matcher.group(1));
            final HttpResponse<String> health = client.send(HttpRequest.newBuilder(api.resolve("/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
            final HttpResponse<String> tiers = client.send(HttpRequest.newBuilder(api.resolve("/v1/tiers")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(tiers.body()).contains("\"name\":\"disk\"");
            final HttpResponse<String> anonymous = client.send(HttpRequest.newBuilder(api.resolve("/v1/migrate"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"source\":\"disk\",\"target\":\"disk\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
            final CliFixture.Result cli = CliFixture.run("admin", "tiers", "--url", api.toString());
            assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCode.OK);
            assertThat(cli.out()).contains("disk");
            process.destroy();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("serve stopped after SIGTERM").isTrue();
            assertThat(process.exitValue()).isZero();
            assertThat(pool).doesNotExist();
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}
