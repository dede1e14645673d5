package io.kvtier.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code kvtier admin migrate}: {@code POST /v1/migrate}. */
@Command(name = "migrate", mixinStandardHelpOptions = true,
    description = {"Starts a migration from one tier to another: of the pages --key names, or of a sample of the pages the engine knows"
        + " the source holds (--namespace, --min-age, --fraction, --limit). --dry-run answers what would be admitted and why not,"
        + " and changes nothing. Follow a started one with kvtier admin migration ID."})
public final class AdminMigrateCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Option(names = "--source", required = true, paramLabel = "TIER", description = "The tier to move pages from.")
    String source;

    @Option(names = "--target", required = true, paramLabel = "TIER", description = "The tier to move them to.")
    String target;

    @Option(names = "--key", paramLabel = "KEY", description = "A page key, 32 hex digits; repeatable. Without any, the sampling rule applies.")
    List<String> keys = List.of();

    @Option(names = "--namespace", paramLabel = "HEX", description = "Sample only pages of this namespace: its root (32 hex digits, as kvtier"
        + " namespace prints it) or its tag (16).")
    String namespace;

    @Option(names = "--min-age", paramLabel = "DURATION", description = "Sample only pages unused this long, e.g. 10m. Default: 0s.")
    String minAge;

    @Option(names = "--fraction", paramLabel = "X", description = "Sample this share of the matching pages, above 0 and at most 1. Default: 1.")
    Double fraction;

    @Option(names = "--limit", paramLabel = "N", description = "Take at most N pages. Default: the keys given, else 1000.")
    Integer limit;

    @Option(names = "--method", paramLabel = "METHOD", description = "copy, mark or both. Default: copy.")
    String method;

    @Option(names = "--retention", paramLabel = "RETENTION", description = "move or keep-source (copy and both). Default: move.")
    String retention;

    @Option(names = "--dry-run", description = "Answer what would be admitted and why not; change nothing.")
    boolean dryRun;

    @Override
    public Integer call()
    {
        final ObjectNode body = AdminApi.body().put("source", source).put("target", target);
        if (!keys.isEmpty())
        {
            final ArrayNode array = body.putArray("keys");
            keys.forEach(array::add);
        }
        putIfSet(body, "namespace", namespace);
        putIfSet(body, "min_age", minAge);
        if (fraction != null)
        {
            body.put("fraction", fraction);
        }
        if (limit != null)
        {
            body.put("limit", limit);
        }
        putIfSet(body, "method", method);
        putIfSet(body, "retention", retention);
        if (dryRun)
        {
            body.put("dry_run", true);
        }
        return AdminApi.call(spec, options, "POST", "/v1/migrate", body, AdminApi::migration);
    }

    static void putIfSet(final ObjectNode body, final String field, final String value)
    {
        if (value != null)
        {
            body.put(field, value);
        }
    }
}
