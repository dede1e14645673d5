package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvtier.bench.workload.ChatWorkload;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.spi.ConfigValues;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code kvtier demo --engine sglang|vllm|lmcache}: two processes of one inference engine, each driving kvtier's
 * adapter for that engine as the engine's own loader and controller do ({@code python -m kvtier.drivers.ENGINE play}),
 * replay the demo's chat workload one after the other against the engine this process serves. Instance {@code a}
 * starts cold; instance {@code b}, another process with its own host memory, replays the same requests and finds
 * what {@code a} stored. Both check every byte they load against what the page must hold.
 */
final class EngineAdapterDemo
{
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private EngineAdapterDemo()
    {
    }

    /**
     * What the two instances did.
     *
     * @param kind      the engine
     * @param python    the interpreter the drivers ran under
     * @param requests  requests in the workload
     * @param instances each instance's summary, as its driver printed it
     */
    record Played(EngineDrivers.Kind kind, String python, int requests, List<JsonNode> instances)
    {
        long total(final String field)
        {
            return instances.stream().mapToLong(i -> i.path(field).asLong()).sum();
        }

        /** @return the second instance's summary: its hits came from pages the first stored */
        JsonNode warm()
        {
            return instances.getLast();
        }
    }

    /**
     * Replays the workload through two driver processes, one after the other.
     *
     * @param drivers    the drivers
     * @param kind       the engine
     * @param socket     the engine's IPC socket
     * @param workload   the demo's workload, not started
     * @param pageTokens tokens per page
     * @param pageBytes  bytes per page: the pool's page size
     * @param directory  a temporary directory for the workload file
     * @return what they did
     * @throws IOException          if a driver fails (the message names it and carries its output's end)
     * @throws InterruptedException if interrupted
     */
    static Played play(final EngineDrivers drivers, final EngineDrivers.Kind kind, final Path socket, final ChatWorkload workload,
                       final int pageTokens, final int pageBytes, final Path directory) throws IOException, InterruptedException
    {
        final Path file = directory.resolve("workload.json");
        final int requests = EngineDrivers.writeWorkload(file, workload, pageTokens, pageBytes);
        final List<JsonNode> instances = new ArrayList<>();
        for (final String instance : List.of("a", "b"))
        {
            instances.add(drivers.run(kind, List.of("play", "--socket", socket.toString(), "--workload", file.toString(),
                "--instance", instance, "--model", "kvtier-demo/synthetic-chat")));
        }
        return new Played(kind, drivers.interpreter(), requests, instances);
    }

    /**
     * Prints the summary.
     *
     * @param out    where
     * @param json   one JSON object, or text
     * @param played what the instances did
     * @param config the engine's settings
     * @param l3     the L3 tiers' summaries
     */
    static void print(final PrintWriter out, final boolean json, final Played played, final EngineConfig config,
                      final List<DemoCommand.L3Summary> l3) throws IOException
    {
        final JsonNode cold = played.instances().getFirst();
        final JsonNode warm = played.warm();
        if (!json)
        {
            out.println("kvtier demo --engine " + played.kind() + ": pool " + config.pageCount() + " pages of "
                + ConfigValues.formatSize(config.pageSize()) + " in " + config.poolPath() + ", " + l3.size() + " L3 tier(s), "
                + played.requests() + " requests replayed by two " + played.kind() + " processes through kvtier.adapters."
                + played.kind() + " (" + played.python() + ")");
            for (final JsonNode instance : played.instances())
            {
                out.println(String.format(Locale.ROOT, "instance %s: %d requests, %d pages, %d hit (%.1f%%), %d loaded, %d verified, %d corrupt,"
                        + " %d stored, %.2f s", instance.path("instance").asText(), instance.path("requests").asLong(),
                    instance.path("pages").asLong(), instance.path("pages_hit").asLong(), 100 * instance.path("hit_rate").asDouble(),
                    instance.path("pages_loaded").asLong(), instance.path("pages_verified").asLong(), instance.path("pages_corrupt").asLong(),
                    instance.path("pages_stored").asLong(), instance.path("seconds").asDouble()));
            }
            out.println(String.format(Locale.ROOT, "instance b found %.1f%% of its pages in kvtier (instance a, cold, %.1f%%): prefixes one %s process"
                + " computed, served to another from the shared pool", 100 * warm.path("hit_rate").asDouble(), 100 * cold.path("hit_rate").asDouble(),
                played.kind()));
            for (final DemoCommand.L3Summary tier : l3)
            {
                out.println("L3 tier " + tier.name() + " (" + tier.type() + "): " + tier.hits() + " hits, "
                    + String.format(Locale.ROOT, "%.1f MiB", tier.bytesWritten() / 1048576.0) + " written");
            }
            out.println(played.total("pages_corrupt") == 0 ? "every page loaded matched what was stored" : "CORRUPT PAGES FOUND");
            out.flush();
            return;
        }
        final ObjectNode root = JSON.createObjectNode();
        root.put("engine", played.kind().name());
        root.put("adapter", "kvtier.adapters." + played.kind());
        root.put("python", played.python());
        root.put("requests", played.requests());
        root.put("l2_hits", played.total("pages_hit"));
        root.put("l2_hits_from_other_instance", warm.path("pages_hit").asLong());
        root.put("hit_rate_cold", cold.path("hit_rate").asDouble());
        root.put("hit_rate_from_other_instance", warm.path("hit_rate").asDouble());
        root.put("pages_verified", played.total("pages_verified"));
        root.put("pages_corrupt", played.total("pages_corrupt"));
        root.put("pages_stored", played.total("pages_stored"));
        final ObjectNode pool = root.putObject("pool");
        pool.put("path", config.poolPath().toString());
        pool.put("pages", config.pageCount());
        pool.put("page_size_bytes", config.pageSize());
        final ArrayNode tiers = root.putArray("l3_tiers");
        for (final DemoCommand.L3Summary tier : l3)
        {
            tiers.addObject().put("name", tier.name()).put("type", tier.type()).put("hits", tier.hits()).put("bytes_written", tier.bytesWritten());
        }
        final ArrayNode instances = root.putArray("instances");
        played.instances().forEach(instances::add);
        out.println(JSON.writeValueAsString(root));
        out.flush();
    }

    /** @return a temporary directory for the workload file */
    static Path temporaryDirectory() throws IOException
    {
        return Files.createTempDirectory("kvtier-demo-engine-");
    }
}
