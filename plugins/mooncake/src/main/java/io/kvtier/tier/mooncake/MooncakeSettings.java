package io.kvtier.tier.mooncake;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The Mooncake tier's settings, validated before anything is loaded or connected: every error names
 * {@code tier.<name>.<key>}, the value and what is allowed.
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

    static final Set<String> KNOWN = Set.of(LIB, MASTER, METADATA_SERVER, LOCAL_HOSTNAME, PROTOCOL, DEVICE_NAME, GLOBAL_SEGMENT_SIZE,
        LOCAL_BUFFER_SIZE, KEY_PREFIX, REPLICAS, SOFT_PIN, HARD_PIN, PREFERRED_SEGMENTS, PREFER_LOCAL_SEGMENT, SETUP_RETRIES,
        SETUP_TIMEOUT, LEASE_TTL, LEASE_WAIT, WRITE_RETRIES, WRITE_BACKOFF, REPLACE_EXISTING, IO_THREADS, BATCH_KEYS);

    /** Mooncake's own name for "no metadata service: peers exchange segment descriptors directly". */
    static final String METADATA_SERVER_DEFAULT = "P2PHANDSHAKE";
    static final String PROTOCOL_DEFAULT = "tcp";
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
        lib = config.has(LIB) ? config.string(LIB) : null;
        master = hostPort(config, MASTER, config.string(MASTER));
        metadataServer = config.string(METADATA_SERVER, METADATA_SERVER_DEFAULT);
        localHostname = config.has(LOCAL_HOSTNAME) ? config.string(LOCAL_HOSTNAME) : defaultLocalHostname(master);
        protocol = config.string(PROTOCOL, PROTOCOL_DEFAULT).toLowerCase(Locale.ROOT);
        if (!protocol.equals("tcp") && !protocol.equals("rdma"))
        {
            throw config.invalid(PROTOCOL, config.string(PROTOCOL), "tcp or rdma", null);
        }
        deviceName = config.has(DEVICE_NAME) ? config.string(DEVICE_NAME) : "";
        globalSegmentSize = config.size(GLOBAL_SEGMENT_SIZE, GLOBAL_SEGMENT_SIZE_DEFAULT, 0, 1L << 50);
        localBufferSize = config.size(LOCAL_BUFFER_SIZE, LOCAL_BUFFER_SIZE_DEFAULT, 1L << 20, 1L << 40);
        keyPrefix = config.has(KEY_PREFIX) ? keyPrefix(config, config.values().get(KEY_PREFIX)) : "";
        replicas = config.integer(REPLICAS, 1, 1, 64);
        softPin = config.bool(SOFT_PIN, false);
        hardPin = config.bool(HARD_PIN, false);
        preferredSegments = segments(config);
        preferLocalSegment = config.bool(PREFER_LOCAL_SEGMENT, globalSegmentSize > 0);
        if (preferLocalSegment && globalSegmentSize == 0)
        {
            throw config.invalid(PREFER_LOCAL_SEGMENT, config.string(PREFER_LOCAL_SEGMENT),
                "false when " + config.qualified(GLOBAL_SEGMENT_SIZE) + " is 0: this node contributes no segment to prefer", null);
        }
        setupRetries = config.integer(SETUP_RETRIES, SETUP_RETRIES_DEFAULT, 1, 1000);
        setupTimeout = positive(config, SETUP_TIMEOUT, SETUP_TIMEOUT_DEFAULT);
        leaseTtl = positive(config, LEASE_TTL, LEASE_TTL_DEFAULT);
        leaseWait = config.duration(LEASE_WAIT, Duration.ZERO);
        writeRetries = config.integer(WRITE_RETRIES, WRITE_RETRIES_DEFAULT, 0, 100);
        writeBackoff = config.duration(WRITE_BACKOFF, WRITE_BACKOFF_DEFAULT);
        replaceExisting = config.bool(REPLACE_EXISTING, true);
        ioThreads = config.integer(IO_THREADS, IO_THREADS_DEFAULT, 1, 64);
        batchKeys = config.integer(BATCH_KEYS, BATCH_KEYS_DEFAULT, 1, 4096);
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

    private static String hostPort(final TierConfig config, final String key, final String value)
    {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            throw config.invalid(key, value, "host:port, e.g. 10.0.0.5:50051", null);
        }
        try
        {
            final int port = Integer.parseInt(value.substring(colon + 1));
            if (port < 1 || port > 65535)
            {
                throw config.invalid(key, value, "host:port with a port from 1 to 65535", null);
            }
        }
        catch (final NumberFormatException ex)
        {
            throw config.invalid(key, value, "host:port, e.g. 10.0.0.5:50051", ex);
        }
        return value;
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

    private static String keyPrefix(final TierConfig config, final String value)
    {
        if (value.getBytes(StandardCharsets.UTF_8).length > KEY_PREFIX_MAX_BYTES)
        {
            throw config.invalid(KEY_PREFIX, value, "at most " + KEY_PREFIX_MAX_BYTES + " bytes", null);
        }
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            final boolean allowed = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "-_./:@".indexOf(c) >= 0;
            if (!allowed)
            {
                throw config.invalid(KEY_PREFIX, value, "letters, digits and - _ . / : @ only (keys are C strings and appear in "
                    + "Mooncake's logs and regex removals)", null);
            }
        }
        return value;
    }

    private static List<String> segments(final TierConfig config)
    {
        final List<String> segments = new ArrayList<>();
        if (config.has(PREFERRED_SEGMENTS))
        {
            for (final String part : config.string(PREFERRED_SEGMENTS).split(","))
            {
                final String segment = part.trim();
                if (segment.isEmpty())
                {
                    throw config.invalid(PREFERRED_SEGMENTS, config.string(PREFERRED_SEGMENTS),
                        "a comma-separated list of segment names (host:port, as the nodes register them), without empty entries", null);
                }
                segments.add(segment);
            }
        }
        return List.copyOf(segments);
    }

    private static Duration positive(final TierConfig config, final String key, final Duration defaultValue)
    {
        final Duration value = config.duration(key, defaultValue);
        if (value.isZero() || value.isNegative())
        {
            throw config.invalid(key, config.string(key), "a positive duration, e.g. 10s", null);
        }
        return value;
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
