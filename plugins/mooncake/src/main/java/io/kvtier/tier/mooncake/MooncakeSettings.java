package io.kvtier.tier.mooncake;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.tier.support.TierSetting;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The Mooncake tier's settings, each declared once as a {@link TierSetting} (its parsing, rule, default
 * and the row of {@code docs/plugins/mooncake.md}'s table), validated before anything is loaded or
 * connected: every error names {@code tier.<name>.<key>}, the value and what is allowed.
 */
final class MooncakeSettings
{
    static final String LIB = "lib";
    static final String MASTER = "master";
    static final String METADATA_SERVER = "metadata-server";
    static final String LOCAL_HOSTNAME = "local-hostname";
    static final String PROTOCOL = "protocol";
    static final String DEVICE_NAME = "device-name";
    static final String GLOBAL_SEGMENT_SIZE = "global-segment-size";
    static final String LOCAL_BUFFER_SIZE = "local-buffer-size";
    static final String KEY_PREFIX = "key-prefix";
    static final String REPLICAS = "replicas";
    static final String SOFT_PIN = "soft-pin";
    static final String HARD_PIN = "hard-pin";
    static final String PREFERRED_SEGMENTS = "preferred-segments";
    static final String PREFER_LOCAL_SEGMENT = "prefer-local-segment";
    static final String SETUP_RETRIES = "setup-retries";
    static final String SETUP_TIMEOUT = "setup-timeout";
    static final String LEASE_TTL = "lease-ttl";
    static final String LEASE_WAIT = "lease-wait";
    static final String WRITE_RETRIES = "write-retries";
    static final String WRITE_BACKOFF = "write-backoff";
    static final String REPLACE_EXISTING = "replace-existing";
    static final String IO_THREADS = "io-threads";
    static final String BATCH_KEYS = "batch-keys";

    /** Mooncake's own name for "no metadata service: peers exchange segment descriptors directly". */
    static final String METADATA_SERVER_DEFAULT = "P2PHANDSHAKE";
    static final long GLOBAL_SEGMENT_SIZE_DEFAULT = 1L << 30;
    /** Only plain (copying) puts use it; the tier's puts and gets are zero-copy from the pool. */
    static final long LOCAL_BUFFER_SIZE_DEFAULT = 16L << 20;
    static final int SETUP_RETRIES_DEFAULT = 3;
    static final Duration SETUP_TIMEOUT_DEFAULT = Duration.ofSeconds(30);
    /** The master's {@code --default_kv_lease_ttl} default. */
    static final Duration LEASE_TTL_DEFAULT = Duration.ofSeconds(10);
    static final int WRITE_RETRIES_DEFAULT = 3;
    static final Duration WRITE_BACKOFF_DEFAULT = Duration.ofMillis(20);
    static final int IO_THREADS_DEFAULT = 2;
    static final int BATCH_KEYS_DEFAULT = 128;
    /**
     * The longest prefix accepted. Mooncake itself took 1 MiB keys in our probe, so no key of this tier
     * (prefix + 32 hex digits) can be too long for the backend; the bound keeps keys sane for logs, the
     * master's memory and an etcd metadata service.
     */
    static final int KEY_PREFIX_MAX_BYTES = 256;
    private static final String HOST_PORT = "host:port with a port from 1 to 65535, e.g. 10.0.0.5:50051";

    /** How nodes move bytes; the tier hands Mooncake the name in lower case. */
    enum Protocol
    {
        /** Over TCP. */
        TCP,
        /** Over RDMA, through {@code device-name}. */
        RDMA
    }

