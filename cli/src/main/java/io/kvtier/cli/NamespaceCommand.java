package io.kvtier.cli;

import io.kvtier.client.Namespace;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.HexFormat;
import java.util.concurrent.Callable;

/**
 * {@code kvtier namespace}: a namespace's root (docs/keys.md) and tag (docs/ipc-protocol.md section 8),
 * computed here as every client computes them, for an operator writing {@code ipc.allowed-namespaces}.
 */
@Command(name = "namespace", mixinStandardHelpOptions = true,
    description = {"Prints the root and the tag of a namespace (model, KV layout, rank, tenant salt), as clients compute them,"
        + " and the ipc.allowed-namespaces entry that lets a user name it."})
public final class NamespaceCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--model", required = true, paramLabel = "ID", description = "The model id, e.g. meta-llama/Llama-3.1-8B-Instruct.")
    String model;

    @Option(names = "--layout", required = true, paramLabel = "TEXT", description = "The KV layout string, e.g. bf16/page16/layer-first/tp1.")
    String layout;

    @Option(names = "--rank", defaultValue = "0", paramLabel = "N", description = "The tensor-parallel rank. Default: ${DEFAULT-VALUE}.")
    int rank;

    @Option(names = "--salt", defaultValue = "", paramLabel = "TEXT", description = "The tenant salt. Default: empty.")
    String salt;

    @Option(names = "--uid", paramLabel = "N", description = "Print the allow-list entry for this user id (default: a *= entry for everyone).")
    Integer uid;

    @Override
    public Integer call()
    {
        final Namespace namespace;
        try
        {
            namespace = new Namespace(model, layout, rank, salt);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage());
        }
        final String root = HexFormat.of().formatHex(namespace.rootBytes());
        final PrintWriter out = spec.commandLine().getOut();
        out.println("root " + root);
        out.println("tag  " + String.format("%016x", namespace.tag()));
        out.println("ipc.allowed-namespaces entry: " + (uid == null ? "*" : "uid:" + uid) + "=" + root);
        out.flush();
        return 0;
    }
}
