package io.kvtier.engine.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TrustDomainsTest
{
    @TempDir
    Path directory;

    private Map<String, String> twoDomains()
    {
        final Map<String, String> raw = new LinkedHashMap<>();
        raw.put("pool.size", "1MiB");
        raw.put("pool.page-size", "64KiB");
        raw.put("tier.shared.type", "posix");
        raw.put("tier.shared.dir", directory.resolve("l3").toString());
        for (final String name : new String[] {"tenant-a", "tenant-b"})
        {
            raw.put("domain." + name + ".pool.path", directory.resolve(name + ".pool").toString());
            raw.put("domain." + name + ".ipc.socket-path", directory.resolve(name + ".sock").toString());
        }
        raw.put("domain.tenant-b.ipc.allowed-uids", "1001");
        return raw;
    }

    @Test
    void shouldGiveEachDomainTheSharedSettingsItsOwnOverridesAndItsNameAsSalt()
    {
        final TrustDomains domains = TrustDomains.from(twoDomains());
        assertThat(domains.domains()).extracting(TrustDomains.Domain::name).containsExactly("tenant-a", "tenant-b");
        final EngineConfig a = domains.domains().get(0).config();
        final EngineConfig b = domains.domains().get(1).config();
        assertThat(a.poolPath()).isEqualTo(directory.resolve("tenant-a.pool"));
        assertThat(a.pageSize()).as("inherited").isEqualTo(64 * 1024);
        assertThat(a.get(EngineSettings.L3_KEY_SALT)).isEqualTo("tenant-a");
        assertThat(b.get(EngineSettings.L3_KEY_SALT)).isEqualTo("tenant-b");
        assertThat(b.get(EngineSettings.IPC_ALLOWED_UIDS)).containsExactly(1001);
        assertThat(a.get(EngineSettings.IPC_ALLOWED_UIDS)).isEmpty();
        assertThat(a.tiers()).extracting(EngineConfig.TierSettings::name).containsExactly("shared");
        assertThat(TrustDomains.from(Map.of("pool.size", "1MiB", "pool.page-size", "64KiB")).isEmpty()).as("no domain.* key, no domains").isTrue();
    }

    @Test
    void shouldRefuseDomainsThatWouldShareAPoolASocketOrASaltOrThatSetSharedSettings()
    {
        final Map<String, String> samePool = twoDomains();
        samePool.put("domain.tenant-b.pool.path", directory.resolve("tenant-a.pool").toString());
        assertThatThrownBy(() -> TrustDomains.from(samePool)).isInstanceOfSatisfying(ConfigException.class,
            ex -> assertThat(ex.key()).isEqualTo("domain.tenant-b.pool.path")).hasMessageContaining("tenant-a").hasMessageContaining("pool file of its own");

        final Map<String, String> sameSocket = twoDomains();
        sameSocket.put("domain.tenant-b.ipc.socket-path", directory.resolve("tenant-a.sock").toString());
        assertThatThrownBy(() -> TrustDomains.from(sameSocket)).hasMessageContaining("socket of its own");

        final Map<String, String> sameSalt = twoDomains();
        sameSalt.put("l3.key-salt", "one");
        sameSalt.put("domain.tenant-a.l3.key-salt", "one");
        sameSalt.put("domain.tenant-b.l3.key-salt", "one");
        assertThatThrownBy(() -> TrustDomains.from(sameSalt)).hasMessageContaining("share their pages' names in L3");

        final Map<String, String> ownTier = twoDomains();
        ownTier.put("domain.tenant-a.tier.mine.type", "posix");
        assertThatThrownBy(() -> TrustDomains.from(ownTier)).isInstanceOfSatisfying(ConfigException.class,
            ex -> assertThat(ex.key()).isEqualTo("domain.tenant-a.tier.mine.type")).hasMessageContaining("shared by every domain");

        final Map<String, String> badName = twoDomains();
        badName.put("domain.Tenant C.pool.path", "/x");
        assertThatThrownBy(() -> TrustDomains.from(badName)).hasMessageContaining("invalid domain name 'Tenant C'");

        final Map<String, String> badValue = twoDomains();
        badValue.put("domain.tenant-a.ipc.max-keys", "lots");
        assertThatThrownBy(() -> TrustDomains.from(badValue)).isInstanceOfSatisfying(ConfigException.class,
            ex -> assertThat(ex.key()).isEqualTo("domain.tenant-a.ipc.max-keys")).hasMessageContaining("domain tenant-a");
    }
}