    // Each setting declared once: its parsing, rule, default and the row of docs/plugins/mooncake.md (MooncakeSettingsTest).
    static final TierSetting<String> LIB_SETTING = text(LIB, "a path to " + MooncakeLibrary.LIBRARY_FILE)
        .derivedDefault("`$" + MooncakeLibrary.LIBRARY_ENV_NAME + "`, else `$" + MooncakeLibrary.HOME_ENV_NAME + "/lib/"
            + MooncakeLibrary.LIBRARY_FILE + "` (see above)")
        .documented("Path of `libmooncake_store.so`.");
    static final TierSetting<String> MASTER_SETTING = TierSetting.string(MASTER)
        .rule(HOST_PORT, MooncakeSettings::isHostPort)
        .documented("`host:port` of `mooncake_master`'s RPC port.");
    static final TierSetting<String> METADATA_SERVER_SETTING = text(METADATA_SERVER, "P2PHANDSHAKE, http://host:port/metadata or etcd://host:port")
        .byDefault(METADATA_SERVER_DEFAULT)
        .documented("Mooncake's transfer metadata: `P2PHANDSHAKE` (peers exchange segment descriptors directly, nothing to run),"
            + " `http://host:port/metadata` or `etcd://host:2379`.");
    static final TierSetting<String> LOCAL_HOSTNAME_SETTING = text(LOCAL_HOSTNAME, "a host name or address, optionally with :port")
        .derivedDefault("`127.0.0.1` for a loopback master, else the address this host's name resolves to")
        .documented("The address other nodes reach this node's segment at. Set it on multi-homed hosts. Without a port, Mooncake picks"
            + " one in 12300-14300 (`MC_STORE_CLIENT_MIN_PORT`/`MAX_PORT`).");
    static final TierSetting<Protocol> PROTOCOL_SETTING = TierSetting.choice(PROTOCOL, Protocol.class).byDefault(Protocol.TCP)
        .documented("`tcp` or `rdma` (the build measured here and the project's test double are TCP-only; RDMA is untested here).");
    static final TierSetting<String> DEVICE_NAME_SETTING = text(DEVICE_NAME, "RDMA device names").byDefault("")
        .documented("RDMA device(s), for `rdma`.");
    static final TierSetting<Long> GLOBAL_SEGMENT_SIZE_SETTING = TierSetting.size(GLOBAL_SEGMENT_SIZE).byDefault(GLOBAL_SEGMENT_SIZE_DEFAULT)
        .range(0L, 1L << 50)
        .documented("DRAM this node contributes to the cluster (0: a pure client that stores nothing itself).");
    static final TierSetting<Long> LOCAL_BUFFER_SIZE_SETTING = TierSetting.size(LOCAL_BUFFER_SIZE).byDefault(LOCAL_BUFFER_SIZE_DEFAULT)
        .range(1L << 20, 1L << 40)
        .documented("Mooncake's staging buffer; only copying puts use it, the tier's puts and gets are zero-copy.");
    // Taken as written: a prefix is part of every key, so a space the operator typed is refused, not trimmed away.
    static final TierSetting<String> KEY_PREFIX_SETTING = TierSetting.verbatim(KEY_PREFIX).byDefault("")
        .rule("at most " + KEY_PREFIX_MAX_BYTES + " bytes of letters, digits and - _ . / : @ (keys are C strings and appear in"
            + " Mooncake's logs and regex removals)", MooncakeSettings::isKeyPrefix)
        .documented("Prepended to the page key's 32 hex digits. Page keys are already namespaced by the engine; a prefix separates"
            + " deployments sharing one master.");
    static final TierSetting<Integer> REPLICAS_SETTING = TierSetting.integer(REPLICAS).byDefault(1).range(1, 64)
        .documented("`replica_num` of `mooncake_replicate_config_t`. With fewer segments than replicas Mooncake stores what it can"
            + " (observed here: puts with `replicas = 2` and one segment succeed).");
    static final TierSetting<Boolean> SOFT_PIN_SETTING = TierSetting.bool(SOFT_PIN).byDefault(false)
        .documented("`with_soft_pin`: ask the master to evict these objects last.");
    static final TierSetting<Boolean> HARD_PIN_SETTING = TierSetting.bool(HARD_PIN).byDefault(false)
        .documented("`with_hard_pin`: ask the master never to evict these objects.");
    static final TierSetting<List<String>> PREFERRED_SEGMENTS_SETTING = TierSetting.custom(PREFERRED_SEGMENTS, MooncakeSettings::segments,
            "a comma-separated list of segment names (host:port, as the nodes register them), without empty entries",
            segments -> String.join(",", segments))
        .byDefault(List.of())
        .documented("Segment names puts should go to.");
    static final TierSetting<Boolean> PREFER_LOCAL_SEGMENT_SETTING = TierSetting.bool(PREFER_LOCAL_SEGMENT)
        .derivedDefault("`true` when `global-segment-size` > 0")
        .note("false when global-segment-size is 0")
        .documented("Put this node's own segment first in `preferred_segments`, so a node's pages stay in its DRAM and other nodes"
            + " fetch them over the network.");
    static final TierSetting<Integer> SETUP_RETRIES_SETTING = TierSetting.integer(SETUP_RETRIES).byDefault(SETUP_RETRIES_DEFAULT).range(1, 1000)
        .documented("`MC_STORE_CLIENT_SETUP_RETRIES` for the setup: attempts before it gives up on the master (about 4.5 s each"
            + " against an unreachable one; Mooncake's default 20 takes about 90 s).");
    static final TierSetting<Duration> SETUP_TIMEOUT_SETTING = positive(TierSetting.duration(SETUP_TIMEOUT).byDefault(SETUP_TIMEOUT_DEFAULT))
        .documented("The start fails after this whatever Mooncake is doing; a setup still running then frees its client when it returns.");
    static final TierSetting<Duration> LEASE_TTL_SETTING = positive(TierSetting.duration(LEASE_TTL).byDefault(LEASE_TTL_DEFAULT))
        .documented("The master's `--default_kv_lease_ttl`. A batched get that took this long or longer is a miss (below). Set it to"
            + " the master's value.");
    static final TierSetting<Duration> LEASE_WAIT_SETTING = TierSetting.duration(LEASE_WAIT).byDefault(Duration.ZERO)
        .documented("How long `remove` waits out a lease before forcing (0: force at once).");
    static final TierSetting<Integer> WRITE_RETRIES_SETTING = TierSetting.integer(WRITE_RETRIES).byDefault(WRITE_RETRIES_DEFAULT).range(0, 100)
        .documented("Further attempts of a put the store refused as full.");
    static final TierSetting<Duration> WRITE_BACKOFF_SETTING = TierSetting.duration(WRITE_BACKOFF).byDefault(WRITE_BACKOFF_DEFAULT)
        .documented("Wait before the first retry; doubles each time, at most 2 s.");
    static final TierSetting<Boolean> REPLACE_EXISTING_SETTING = TierSetting.bool(REPLACE_EXISTING).byDefault(true)
        .documented("A write of a key already stored removes it and puts the new bytes (the SPI's overwrite). `false`: the stored"
            + " object is left and the write completes OK; equal keys are equal bytes (docs/keys.md), so on a cluster where several"
            + " engines back up the same shared prefix this saves the removal and the put, and never forces past a remote reader's"
            + " lease. The conformance kit's overwrite tests need `true`.");
    static final TierSetting<Integer> IO_THREADS_SETTING = TierSetting.integer(IO_THREADS).byDefault(IO_THREADS_DEFAULT).range(1, 64)
        .documented("Worker threads making the C calls. Each thread that calls into the store appears to get one of Mooncake's"
            + " busy-polling transfer threads: on a machine with few cores and one batch in flight at a time, `1` was faster for small"
            + " pages ([PERFORMANCE.md](../PERFORMANCE.md#mooncake-tier-against-its-own-c-client)).");
    static final TierSetting<Integer> BATCH_KEYS_SETTING = TierSetting.integer(BATCH_KEYS).byDefault(BATCH_KEYS_DEFAULT).range(1, 4096)
        .documented("Most keys per batched C call.");

