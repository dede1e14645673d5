/**
 * The {@code kvtier} command: one picocli class per subcommand ({@code demo}, {@code serve},
 * {@code bench replay}), exit codes in {@link io.kvtier.cli.ExitCode}.
 */
package io.kvtier.cli;
