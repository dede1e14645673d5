package io.kvtier.admin;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;

/**
 * The engine's {@code admin.*} settings turned into an {@link AdminServer.Builder}, with the checks that can
 * only run at start: the listen address resolves and is loopback unless {@code admin.allow-remote}, and the
 * token file is a regular file of mode 0600 or 0400 owned by the engine's user, holding a token. Each
 * refusal is a {@link ConfigException} naming the key and what was wrong.
 */
public final class AdminSettings
{
    /** The fewest characters a token may have: a shorter one could be guessed by trying. */
    public static final int MIN_TOKEN_LENGTH = 16;

    private static final Set<Set<PosixFilePermission>> TOKEN_MODES = Set.of(
        PosixFilePermissions.fromString("rw-------"), PosixFilePermissions.fromString("r--------"));

    private AdminSettings()
    {
    }

    /**
     * Checks the settings before the engine starts, so that a token file others can read stops the start
     * before any pool file is made.
     *
     * @param config the engine's settings
     * @return a builder for the admin server the settings describe, or empty when {@code admin.listen} is unset
     * @throws ConfigException naming the key whose value cannot be used
     */
    public static Optional<AdminServer.Builder> configure(final EngineConfig config)
    {
        final String listen = config.get(EngineSettings.ADMIN_LISTEN);
        if (listen.isEmpty())
        {
            return Optional.empty();
        }
        final Path tokenFile = config.get(EngineSettings.ADMIN_TOKEN_FILE);
        return Optional.of(AdminServer.builder()
            .listen(address(listen, config.get(EngineSettings.ADMIN_ALLOW_REMOTE)))
            .token(tokenFile.toString().isEmpty() ? null : token(tokenFile))
            .maxBody(config.get(EngineSettings.ADMIN_MAX_BODY))
            .maxConcurrent(config.get(EngineSettings.ADMIN_MAX_CONCURRENT)));
    }

    /**
     * @param listen      HOST:PORT, an IPv6 address in brackets
     * @param allowRemote whether a non-loopback address is allowed
     * @return the address to bind
     * @throws ConfigException naming admin.listen when the host does not resolve or is not loopback
     */
    static InetSocketAddress address(final String listen, final boolean allowRemote)
    {
        final String key = EngineSettings.ADMIN_LISTEN.key();
        final int colon = listen.lastIndexOf(':');
        final String host = listen.substring(0, colon).replace("[", "").replace("]", "");
        final int port = Integer.parseInt(listen.substring(colon + 1));
        final InetAddress[] addresses;
        try
        {
            addresses = InetAddress.getAllByName(host);
        }
        catch (final UnknownHostException ex)
        {
            throw new ConfigException(key, "invalid " + key + " = " + listen + ": the host " + host + " does not resolve", ex);
        }
        if (!allowRemote)
        {
            for (final InetAddress address : addresses)
            {
                if (!address.isLoopbackAddress())
                {
                    throw new ConfigException(key, "invalid " + key + " = " + listen + ": " + address.getHostAddress() + " is not a loopback"
                        + " address; the admin API listens on loopback only (127.0.0.1, ::1, localhost) unless "
                        + EngineSettings.ADMIN_ALLOW_REMOTE.key() + " = true");
                }
            }
        }
        return new InetSocketAddress(addresses[0], port);
    }

    /**
     * @param file the token file
     * @return its token: its text without surrounding white space
     * @throws ConfigException naming admin.token-file, the file and its mode when it cannot hold a secret
     */
    static byte[] token(final Path file)
    {
        final String key = EngineSettings.ADMIN_TOKEN_FILE.key();
        final PosixFileAttributes attributes;
        try
        {
            attributes = Files.readAttributes(file, PosixFileAttributes.class);
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            throw new ConfigException(key, "invalid " + key + " = " + file + ": cannot read its attributes (" + ex + ")", ex);
        }
        if (!attributes.isRegularFile())
        {
            throw new ConfigException(key, "invalid " + key + " = " + file + ": not a regular file");
        }
        final String mode = mode(attributes.permissions());
        if (!TOKEN_MODES.contains(attributes.permissions()))
        {
            throw new ConfigException(key, "invalid " + key + " = " + file + ": its mode is " + mode + ", expected 0600 or 0400 (only the"
                + " engine's user may read a token; chmod 600 " + file + ")");
        }
        final Object owner = owner(file);
        final Object me = owner(Path.of("/proc/self"));
        if (owner != null && me != null && !owner.equals(me))
        {
            throw new ConfigException(key, "invalid " + key + " = " + file + " (mode " + mode + "): owned by uid " + owner + ", not by the"
                + " engine's user (uid " + me + ")");
        }
        final byte[] token;
        try
        {
            token = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            throw new ConfigException(key, "invalid " + key + " = " + file + ": cannot read it (" + ex + ")", ex);
        }
        if (token.length < MIN_TOKEN_LENGTH || new String(token, StandardCharsets.UTF_8).chars().anyMatch(c -> c < 0x21 || c == 0x7f))
        {
            Arrays.fill(token, (byte) 0);
            throw new ConfigException(key, "invalid " + key + " = " + file + ": expected a token of at least " + MIN_TOKEN_LENGTH
                + " printable characters without spaces (e.g. openssl rand -hex 32 > " + file + ")");
        }
        return token;
    }

    private static Object owner(final Path path)
    {
        try
        {
            return Files.getAttribute(path, "unix:uid");
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException ex)
        {
            return null;
        }
    }

    private static String mode(final Set<PosixFilePermission> permissions)
    {
        int mode = 0;
        for (final PosixFilePermission permission : permissions)
        {
            mode |= 1 << (8 - permission.ordinal());
        }
        return String.format("0%03o", mode);
    }
}