    /** Every setting, in the order the docs' table lists them. */
    static final List<TierSetting<?>> ALL = List.of(MASTER_SETTING, LIB_SETTING, METADATA_SERVER_SETTING, LOCAL_HOSTNAME_SETTING,
        PROTOCOL_SETTING, DEVICE_NAME_SETTING, GLOBAL_SEGMENT_SIZE_SETTING, LOCAL_BUFFER_SIZE_SETTING, KEY_PREFIX_SETTING, REPLICAS_SETTING,
        SOFT_PIN_SETTING, HARD_PIN_SETTING, PREFERRED_SEGMENTS_SETTING, PREFER_LOCAL_SEGMENT_SETTING, SETUP_RETRIES_SETTING,
        SETUP_TIMEOUT_SETTING, LEASE_TTL_SETTING, LEASE_WAIT_SETTING, WRITE_RETRIES_SETTING, WRITE_BACKOFF_SETTING,
        REPLACE_EXISTING_SETTING, IO_THREADS_SETTING, BATCH_KEYS_SETTING);

    static final Set<String> KNOWN = TierSetting.keys(ALL);

    final String tierName;
    final String lib;
    final String master;
    final String metadataServer;
    final String localHostname;
    final String protocol;
    final String deviceName;
    final long globalSegmentSize;
    final long localBufferSize;
    final String keyPrefix;
    final int replicas;
    final boolean softPin;
    final boolean hardPin;
    final List<String> preferredSegments;
    final boolean preferLocalSegment;
    final int setupRetries;
    final Duration setupTimeout;
    final Duration leaseTtl;
    final Duration leaseWait;
    final int writeRetries;
    final Duration writeBackoff;
    final boolean replaceExisting;
    final int ioThreads;
    final int batchKeys;

