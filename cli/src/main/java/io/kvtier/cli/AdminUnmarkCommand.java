package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.concurrent.Callable;

/** {@code kvtier admin unmark ID}: {@code DELETE /v1/marks/{id}}. */
@Command(name = "unmark", mixinStandardHelpOptions = true, description = "Drops a mark before it expires.")
public final class AdminUnmarkCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Parameters(paramLabel = "ID", description = "The mark's id (kvtier admin mark or marks print it).")
    long id;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "DELETE", "/v1/marks/" + id, null,
            answer -> "mark " + answer.path("id").asLong() + " removed" + System.lineSeparator());
    }
}
