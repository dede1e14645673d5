package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.Arrays;

/**
 * {@code kvtier}: the tiered KV-cache engine's command line.
 */
@Command(name = "kvtier",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Node-local tiered KV cache for LLM inference: a shared-memory page pool (L2) in front of L3 storage tiers.",
    subcommands = {DemoCommand.class, ServeCommand.class, StatCommand.class, BenchCommand.class, NamespaceCommand.class, AdminCommand.class,
        ChaosCommand.class,
        CommandLine.HelpCommand.class})
public final class Main implements Runnable
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"-v", "--verbose"}, description = "Log debug detail to stderr.", scope = CommandLine.ScopeType.INHERIT)
    boolean verbose;

    @Option(names = {"-q", "--quiet"}, description = "Log only warnings and errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean quiet;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * Builds the command line: converters for sizes and durations, the exit-code list in every
     * command's help, and the mapping of failures to exit codes; tests pass their own writers.
     *
     * @param out where results go
     * @param err where errors and progress go
     * @return the command line
     */
    public static CommandLine commandLine(final PrintWriter out, final PrintWriter err)
    {
        final CommandLine commandLine = Converters.register(new CommandLine(new Main()));
        listExitCodes(commandLine);
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setExecutionStrategy(parseResult ->
        {
            final Main main = parseResult.commandSpec().commandLine().getCommand();
            Logging.configure(main.verbose, main.quiet);
            return new CommandLine.RunLast().execute(parseResult);
        });
        commandLine.setParameterExceptionHandler((ex, args) ->
        {
            final CommandLine failed = ex.getCommandLine();
            failed.getErr().println("kvtier: " + ex.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, failed.getErr()))
            {
                failed.getErr().println("Try '" + failed.getCommandSpec().qualifiedName() + " --help'.");
            }
            return ExitCode.USAGE;
        });
        final Failures failures = new Failures();
        commandLine.setExecutionExceptionHandler(failures);
        commandLine.setExitCodeExceptionMapper(failures);
        return commandLine;
    }

    /** Gives every command the exit-code list, in place of a footer that still points to it. */
    private static void listExitCodes(final CommandLine commandLine)
    {
        final CommandLine.Model.UsageMessageSpec usage = commandLine.getCommandSpec().usageMessage();
        usage.exitCodeListHeading(ExitCode.LIST_HEADING).exitCodeList(ExitCode.list());
        final String[] footer = usage.footer();
        if (Arrays.asList(footer).contains(ExitCode.HELP))
        {
            final String[] kept = Arrays.stream(footer).filter(line -> !line.equals(ExitCode.HELP)).toArray(String[]::new);
            // the blank line that separated the old exit-code block goes with it
            usage.footer(kept.length > 0 && kept[kept.length - 1].isEmpty() ? Arrays.copyOf(kept, kept.length - 1) : kept);
        }
        commandLine.getSubcommands().values().forEach(Main::listExitCodes);
    }

    /**
     * @param args the command line
     */
    public static void main(final String[] args)
    {
        final PrintWriter out = new PrintWriter(System.out, true);
        final PrintWriter err = new PrintWriter(System.err, true);
        final int code = commandLine(out, err).execute(args);
        out.flush();
        err.flush();
        System.exit(code);
    }
}
