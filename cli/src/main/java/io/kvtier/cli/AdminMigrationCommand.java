package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.concurrent.Callable;

/** {@code kvtier admin migration ID}: {@code GET /v1/migrations/{id}}. */
@Command(name = "migration", mixinStandardHelpOptions = true,
    description = "Shows one migration's progress: pages considered, admitted, copied, marked, failed, and refusals by reason.")
public final class AdminMigrationCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Parameters(paramLabel = "ID", description = "The migration's id (kvtier admin migrate or migrations print it).")
    long id;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "GET", "/v1/migrations/" + id, null, AdminApi::migration);
    }
}
