package io.kvtier.admin;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The admin.* settings: the listen address and the token file, checked at start with the key named. */
class AdminSettingsTest
{
    @TempDir
    Path dir;

    private Path tokenFile(final String mode, final String text) throws IOException
    {
        final Path file = dir.resolve("token-" + mode);
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void shouldReadATokenFileOfMode0600Or0400WithoutItsSurroundingWhiteSpace() throws IOException
    {
        assertThat(AdminSettings.token(tokenFile("rw-------", "  " + AdminServerTest.TOKEN + "\n")))
            .isEqualTo(AdminServerTest.TOKEN.getBytes(StandardCharsets.UTF_8));
        assertThat(AdminSettings.token(tokenFile("r--------", AdminServerTest.TOKEN))).hasSize(AdminServerTest.TOKEN.length());
    }

    @Test
    void shouldRefuseATokenFileOthersCanReadNamingTheFileAndItsMode() throws IOException
    {
        final Path file = tokenFile("rw-r--r--", AdminServerTest.TOKEN);
        assertThatThrownBy(() -> AdminSettings.token(file)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("admin.token-file").hasMessageContaining(file.toString()).hasMessageContaining("0644")
            .hasMessageContaining("0600 or 0400")
            .satisfies(ex -> assertThat(((ConfigException) ex).key()).isEqualTo("admin.token-file"));
        final Path group = tokenFile("rw-rw----", AdminServerTest.TOKEN);
        assertThatThrownBy(() -> AdminSettings.token(group)).hasMessageContaining("0660");
    }

    @Test
    void shouldRefuseADirectoryAMissingFileAndAShortOrEmptyToken() throws IOException
    {
        assertThatThrownBy(() -> AdminSettings.token(dir)).isInstanceOf(ConfigException.class).hasMessageContaining("not a regular file");
        assertThatThrownBy(() -> AdminSettings.token(dir.resolve("none"))).isInstanceOf(ConfigException.class).hasMessageContaining("none");
        final Path empty = tokenFile("rw-------", "\n");
        assertThatThrownBy(() -> AdminSettings.token(empty)).isInstanceOf(ConfigException.class).hasMessageContaining("at least 16");
        final Path spaced = dir.resolve("spaced");
        Files.writeString(spaced, "abcdefgh ijklmnopq");
        Files.setPosixFilePermissions(spaced, PosixFilePermissions.fromString("rw-------"));
        assertThatThrownBy(() -> AdminSettings.token(spaced)).isInstanceOf(ConfigException.class).hasMessageContaining("without spaces");
    }

    @Test
    void shouldListenOnLoopbackOnlyUnlessAllowRemote()
    {
        assertThat(AdminSettings.address("127.0.0.1:0", false).getAddress().isLoopbackAddress()).isTrue();
        assertThat(AdminSettings.address("localhost:8470", false).getPort()).isEqualTo(8470);
        assertThat(AdminSettings.address("[::1]:9", false).getAddress().isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> AdminSettings.address("0.0.0.0:8470", false)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("admin.listen = 0.0.0.0:8470").hasMessageContaining("not a loopback address")
            .hasMessageContaining("admin.allow-remote = true")
            .satisfies(ex -> assertThat(((ConfigException) ex).key()).isEqualTo("admin.listen"));
        final InetSocketAddress any = AdminSettings.address("0.0.0.0:8470", true);
        assertThat(any.getAddress().isAnyLocalAddress()).isTrue();
        assertThatThrownBy(() -> AdminSettings.address("no-such-host.invalid:1", false)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("does not resolve");
    }

    @Test
    void shouldRefuseAMalformedListenSettingNamingTheKey()
    {
        for (final String listen : new String[] {"8470", "localhost:", "localhost:70000", "a b:1"})
        {
            assertThatThrownBy(() -> EngineConfig.from(Map.of("admin.listen", listen))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("admin.listen");
        }
    }

    @Test
    void shouldBeOffWithoutAdminListen()
    {
        assertThat(AdminSettings.configure(EngineConfig.from(Map.of()))).isEmpty();
    }

    @Test
    void shouldStartFromTheSettingsOnAFreePortWithTheTokenAndLimits() throws Exception
    {
        final Path token = tokenFile("rw-------", AdminServerTest.TOKEN);
        final RecordingOperations operations = new RecordingOperations();
        final Optional<AdminServer.Builder> builder = AdminSettings.configure(EngineConfig.from(Map.of("admin.listen", "127.0.0.1:0",
            "admin.token-file", token.toString(), "admin.max-body", "1KiB")));
        assertThat(builder).isPresent();
        try (AdminServer server = builder.get().start(operations);
             HttpClient client = HttpClient.newHttpClient())
        {
            assertThat(server.address().getPort()).isPositive();
            final URI evict = server.uri().resolve("/v1/evict");
            final HttpResponse<String> allowed = client.send(HttpRequest.newBuilder(evict).header("Authorization", "Bearer " + AdminServerTest.TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString("{\"tier\":\"nvme\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(200);
            final HttpResponse<String> large = client.send(HttpRequest.newBuilder(evict).header("Authorization", "Bearer " + AdminServerTest.TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString(" ".repeat(1025) + "{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(large.statusCode()).isEqualTo(413);
        }
    }

    @Test
    void shouldRefuseToStartWithATokenFileOfMode0644()
    {
        assertThatThrownBy(() -> AdminSettings.configure(EngineConfig.from(Map.of("admin.listen", "127.0.0.1:0",
            "admin.token-file", tokenFile("rw-r--r--", AdminServerTest.TOKEN).toString()))))
            .isInstanceOf(ConfigException.class).hasMessageContaining("0644").hasMessageContaining("token-rw-r--r--");
    }
}
