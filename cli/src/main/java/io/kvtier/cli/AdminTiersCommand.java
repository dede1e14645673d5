package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.spi.ConfigValues;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code kvtier admin tiers}: {@code GET /v1/tiers}. */
@Command(name = "tiers", mixinStandardHelpOptions = true,
    description = "Shows every L3 tier in configuration order: state, usage, capacity, water levels, objects, counters and migration.")
public final class AdminTiersCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    AdminOptions options;

    @Override
    public Integer call()
    {
        return AdminApi.call(spec, options, "GET", "/v1/tiers", null, AdminTiersCommand::table);
    }

    static String table(final JsonNode answer)
    {
        final List<List<String>> rows = new ArrayList<>();
        for (final JsonNode tier : answer.path("tiers"))
        {
            final long used = tier.path("used_bytes").asLong();
            final JsonNode capacity = tier.get("capacity_bytes");
            final boolean bounded = capacity != null && !capacity.isNull();
            final JsonNode counters = tier.path("counters");
            rows.add(List.of(tier.path("name").asText(), tier.path("type").asText(), tier.path("state").asText(), ConfigValues.formatSize(used),
                bounded ? ConfigValues.formatSize(capacity.asLong()) : "-",
                bounded && capacity.asLong() > 0 ? String.format(Locale.ROOT, "%.1f%%", 100.0 * used / capacity.asLong()) : "-",
                tier.path("evict_high").isNumber() ? String.format(Locale.ROOT, "%.2f/%.2f", tier.path("evict_high").asDouble(),
                    tier.path("evict_low").asDouble()) : "-",
                Long.toString(tier.path("objects").asLong()), Long.toString(counters.path("hits").asLong()),
                Long.toString(counters.path("misses").asLong()), Long.toString(counters.path("errors").asLong()),
                AdminApi.text(tier.get("migration"))));
        }
        return AdminApi.table(List.of("TIER", "TYPE", "STATE", "USED", "CAPACITY", "FILL", "EVICT", "OBJECTS", "HITS", "MISSES", "ERRORS", "MIGRATION"),
            rows);
    }
}
