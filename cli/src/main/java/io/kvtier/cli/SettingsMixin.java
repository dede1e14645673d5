package io.kvtier.cli;

import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code --set key=value}: engine settings from the command line, over the config file's.
 */
public final class SettingsMixin
{
    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "An engine setting (see docs/config.md); repeatable, overrides the config file.")
    Map<String, String> settings = new LinkedHashMap<>();

    Map<String, String> settings()
    {
        return settings;
    }
}
