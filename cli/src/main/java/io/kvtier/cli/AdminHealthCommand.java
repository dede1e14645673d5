package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.concurrent.Callable;

/** {@code kvtier admin health}: {@code GET /health}. */
@Command(name = "health", mixinStandardHelpOptions = true,
    description = "Whether the engine is live and ready, with the reason when it is not: exit 0 when both, 1 otherwise.")
public final class AdminHealthCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "GET", "/health", null, AdminHealthCommand::text);
    }

    static String text(final JsonNode health)
    {
        final boolean live = health.path("live").asBoolean();
        final boolean ready = health.path("ready").asBoolean();
        return (live ? "live" : "not live") + ", " + (ready ? "ready" : "not ready")
            + (health.hasNonNull("reason") ? ": " + health.get("reason").asText() : "") + System.lineSeparator();
    }
}
