package io.kvtier.engine;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.Namespace;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.config.TrustDomains;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Trust domains in one engine process: each domain's clients get its own pool through its own socket,
 * and the L3 tier they share holds each domain's pages under names of its own salt, so a client of one
 * domain finds nothing of another's, even naming the same keys under the same namespace.
 */
class EngineGroupTest
{
    private static final Namespace SAME = new Namespace("m", "bf16/page16/layer-first/tp1", 0, "");
    private static final long[] KEYS = {0x71, 0x72, 0x73};

    @TempDir
    Path directory;

    @Test
    void domainsShareTheL3TierButNeverEachOthersPages() throws Exception
    {
        final Path l3 = directory.resolve("l3");
        final Map<String, String> raw = new LinkedHashMap<>();
        raw.put("pool.page-size", "4KiB");
        raw.put("pool.size", "256KiB");
        raw.put("ipc.enabled", "true");
        raw.put("ipc.ring-bytes", "64KiB");
        raw.put("policy.prefetch", "off");
        raw.put("tier.shared.type", "posix");
        raw.put("tier.shared.dir", l3.toString());
        // The test reads the page files' names: the files layout's.
        raw.put("tier.shared.layout", "files");
        for (final String name : new String[] {"tenant-a", "tenant-b"})
        {
            raw.put("domain." + name + ".pool.path", directory.resolve(name + ".pool").toString());
            raw.put("domain." + name + ".ipc.socket-path", directory.resolve(name + ".sock").toString());
        }
        raw.put("domain.tenant-b.pool.size", "512KiB");
        try (EngineGroup group = EngineGroup.start(TrustDomains.from(raw));
             IpcConnection a = IpcConnection.connect(directory.resolve("tenant-a.sock"), 16, SAME.rootBytes(), 1);
             IpcConnection b = IpcConnection.connect(directory.resolve("tenant-b.sock"), 16, SAME.rootBytes(), 1))
        {
            assertThat(group.members()).extracting(EngineGroup.Member::domain).containsExactly("tenant-a", "tenant-b");
            assertThat(a.welcome().pageCount()).as("A's own pool").isEqualTo(64);
            assertThat(b.welcome().pageCount()).as("B's own pool").isEqualTo(128);
            assertThat(group.engine("tenant-a").tiers().getFirst().tier()).as("one tier, shared").isSameAs(group.engine("tenant-b").tiers().getFirst().tier());

            final ResponseDecoder reserved = a.awaitResponse(a.send(MessageType.RESERVE, 0, KEYS.length, KEYS, KEYS));
            final int[] pages = new int[KEYS.length];
            for (int i = 0; i < KEYS.length; i++)
            {
                assertThat(reserved.entryStatus(i)).isEqualTo(PageEntryStatus.RESERVED);
                pages[i] = reserved.entryPageId(i);
            }
            a.releaseResponse();
            for (int i = 0; i < KEYS.length; i++)
            {
                a.page(pages[i]).set(ValueLayout.JAVA_LONG, 0, KEYS[i] * 1000);
            }
            assertThat(a.awaitResponse(a.sendCommit(0, KEYS.length, new int[] {64, 64, 64})).resultCount()).isEqualTo(KEYS.length);
            a.releaseResponse();
            a.awaitResponse(a.send(MessageType.BACKUP, 0, KEYS.length, KEYS, KEYS));
            a.releaseResponse();
            assertThat(a.awaitResponse(a.send(MessageType.FLUSH, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            a.releaseResponse();

            // B names the very same keys in the very same namespace: its pool lacks them, and so does L3 under B's salt.
            final ResponseDecoder lookedUp = b.awaitResponse(b.send(MessageType.LOOKUP, 0, KEYS.length, KEYS, KEYS));
            assertThat(lookedUp.poolPages()).isZero();
            assertThat(lookedUp.l3Pages()).as("B's probe of the shared L3").isZero();
            b.releaseResponse();
            final ResponseDecoder acquiredByB = b.awaitResponse(b.send(MessageType.ACQUIRE, 0, KEYS.length, KEYS, KEYS));
            assertThat(acquiredByB.resultCount()).isZero();
            b.releaseResponse();

            // The tier holds A's objects under A's names: none is named by the key itself.
            try (Stream<Path> files = Files.walk(l3))
            {
                final List<String> names = files.filter(p -> p.toString().endsWith(".kvp")).map(p -> p.getFileName().toString()).toList();
                assertThat(names).hasSize(KEYS.length);
                for (final long key : KEYS)
                {
                    final String hex = HexFormat.of().toHexDigits(key);
                    assertThat(names).noneMatch(n -> n.contains(hex));
                }
            }
            // A's evicted pages come back from L3 for A.
            assertThat(a.awaitResponse(a.send(MessageType.EVICT, 0, KEYS.length, KEYS, KEYS)).resultCount()).isEqualTo(KEYS.length);
            a.releaseResponse();
            final ResponseDecoder acquiredByA = a.awaitResponse(a.send(MessageType.ACQUIRE, 4, KEYS.length, KEYS, KEYS));
            assertThat(acquiredByA.resultCount()).isEqualTo(KEYS.length);
            assertThat(acquiredByA.fromL3()).isEqualTo(KEYS.length);
            for (int i = 0; i < KEYS.length; i++)
            {
                assertThat(a.page(acquiredByA.entryPageId(i)).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(KEYS[i] * 1000);
            }
            a.releaseResponse();
        }
        assertThat(directory.resolve("tenant-a.pool")).as("each domain's pool is removed at the stop").doesNotExist();
    }
}