    private MooncakeSettings(final TierConfig config)
    {
        config.rejectUnknown(KNOWN);
        tierName = config.tierName();
        lib = LIB_SETTING.find(config).orElse(null);
        master = MASTER_SETTING.get(config);
        metadataServer = METADATA_SERVER_SETTING.get(config);
        localHostname = LOCAL_HOSTNAME_SETTING.get(config, () -> defaultLocalHostname(master));
        protocol = TierSetting.settingName(PROTOCOL_SETTING.get(config));
        deviceName = DEVICE_NAME_SETTING.get(config);
        globalSegmentSize = GLOBAL_SEGMENT_SIZE_SETTING.get(config);
        localBufferSize = LOCAL_BUFFER_SIZE_SETTING.get(config);
        keyPrefix = KEY_PREFIX_SETTING.get(config);
        replicas = REPLICAS_SETTING.get(config);
        softPin = SOFT_PIN_SETTING.get(config);
        hardPin = HARD_PIN_SETTING.get(config);
        preferredSegments = PREFERRED_SEGMENTS_SETTING.get(config);
        preferLocalSegment = PREFER_LOCAL_SEGMENT_SETTING.get(config, () -> globalSegmentSize > 0);
        if (preferLocalSegment && globalSegmentSize == 0)
        {
            throw config.invalid(PREFER_LOCAL_SEGMENT, config.string(PREFER_LOCAL_SEGMENT),
                "false when " + config.qualified(GLOBAL_SEGMENT_SIZE) + " is 0: this node contributes no segment to prefer", null);
        }
        setupRetries = SETUP_RETRIES_SETTING.get(config);
        setupTimeout = SETUP_TIMEOUT_SETTING.get(config);
        leaseTtl = LEASE_TTL_SETTING.get(config);
        leaseWait = LEASE_WAIT_SETTING.get(config);
        writeRetries = WRITE_RETRIES_SETTING.get(config);
        writeBackoff = WRITE_BACKOFF_SETTING.get(config);
        replaceExisting = REPLACE_EXISTING_SETTING.get(config);
        ioThreads = IO_THREADS_SETTING.get(config);
        batchKeys = BATCH_KEYS_SETTING.get(config);
    }

    /**
     * @param config the tier's settings
     * @return the validated settings
     * @throws TierConfigException naming the key at fault
     */
    static MooncakeSettings parse(final TierConfig config)
    {
        return new MooncakeSettings(config);
    }

    /**
     * @param key a setting
     * @return {@code tier.<name>.<key>}, as messages name it
     */
    String qualified(final String key)
    {
        return "tier." + tierName + "." + key;
    }

    private static boolean isHostPort(final String value)
    {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            return false;
        }
        try
        {
            final int port = Integer.parseInt(value.substring(colon + 1));
            return port >= 1 && port <= 65535;
        }
        catch (final NumberFormatException ex)
        {
            return false;
        }
    }

    /**
     * Other nodes reach this node's segment at the address the client registers, so a loopback master
     * (one node, tests) gets 127.0.0.1 and anything else the address this host's name resolves to.
     */
    private static String defaultLocalHostname(final String master)
    {
        final String host = master.substring(0, master.lastIndexOf(':'));
        if (host.equals("127.0.0.1") || host.equals("localhost") || host.equals("[::1]"))
        {
            return "127.0.0.1";
        }
        try
        {
            return InetAddress.getLocalHost().getHostAddress();
        }
        catch (final UnknownHostException ex)
        {
            return "127.0.0.1";
        }
    }

    private static boolean isKeyPrefix(final String value)
    {
        if (value.getBytes(StandardCharsets.UTF_8).length > KEY_PREFIX_MAX_BYTES)
        {
            return false;
        }
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            final boolean allowed = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "-_./:@".indexOf(c) >= 0;
            if (!allowed)
            {
                return false;
            }
        }
        return true;
    }

    private static List<String> segments(final String text)
    {
        final List<String> segments = new ArrayList<>();
        for (final String part : text.split(","))
        {
            final String segment = part.trim();
            if (segment.isEmpty())
            {
                throw new IllegalArgumentException("an empty segment name");
            }
            segments.add(segment);
        }
        return List.copyOf(segments);
    }

    /** A text setting the tier hands to Mooncake as it is, with what it should hold for the docs. */
    private static TierSetting.Builder<String> text(final String key, final String allowed)
    {
        return TierSetting.custom(key, value -> value, allowed, value -> value);
    }

    private static TierSetting.Builder<Duration> positive(final TierSetting.Builder<Duration> setting)
    {
        return setting.rule("a positive duration, e.g. 10s", value -> !value.isZero() && !value.isNegative());
    }

    @Override
    public String toString()
    {
        return "master=" + master
            + ", metadata-server=" + metadataServer
            + ", local-hostname=" + localHostname
            + ", protocol=" + protocol
            + ", global-segment-size=" + ConfigValues.formatSize(globalSegmentSize)
            + ", local-buffer-size=" + ConfigValues.formatSize(localBufferSize)
            + ", key-prefix=\"" + keyPrefix + "\""
            + ", replicas=" + replicas
            + ", soft-pin=" + softPin
            + ", hard-pin=" + hardPin
            + ", preferred-segments=" + preferredSegments
            + ", prefer-local-segment=" + preferLocalSegment
            + ", setup-retries=" + setupRetries
            + ", setup-timeout=" + setupTimeout
            + ", lease-ttl=" + leaseTtl
            + ", lease-wait=" + leaseWait
            + ", write-retries=" + writeRetries
            + ", write-backoff=" + writeBackoff
            + ", replace-existing=" + replaceExisting
            + ", io-threads=" + ioThreads
            + ", batch-keys=" + batchKeys;
    }
}
