package io.kvtier.cli;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import io.kvtier.engine.Engine;
import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code kvtier serve} with {@code admin.*} settings: refused before the engine starts, or serving the API beside it. */
class ServeAdminTest
{
    private static final String TOKEN = "serve-test-token-0123456789abcdef";
    private static final int PAGE_SIZE = 64 * 1024;

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
        final Path config = config(dir, pool, "admin.listen = 127.0.0.1:0", "admin.token-file = " + tokenFile(dir, "rw-------"),
            "tier.cold.type = posix", "tier.cold.dir = " + dir.resolve("cold"), "tier.cold.layout = files", "l3.tiers = disk, cold");
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
            // Pages written over IPC, backed up to disk, moved to cold with the token, then read back byte-exact from cold.
            final Namespace namespace = new Namespace("serve-admin-test", "page4", 0, "");
            final int pages = 8;
            final PageKeyChain keys = new PageKeyChain(pages).compute(namespace, IntStream.range(0, 4 * pages).toArray(), 4 * pages, 4, false);
            try (KvtierClient writer = KvtierClient.connect(Path.of(pool + ".sock"), ClientOptions.of(pages, namespace)))
            {
                try (ReservedPages reserved = writer.reserve(keys))
                {
                    for (int i = 0; i < pages; i++)
                    {
                        final MemorySegment page = reserved.page(i);
                        for (int b = 0; b < PAGE_SIZE; b++)
                        {
                            page.set(ValueLayout.JAVA_BYTE, b, (byte)(i * 31 + b * 7));
                        }
                    }
                    assertThat(reserved.commit(PAGE_SIZE)).isEqualTo(pages);
                }
                writer.flush();
                final HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(api.resolve("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertThat(metrics.statusCode()).isEqualTo(200);
                assertThat(metrics.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
                for (final String line : metrics.body().split("\n"))
                {
                    assertThat(line).as("a line of the text format").matches(
                        "# (HELP|TYPE) kvtier_\\w+ .*|kvtier_\\w+(\\{(\\w+=\"[^\"]*\",?)*\\})? (-?[0-9.eE+-]+|[+-]Inf|NaN)");
                }
                assertThat(metrics.body()).contains("kvtier_tier_written_bytes_total{tier=\"disk\"}").contains("kvtier_requests_total ");
                final StringBuilder body = new StringBuilder("{\"source\":\"disk\",\"target\":\"cold\",\"keys\":[");
                for (int i = 0; i < pages; i++)
                {
                    body.append(i == 0 ? "" : ",").append('"').append(new PageKey(keys.high(i), keys.low(i)).toHex()).append('"');
                }
                body.append("]}");
                final HttpResponse<String> wrongToken = client.send(HttpRequest.newBuilder(api.resolve("/v1/migrate"))
                    .header("Authorization", "Bearer not-the-token-0123456789")
                    .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(wrongToken.statusCode()).isEqualTo(403);
                final HttpResponse<String> started = client.send(HttpRequest.newBuilder(api.resolve("/v1/migrate"))
                    .header("Authorization", "Bearer " + TOKEN)
                    .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
                final URI report = api.resolve(started.headers().firstValue("Location").orElseThrow());
                final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                String state = started.body();
                while (!state.contains("\"state\":\"done\""))
                {
                    assertThat(System.nanoTime()).as("the migration ends; last report %s", state).isLessThan(until);
                    Thread.sleep(20);
                    state = client.send(HttpRequest.newBuilder(report).build(), HttpResponse.BodyHandlers.ofString()).body();
                }
                assertThat(state).contains("\"copied\":" + pages);
                assertThat(writer.evict(0, keys, 0, pages)).isEqualTo(pages);
                try (PinnedPages pinned = writer.acquire(keys))
                {
                    assertThat(pinned.count()).isEqualTo(pages);
                    assertThat(pinned.fromL3()).isEqualTo(pages);
                    for (int i = 0; i < pages; i++)
                    {
                        final MemorySegment page = pinned.page(i);
                        for (int b = 0; b < PAGE_SIZE; b++)
                        {
                            assertThat(page.get(ValueLayout.JAVA_BYTE, b)).as("page %d byte %d", i, b).isEqualTo((byte)(i * 31 + b * 7));
                        }
                    }
                }
            }
            try (java.util.stream.Stream<Path> files = Files.walk(dir.resolve("cold")))
            {
                assertThat(files.filter(file -> file.toString().endsWith(".kvp")).count()).as("pages in tier cold").isEqualTo(pages);
            }
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
