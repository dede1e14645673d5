package io.kvtier.cli;

import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The options every {@code kvtier admin} command shares: where the admin API is, the token, and how to print.
 */
public final class AdminOptions
{
    /** Where the API is when neither --url nor --config says: the port docs/admin-api.md suggests for admin.listen. */
    static final String DEFAULT_URL = "http://127.0.0.1:8470/";

    @Option(names = "--url", paramLabel = "URL", description = "The admin API, e.g. http://127.0.0.1:8470/ (what kvtier serve printed)."
        + " Default: from --config's admin.listen, else " + DEFAULT_URL + ".")
    URI url;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "The engine's settings file: admin.listen gives the URL"
        + " (a wildcard host is reached on loopback) and admin.token-file the token, unless --url or --token-file say otherwise.")
    Path config;

    @Option(names = "--token-file", paramLabel = "FILE", description = "The file holding the admin token (the engine's admin.token-file),"
        + " sent as Authorization: Bearer with calls that change something.")
    Path tokenFile;

    @Option(names = "--json", description = "Print the API's JSON answer as it came, instead of a table.")
    boolean json;

    @Option(names = "--timeout", defaultValue = "30s", paramLabel = "DURATION", description = "How long to wait to connect and for the"
        + " answer. Default: ${DEFAULT-VALUE}.")
    Duration timeout;
}
