package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code kvtier admin marks}: {@code GET /v1/marks}. */
@Command(name = "marks", mixinStandardHelpOptions = true, description = "Lists the marks in force: an operator's and those migrations made.")
public final class AdminMarksCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "GET", "/v1/marks", null, AdminMarksCommand::table);
    }

    static String table(final JsonNode answer)
    {
        final List<List<String>> rows = new ArrayList<>();
        for (final JsonNode mark : answer.path("marks"))
        {
            rows.add(List.of(Long.toString(mark.path("id").asLong()), AdminApi.text(mark.get("tier")), Long.toString(mark.path("pages").asLong()),
                AdminApi.text(mark.get("namespace")), AdminApi.text(mark.get("origin")), AdminApi.text(mark.get("expires"))));
        }
        return AdminApi.table(List.of("ID", "TIER", "PAGES", "NAMESPACE", "ORIGIN", "EXPIRES"), rows);
    }
}
