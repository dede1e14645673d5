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

/** {@code kvtier admin evict}: {@code POST /v1/evict}. */
@Command(name = "evict", mixinStandardHelpOptions = true,
    description = "Removes pages from an L3 tier: those --key names, or the coldest the engine knows the tier holds (of --namespace, or any).")
public final class AdminEvictCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Option(names = "--tier", required = true, paramLabel = "TIER", description = "The tier.")
    String tier;

    @Option(names = "--key", paramLabel = "KEY", description = "A page key, 32 hex digits; repeatable. Without any, the coldest pages go.")
    List<String> keys = List.of();

    @Option(names = "--namespace", paramLabel = "HEX", description = "Only pages of this namespace: its root (32 hex digits) or tag (16).")
    String namespace;

    @Option(names = "--limit", paramLabel = "N", description = "Remove at most N pages. Default: the keys given, else 1000.")
    Integer limit;

    @Option(names = "--dry-run", description = "Answer what would be removed; change nothing.")
    boolean dryRun;

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
        if (limit != null)
        {
            body.put("limit", limit);
        }
        if (dryRun)
        {
            body.put("dry_run", true);
        }
        return AdminApi.call(spec, options, "POST", "/v1/evict", body, AdminEvictCommand::text);
    }

    static String text(final JsonNode report)
    {
        final boolean dry = report.path("dry_run").asBoolean();
        return (dry ? "would remove " : "removed ") + report.path("removed").asLong() + " pages from " + AdminApi.text(report.get("tier"))
            + (dry ? " (dry run: nothing changed)" : "") + "; not removed: " + AdminApi.counts(report.path("refusals")) + System.lineSeparator();
    }
}
