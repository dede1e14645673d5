package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvtier.bench.ipc.PythonRoundTrips;
import io.kvtier.bench.workload.ChatWorkload;
import io.kvtier.client.python.PythonInterpreter;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Python engine drivers ({@code clients/python/kvtier/drivers}), which call kvtier's SGLang, vLLM and LMCache
 * adapters as those engines' loaders and controllers do, run as processes of their own against an engine this
 * process serves: {@code kvtier demo --engine} plays a workload through two of them, {@code kvtier bench adapters}
 * times their batches. Each prints one JSON object on its last line of output.
 */
final class EngineDrivers
{
    /** The inference engines with an adapter and a driver. */
    enum Kind
    {
        sglang, vllm, lmcache
    }

    /** A driver that exits with this found a page whose bytes were wrong (the project's exit code for corruption). */
    static final int DRIVER_CORRUPT = ExitCode.CORRUPT;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path binding;
    private final String python;
    private final Path logDirectory;

    private EngineDrivers(final Path binding, final String python, final Path logDirectory)
    {
        this.binding = binding;
        this.python = python;
        this.logDirectory = logDirectory;
    }

    /**
     * @param kind         the engine whose driver runs
     * @param logDirectory where the drivers' error output is kept while they run
     * @return the drivers of this checkout, or what is missing to run them (a message naming it and how to get it)
     * @throws IOException          if probing python3 fails
     * @throws InterruptedException if interrupted while probing
     */
    static Found find(final Kind kind, final Path logDirectory) throws IOException, InterruptedException
    {
        final Path binding = PythonRoundTrips.findBinding().orElse(null);
        final String missing = PythonRoundTrips.missing(binding);
        if (missing != null)
        {
            return new Found(null, "the " + kind + " driver needs the Python package and its library: " + missing);
        }
        final Path driver = binding.resolve("kvtier").resolve("drivers").resolve(kind + ".py");
        if (!Files.isRegularFile(driver))
        {
            return new Found(null, "this checkout has no " + kind + " driver (" + driver + ")");
        }
        final String interpreter = PythonInterpreter.withTorch();
        // null only without any python3, which missing() has already reported
        return new Found(new EngineDrivers(binding, interpreter == null ? "python3" : interpreter, logDirectory), null);
    }

    /**
     * @param drivers the drivers, or null
     * @param missing what is missing when drivers is null
     */
    record Found(EngineDrivers drivers, String missing)
    {
    }

    /** @return the interpreter the drivers run under */
    String interpreter()
    {
        return python;
    }

    /**
     * Writes a workload file a driver's {@code play} reads: the chat workload's requests in the order one client
     * issues them, each the prompt's token ids.
     *
     * @param file       where
     * @param workload   the workload, not yet started
     * @param pageTokens tokens per page
     * @param pageBytes  bytes of each page
     * @return the number of requests written
     * @throws IOException if the file cannot be written
     */
    static int writeWorkload(final Path file, final ChatWorkload workload, final int pageTokens, final int pageBytes) throws IOException
    {
        final ObjectNode root = JSON.createObjectNode();
        root.put("page_tokens", pageTokens);
        root.put("page_bytes", pageBytes);
        final ArrayNode requests = root.putArray("requests");
        final ChatWorkload.Request request = new ChatWorkload.Request();
        int count = 0;
        while (workload.next(request))
        {
            final ArrayNode tokens = requests.addArray();
            for (int i = 0; i < request.length(); i++)
            {
                tokens.add(request.tokens()[i]);
            }
            workload.answered(request);
            count++;
        }
        try (OutputStream out = Files.newOutputStream(file))
        {
            JSON.writeValue(out, root);
        }
        return count;
    }

    /**
     * Runs a driver to its end.
     *
     * @param kind      which driver
     * @param arguments its command line after the module ({@code play ...} or {@code bench ...}); {@code --json} is added
     * @return the JSON object it printed last
     * @throws IOException if it cannot start, exits other than 0 (or {@link #DRIVER_CORRUPT}, whose summary is returned),
     *                     or prints no JSON object; the message carries its error output's end
     * @throws InterruptedException if interrupted while it runs
     */
    JsonNode run(final Kind kind, final List<String> arguments) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(python, "-m", "kvtier.drivers." + kind));
        command.addAll(arguments);
        command.add("--json");
        final Path errors = Files.createTempFile(logDirectory, "driver-" + kind + "-", ".log");
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).directory(binding.toFile()).redirectError(errors.toFile());
            builder.environment().merge("PYTHONPATH", binding.toString(), (old, mine) -> mine + java.io.File.pathSeparator + old);
            final Process process = builder.start();
            process.getOutputStream().close();
            final byte[] output = process.getInputStream().readAllBytes();
            final int exit = process.waitFor();
            final String text = new String(output, StandardCharsets.UTF_8).strip();
            final String last = text.isEmpty() ? "" : text.substring(text.lastIndexOf('\n') + 1);
            if ((exit != 0 && exit != DRIVER_CORRUPT) || !last.startsWith("{"))
            {
                throw new IOException("the " + kind + " driver (" + String.join(" ", command) + ") exited " + exit + ": "
                    + tail(Files.readString(errors, StandardCharsets.UTF_8) + "\n" + text));
            }
            return JSON.readTree(last);
        }
        finally
        {
            Files.deleteIfExists(errors);
        }
    }

    private static String tail(final String text)
    {
        final String stripped = text.strip();
        return stripped.length() <= 2000 ? stripped : "..." + stripped.substring(stripped.length() - 2000);
    }
}
