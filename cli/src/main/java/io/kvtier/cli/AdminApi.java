package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvtier.engine.config.ConfigFile;
import io.kvtier.engine.config.EngineSettings;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One call of a {@code kvtier admin} command on the admin API (docs/admin-api.md): finds the URL and the
 * token, sends the request with the JDK's HTTP client, prints the answer (its JSON as it came with
 * --json, else the command's table) or the refusal, and returns the exit code of the answer's status
 * (README, Exit codes): 2xx 0; 401 and 403 {@link ExitCode#NOT_AUTHORIZED}; 404 {@link ExitCode#NOT_FOUND};
 * any other 4xx {@link ExitCode#USAGE}; 5xx {@link ExitCode#FAILURE}; nothing answering
 * {@link ExitCode#UNAVAILABLE}.
 */
final class AdminApi
{
    /** The JSON of the bodies the commands send and the answers they read. */
    static final ObjectMapper JSON = new ObjectMapper();

    private AdminApi()
    {
    }

    /** @return an empty JSON object for a request body */
    static ObjectNode body()
    {
        return JSON.createObjectNode();
    }

    /**
     * @param spec    the command's spec, for its writers and usage errors
     * @param options the shared options
     * @param method  GET, POST or DELETE
     * @param path    the route, from /
     * @param body    the JSON body, or {@code null}
     * @param table   how the command prints a successful answer (and, for health, a 503 one) without --json
     * @return the exit code
     */
    static int call(final CommandLine.Model.CommandSpec spec, final AdminOptions options, final String method, final String path,
                    final ObjectNode body, final Function<JsonNode, String> table)
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final Map<String, String> settings = options.config == null ? Map.of() : ConfigFile.read(options.config);
        final URI url = base(spec, options, settings).resolve(path.substring(1));
        final HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(options.timeout).header("Accept", "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body.toString()));
        if (body != null)
        {
            request.header("Content-Type", "application/json");
        }
        if (!"GET".equals(method))
        {
            final String token = token(spec, options, settings);
            if (token != null)
            {
                request.header("Authorization", "Bearer " + token);
            }
        }
        final HttpResponse<String> response;
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(options.timeout).build())
        {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        }
        catch (final HttpConnectTimeoutException | ConnectException ex)
        {
            err.println("kvtier: nothing answers at " + url + " (" + ex.getClass().getSimpleName() + (ex.getMessage() == null ? "" : ": "
                + ex.getMessage()) + "): is kvtier serve running with admin.listen set? Pass the URL it printed with --url.");
            err.flush();
            return ExitCode.UNAVAILABLE;
        }
        catch (final HttpTimeoutException ex)
        {
            err.println("kvtier: the admin API at " + url + " did not answer within " + options.timeout.toSeconds() + " s (--timeout)");
            err.flush();
            return ExitCode.FAILURE;
        }
        catch (final IOException ex)
        {
            err.println("kvtier: cannot talk to the admin API at " + url + ": " + ex);
            err.flush();
            return ExitCode.UNAVAILABLE;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return ExitCode.INTERRUPTED;
        }
        final int status = response.statusCode();
        final JsonNode answer = parse(response.body());
        final boolean ok = status / 100 == 2;
        final boolean tabled = ok || (status == 503 && answer != null && answer.has("ready"));
        if (options.json)
        {
            out.println(response.body());
        }
        else if (tabled && answer != null)
        {
            out.print(table.apply(answer));
        }
        out.flush();
        if (ok)
        {
            return ExitCode.OK;
        }
        if (!tabled)
        {
            final String error = answer != null && answer.hasNonNull("error") ? answer.get("error").asText() : response.body();
            final String field = answer != null && answer.hasNonNull("field") ? " [field " + answer.get("field").asText() + "]" : "";
            err.println("kvtier: the admin API answered " + status + ": " + error + field);
            err.flush();
        }
        return exitCode(status);
    }

    /**
     * @param status an answer's HTTP status
     * @return the exit code kvtier admin ends with for it
     */
    static int exitCode(final int status)
    {
        if (status / 100 == 2)
        {
            return ExitCode.OK;
        }
        if (status == 401 || status == 403)
        {
            return ExitCode.NOT_AUTHORIZED;
        }
        if (status == 404)
        {
            return ExitCode.NOT_FOUND;
        }
        return status / 100 == 4 ? ExitCode.USAGE : ExitCode.FAILURE;
    }

    private static URI base(final CommandLine.Model.CommandSpec spec, final AdminOptions options, final Map<String, String> settings)
    {
        if (options.url != null)
        {
            final String text = options.url.toString();
            if ((!"http".equalsIgnoreCase(options.url.getScheme()) && !"https".equalsIgnoreCase(options.url.getScheme())) || options.url.getHost() == null)
            {
                throw new CommandLine.ParameterException(spec.commandLine(), "--url must be http://HOST:PORT/, got " + text);
            }
            return URI.create(text.endsWith("/") ? text : text + "/");
        }
        final String listen = settings.get(EngineSettings.ADMIN_LISTEN.key());
        if (listen == null || listen.isBlank())
        {
            return URI.create(AdminOptions.DEFAULT_URL);
        }
        final int colon = listen.lastIndexOf(':');
        if (colon < 0)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), options.config + ": admin.listen = " + listen + " is not HOST:PORT");
        }
        String host = listen.substring(0, colon).trim();
        final String port = listen.substring(colon + 1).trim();
        if ("0".equals(port))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), options.config + ": admin.listen = " + listen
                + " takes a free port at each start: pass --url with the URL kvtier serve printed");
        }
        if ("0.0.0.0".equals(host))
        {
            host = "127.0.0.1";
        }
        else if ("[::]".equals(host))
        {
            host = "[::1]";
        }
        return URI.create("http://" + host + ":" + port + "/");
    }

    private static String token(final CommandLine.Model.CommandSpec spec, final AdminOptions options, final Map<String, String> settings)
    {
        Path file = options.tokenFile;
        if (file == null)
        {
            final String configured = settings.get(EngineSettings.ADMIN_TOKEN_FILE.key());
            if (configured == null || configured.isBlank())
            {
                return null;
            }
            file = Path.of(configured.trim());
        }
        try
        {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        }
        catch (final IOException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot read the token file " + file + ": " + ex);
        }
    }

    private static JsonNode parse(final String body)
    {
        try
        {
            return body == null || body.isBlank() ? null : JSON.readTree(body);
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    /**
     * A plain-text table: a header and rows, each column as wide as its widest cell.
     *
     * @param header the column names
     * @param rows   the cells
     * @return the table, one line per row
     */
    static String table(final List<String> header, final List<List<String>> rows)
    {
        final List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        final int[] widths = new int[header.size()];
        for (final List<String> row : all)
        {
            for (int i = 0; i < row.size(); i++)
            {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        final StringBuilder text = new StringBuilder();
        for (final List<String> row : all)
        {
            final StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++)
            {
                line.append(i == 0 ? "" : "  ").append(i == row.size() - 1 ? row.get(i) : String.format("%-" + widths[i] + "s", row.get(i)));
            }
            text.append(line.toString().stripTrailing()).append(System.lineSeparator());
        }
        return text.toString();
    }

    /**
     * @param node a JSON value
     * @return its text, or {@code -} for null or absent
     */
    static String text(final JsonNode node)
    {
        return node == null || node.isNull() || node.isMissingNode() ? "-" : node.asText();
    }

    /**
     * @param counts a JSON object of counts by name
     * @return {@code name n, name n}, or {@code none}
     */
    static String counts(final JsonNode counts)
    {
        final List<String> parts = new ArrayList<>();
        counts.properties().forEach(entry -> parts.add(entry.getKey() + " " + entry.getValue().asLong()));
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }

    /**
     * @param report a migration's JSON
     * @return it in a few lines
     */
    static String migration(final JsonNode report)
    {
        final String nl = System.lineSeparator();
        return "migration " + report.path("id").asLong() + " (" + text(report.get("origin")) + "): " + text(report.get("state")) + nl
            + "  " + text(report.get("source")) + " -> " + text(report.get("target")) + ", method " + text(report.get("method"))
            + ", retention " + text(report.get("retention")) + nl
            + "  considered " + report.path("considered").asLong() + ", admitted " + report.path("admitted").asLong() + ", copied "
            + report.path("copied").asLong() + ", marked " + report.path("marked").asLong() + ", failed " + report.path("failed").asLong()
            + ", " + io.kvtier.spi.ConfigValues.formatSize(report.path("bytes").asLong()) + " copied" + nl
            + "  refused: " + counts(report.path("refusals")) + nl
            + "  started " + text(report.get("started")) + ", ended " + text(report.get("ended"))
            + (report.hasNonNull("message") ? nl + "  " + report.get("message").asText() : "") + nl;
    }
}
