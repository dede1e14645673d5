package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code kvtier admin migrations}: {@code GET /v1/migrations}. */
@Command(name = "migrations", mixinStandardHelpOptions = true,
    description = "Lists the migrations the engine remembers, the newest first: the tiers' own (strategy) and those asked for (admin).")
public final class AdminMigrationsCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "GET", "/v1/migrations", null, AdminMigrationsCommand::table);
    }

    static String table(final JsonNode answer)
    {
        final List<List<String>> rows = new ArrayList<>();
        for (final JsonNode migration : answer.path("migrations"))
        {
            rows.add(List.of(Long.toString(migration.path("id").asLong()), AdminApi.text(migration.get("origin")), AdminApi.text(migration.get("state")),
                AdminApi.text(migration.get("source")) + " -> " + AdminApi.text(migration.get("target")), AdminApi.text(migration.get("method")),
                Long.toString(migration.path("considered").asLong()), Long.toString(migration.path("admitted").asLong()),
                Long.toString(migration.path("copied").asLong()), Long.toString(migration.path("marked").asLong()),
                Long.toString(migration.path("failed").asLong()), AdminApi.text(migration.get("started"))));
        }
        return AdminApi.table(List.of("ID", "ORIGIN", "STATE", "TIERS", "METHOD", "CONSIDERED", "ADMITTED", "COPIED", "MARKED", "FAILED", "STARTED"),
            rows);
    }
}
