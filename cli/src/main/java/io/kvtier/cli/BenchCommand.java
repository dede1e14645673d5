package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code kvtier bench}: benchmarks that measure the engine or its policies, each against a baseline
 * in the same run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Benchmarks and workload replays.",
    subcommands = {BenchReplayCommand.class, BenchIpcCommand.class, BenchCopyCommand.class, BenchTierCommand.class, BenchDeviceCommand.class,
        BenchMigrateCommand.class, BenchAdaptersCommand.class, BenchRequestsCommand.class, BenchRestartCommand.class})
public final class BenchCommand implements Runnable
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ParentCommand
    Main main;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
