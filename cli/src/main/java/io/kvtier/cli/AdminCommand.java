package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code kvtier admin}: calls on a running engine's admin API (docs/admin-api.md), one subcommand per call.
 */
@Command(name = "admin", mixinStandardHelpOptions = true,
    description = {"Calls a running engine's admin API (kvtier serve with admin.listen set; docs/admin-api.md): its tiers, migrations,"
        + " evictions, marks and health. Calls that change something send the token of --token-file (or --config's admin.token-file)."},
    subcommands = {AdminTiersCommand.class, AdminMigrateCommand.class, AdminMigrationCommand.class, AdminMigrationsCommand.class,
        AdminEvictCommand.class, AdminMarkCommand.class, AdminUnmarkCommand.class, AdminMarksCommand.class, AdminHealthCommand.class})
public final class AdminCommand implements Runnable
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
