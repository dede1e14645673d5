package io.kvtier.engine.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Trust domains: several pools served by one engine process, one per group of clients that must not
 * be able to read each other's cache. Each domain is an engine of its own, with its own pool file,
 * socket, allow-lists and L3 key salt; the L3 tiers are configured once and shared by every domain,
 * whose objects never share a name there (docs/keys.md, "The name of a page in L3").
 *
 * <p>In a settings file, every engine setting may be given per domain as {@code domain.<name>.<key>},
 * over the settings given without the prefix, which every domain inherits: for example
 * {@code domain.tenant-a.pool.path}, {@code domain.tenant-a.ipc.socket-path},
 * {@code domain.tenant-a.ipc.allowed-uids}. Tiers ({@code tier.*}) and {@code plugins.dir} are shared
 * and may not be given per domain. A domain's {@code l3.key-salt} defaults to its name. Without any
 * {@code domain.*} setting there are no domains: one engine, as always.
 *
 * @param shared  the settings without a domain: the tiers and plugins every domain shares, and the
 *                engine when there are no domains
 * @param domains each domain's settings, in the order first named
 */
public record TrustDomains(EngineConfig shared, List<Domain> domains)
{
    /** The prefix of a domain's settings. */
    public static final String DOMAIN_PREFIX = "domain.";

    /**
     * One trust domain.
     *
     * @param name   its name
     * @param config its engine's settings
     */
    public record Domain(String name, EngineConfig config)
    {
    }

    /** @return whether the settings name any domain */
    public boolean isEmpty()
    {
        return domains.isEmpty();
    }

    /**
     * @param file      a settings file, or null
     * @param overrides settings that replace the file's
     * @return the domains, validated
     * @throws ConfigException naming the key, the value and what is wrong
     */
    public static TrustDomains load(final Path file, final Map<String, String> overrides)
    {
        final Map<String, String> raw = new LinkedHashMap<>(file == null ? Map.of() : ConfigFile.read(file));
        raw.putAll(overrides);
        try
        {
            return from(raw);
        }
        catch (final ConfigException ex)
        {
            if (file == null)
            {
                throw ex;
            }
            throw new ConfigException(ex.key(), file + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * @param raw settings, with or without {@code domain.*} keys
     * @return the domains, validated
     * @throws ConfigException naming the key, the value and what is wrong
     */
    public static TrustDomains from(final Map<String, String> raw)
    {
        final Map<String, String> base = new LinkedHashMap<>();
        final Map<String, Map<String, String>> byDomain = new LinkedHashMap<>();
        for (final Map.Entry<String, String> entry : raw.entrySet())
        {
            final String key = entry.getKey();
            if (!key.startsWith(DOMAIN_PREFIX))
            {
                base.put(key, entry.getValue());
                continue;
            }
            final String rest = key.substring(DOMAIN_PREFIX.length());
            final int dot = rest.indexOf('.');
            if (dot <= 0 || dot == rest.length() - 1)
            {
                throw new ConfigException(key, "invalid setting " + key + ": a domain's settings look like domain.<name>.<setting>,"
                    + " e.g. domain.tenant-a.pool.path");
            }
            final String name = rest.substring(0, dot);
            final String setting = rest.substring(dot + 1);
            if (!name.matches("[a-z0-9][a-z0-9_-]*"))
            {
                throw new ConfigException(key, "invalid domain name '" + name + "' in " + key + ": use lowercase letters, digits, '-' and '_'");
            }
            if (setting.startsWith(EngineConfig.TIER_PREFIX) || setting.equals(EngineSettings.PLUGINS_DIR.key()))
            {
                throw new ConfigException(key, "invalid setting " + key + ": tiers and plugins.dir are shared by every domain; set "
                    + setting + " without the domain.* prefix");
            }
            byDomain.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(setting, entry.getValue());
        }
        final EngineConfig shared = EngineConfig.from(base);
        final List<Domain> domains = new ArrayList<>();
        final Map<String, String> pools = new HashMap<>();
        final Map<String, String> sockets = new HashMap<>();
        final Map<String, String> salts = new HashMap<>();
        for (final Map.Entry<String, Map<String, String>> entry : byDomain.entrySet())
        {
            final String name = entry.getKey();
            final Map<String, String> merged = new LinkedHashMap<>(base);
            merged.putAll(entry.getValue());
            if (!entry.getValue().containsKey(EngineSettings.L3_KEY_SALT.key()))
            {
                merged.put(EngineSettings.L3_KEY_SALT.key(), name);
            }
            final EngineConfig config;
            try
            {
                config = EngineConfig.from(merged);
            }
            catch (final ConfigException ex)
            {
                final String key = entry.getValue().containsKey(ex.key()) ? DOMAIN_PREFIX + name + "." + ex.key() : ex.key();
                throw new ConfigException(key, "domain " + name + ": " + ex.getMessage(), ex);
            }
            distinct(pools, name, EngineSettings.POOL_PATH.key(), config.poolPath().toAbsolutePath().normalize().toString(),
                "every domain needs a pool file of its own");
            distinct(sockets, name, EngineSettings.IPC_SOCKET_PATH.key(),
                config.get(EngineSettings.IPC_SOCKET_PATH).toAbsolutePath().normalize().toString(), "every domain needs a socket of its own");
            distinct(salts, name, EngineSettings.L3_KEY_SALT.key(), config.get(EngineSettings.L3_KEY_SALT),
                "domains with one salt would share their pages' names in L3");
            if (!domains.isEmpty() && config.pageSize() != domains.getFirst().config().pageSize())
            {
                throw new ConfigException(DOMAIN_PREFIX + name + "." + EngineSettings.POOL_PAGE_SIZE.key(), "domain " + name + " has pool.page-size "
                    + config.pageSize() + " but domain " + domains.getFirst().name() + " has " + domains.getFirst().config().pageSize()
                    + ": the L3 tiers every domain shares hold objects of one size, so every domain needs the same pool.page-size");
            }
            domains.add(new Domain(name, config));
        }
        return new TrustDomains(shared, List.copyOf(domains));
    }

    private static void distinct(final Map<String, String> seen, final String domain, final String key, final String value, final String why)
    {
        final String other = seen.putIfAbsent(value, domain);
        if (other != null)
        {
            throw new ConfigException(DOMAIN_PREFIX + domain + "." + key, "domains " + other + " and " + domain + " have the same " + key + " = \""
                + value + "\": " + why + " (set " + DOMAIN_PREFIX + domain + "." + key + ")");
        }
    }
}
