package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code kvtier admin mark}: {@code POST /v1/marks}. */
@Command(name = "mark", mixinStandardHelpOptions = true,
    description = "Marks pages (--key, repeatable: a chain is its pages' keys) or a whole namespace (--namespace) for a tier: their"
        + " backups go straight to it until the mark expires.")
public final class AdminMarkCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Option(names = "--tier", required = true, paramLabel = "TIER", description = "The tier the pages' backups go to.")
    String tier;

    @Option(names = "--key", paramLabel = "KEY", description = "A page key, 32 hex digits; repeatable.")
    List<String> keys = List.of();

    @Option(names = "--namespace", paramLabel = "HEX", description = "A whole namespace: its root (32 hex digits) or tag (16).")
    String namespace;

    @Option(names = "--ttl", required = true, paramLabel = "DURATION", description = "How long the mark lasts, above zero, e.g. 1h.")
    String ttl;

    @Override
    public Integer call()
    {
        final ObjectNode body = AdminApi.body().put("tier", tier);
        if (!keys.isEmpty())
        {
            final ArrayNode array = body.putArray("keys");
            keys.forEach(array::add);
        }
        AdminMigrateCommand.putIfSet(body, "namespace", namespace);
        body.put("ttl", ttl);
        return AdminApi.call(spec, options, "POST", "/v1/marks", body, AdminMarkCommand::text);
    }

    static String text(final JsonNode mark)
    {
        return "mark " + mark.path("id").asLong() + ": " + (mark.hasNonNull("namespace") ? "namespace " + mark.get("namespace").asText()
            : mark.path("pages").asLong() + " pages") + " -> " + AdminApi.text(mark.get("tier")) + " until " + AdminApi.text(mark.get("expires"))
            + System.lineSeparator();
    }
}
