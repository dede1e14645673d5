package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.Namespace;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.ipc.IpcTestSupport.Answer;
import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * docs/ipc-protocol.md section 8: a page carries the tag of the namespace it was reserved under, in the
 * pool and in its L3 frame, and a client is given only pages of the namespace its request names, even
 * when it names another namespace's key; ipc.allowed-namespaces limits which namespaces a user may name.
 */
class NamespaceIsolationTest
{
    private static final Namespace TENANT_A = new Namespace("m", "bf16/page16/layer-first/tp1", 0, "tenant-a");
    private static final Namespace TENANT_B = new Namespace("m", "bf16/page16/layer-first/tp1", 0, "tenant-b");
    private static final long[] HIGHS = {0x51, 0x52};
    private static final long[] LOWS = {0x61, 0x62};
    private static final int LENGTH = 256;

    @TempDir
    Path directory;

    private static byte[] roots(final Namespace... namespaces)
    {
        final ByteBuffer roots = ByteBuffer.allocate(16 * namespaces.length);
        for (final Namespace namespace : namespaces)
        {
            roots.put(namespace.rootBytes());
        }
        return roots.array();
    }

    private static IpcConnection connect(final Engine engine, final Namespace... namespaces) throws Exception
    {
        return IpcConnection.connect(IpcTestSupport.socket(engine), 16, roots(namespaces), 1);
    }

    /** A request with the keys in its body, naming namespace {@code namespace} of the client. */
    private static Answer call(final IpcConnection client, final int type, final int namespace) throws IpcException
    {
        final RequestEncoder request = client.claim(type, 0, HIGHS.length, namespace, 0, HIGHS.length * RequestDescriptor.KEY_LENGTH);
        for (int i = 0; i < HIGHS.length; i++)
        {
            request.key(i, HIGHS[i], LOWS[i]);
        }
        return await(client, client.publish());
    }

    private static void writeUnderFirstNamespace(final IpcConnection writer) throws IpcException
    {
        final Answer reserved = call(writer, MessageType.RESERVE, 0);
        assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
        for (int i = 0; i < HIGHS.length; i++)
        {
            IpcTestSupport.fill(writer.page(reserved.pageIds()[i]), HIGHS[i], LOWS[i], LENGTH);
        }
        assertThat(await(writer, writer.sendCommit(0, HIGHS.length, new int[] {LENGTH, LENGTH})).pageStatuses())
            .containsOnly(PageEntryStatus.COMMITTED);
    }

    @Test
    void aClientNamingAnotherNamespacesKeysFindsNothingAndChangesNothing() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection a = connect(engine, TENANT_A);
             IpcConnection b = connect(engine, TENANT_B);
             IpcConnection both = connect(engine, TENANT_B, TENANT_A))
        {
            writeUnderFirstNamespace(a);
            final long missesBefore = engine.counters().getOpaque(EngineCounter.NAMESPACE_MISSES);

            final Answer lookup = call(b, MessageType.LOOKUP, 0);
            assertThat(lookup.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(lookup.resultCount()).as("prefix found under tenant B").isZero();
            assertThat(lookup.poolPages()).isZero();
            final Answer acquire = call(b, MessageType.ACQUIRE, 0);
            assertThat(acquire.resultCount()).as("pages pinned under tenant B").isZero();
            assertThat(acquire.pageStatuses()).doesNotContain(PageEntryStatus.PINNED, PageEntryStatus.PINNED_FROM_L3);
            call(b, MessageType.RELEASE, 0);
            assertThat(call(b, MessageType.RESERVE, 0).pageStatuses()).as("the key is taken, but not 'exists' for B")
                .containsOnly(PageEntryStatus.BUSY);
            assertThat(call(b, MessageType.EVICT, 0).resultCount()).as("B evicts none of A's pages").isZero();
            assertThat(call(b, MessageType.BACKUP, 0).resultCount()).isZero();
            assertThat(engine.counters().getOpaque(EngineCounter.NAMESPACE_MISSES)).isGreaterThan(missesBefore);

            // A client of both namespaces is given the pages under A (its namespace 1), not under B (0).
            assertThat(call(both, MessageType.ACQUIRE, 0).resultCount()).isZero();
            call(both, MessageType.RELEASE, 0);
            final Answer underA = call(both, MessageType.ACQUIRE, 1);
            assertThat(underA.resultCount()).isEqualTo(2);
            for (int i = 0; i < HIGHS.length; i++)
            {
                assertThat(IpcTestSupport.holds(both.page(underA.pageIds()[i]), HIGHS[i], LOWS[i], LENGTH)).isTrue();
            }
            call(both, MessageType.RELEASE, 1);

            // The engine's own sessions: unscoped sees every namespace, scoped only its own.
            try (Session session = engine.openSession())
            {
                session.keys().add(HIGHS[0], LOWS[0]);
                session.keys().add(HIGHS[1], LOWS[1]);
                assertThat(session.acquire(0, 2)).as("unscoped").isEqualTo(2);
                session.release();
                assertThat(session.scope(TENANT_B).acquire(0, 2)).as("scoped to B").isZero();
                session.release();
                assertThat(session.scope(TENANT_A).acquire(0, 2)).as("scoped to A").isEqualTo(2);
                session.release();
            }
        }
    }

    @Test
    void theTagTravelsInTheL3FrameSoALoadUnderAnotherNamespaceIsAMiss() throws Exception
    {
        final Path l3 = directory.resolve("l3");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", l3.toString());
        // The page files on disk are what these tests look into: the files layout's.
        settings.put("tier.disk.layout", "files");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection a = connect(engine, TENANT_A);
             IpcConnection b = connect(engine, TENANT_B))
        {
            writeUnderFirstNamespace(a);
            call(a, MessageType.BACKUP, 0); // write-through may have started the copies already
            assertThat(await(a, a.send(MessageType.FLUSH, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            final List<Path> files;
            try (Stream<Path> walk = Files.walk(l3))
            {
                files = walk.filter(p -> p.toString().endsWith(".kvp")).toList();
            }
            assertThat(files).hasSize(2);
            for (final Path file : files)
            {
                final ByteBuffer trailer = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
                assertThat(trailer.getLong(IpcTestSupport.PAGE_SIZE + PageFrameDescriptor.NAMESPACE_TAG_OFFSET)).isEqualTo(TENANT_A.tag());
            }
            assertThat(call(a, MessageType.EVICT, 0).resultCount()).isEqualTo(2);

            final Answer underB = call(b, MessageType.ACQUIRE, 0);
            assertThat(underB.resultCount()).as("an L3 frame of tenant A, loaded for B").isZero();
            assertThat(underB.pageStatuses()).doesNotContain(PageEntryStatus.PINNED, PageEntryStatus.PINNED_FROM_L3);
            call(b, MessageType.RELEASE, 0);

            final Answer underA = call(a, MessageType.ACQUIRE, 0);
            assertThat(underA.resultCount()).isEqualTo(2);
            for (int i = 0; i < HIGHS.length; i++)
            {
                assertThat(IpcTestSupport.holds(a.page(underA.pageIds()[i]), HIGHS[i], LOWS[i], LENGTH)).isTrue();
            }
            assertThat(engine.counters().getOpaque(EngineCounter.L3_CORRUPT)).as("a foreign tag is not corruption").isZero();
        }
    }

    @Test
    void aLookupCountsNoL3PageOfAnotherNamespaceWhetherTheIndexKnowsItOrAProbeAsks() throws Exception
    {
        final Path l3 = directory.resolve("l3");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", l3.toString());
        // The page files on disk are what these tests look into: the files layout's.
        settings.put("tier.disk.layout", "files");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection a = connect(engine, TENANT_A);
             IpcConnection b = connect(engine, TENANT_B))
        {
            writeUnderFirstNamespace(a);
            call(a, MessageType.BACKUP, 0);
            assertThat(await(a, a.send(MessageType.FLUSH, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            assertThat(call(a, MessageType.EVICT, 0).resultCount()).isEqualTo(2);
            // The index knows both keys are in L3, stored under A's tag.
            final Answer underB = call(b, MessageType.LOOKUP, 0);
            assertThat(underB.resultCount()).as("B's lookup of A's L3-only pages").isZero();
            assertThat(call(a, MessageType.LOOKUP, 0).resultCount()).isEqualTo(2);
        }
        // A new engine on the same L3 knows nothing: B's probe asks for B's names, which do not exist.
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection a = connect(engine, TENANT_A);
             IpcConnection b = connect(engine, TENANT_B))
        {
            assertThat(call(b, MessageType.LOOKUP, 0).resultCount()).as("B's probe of A's keys").isZero();
            assertThat(call(a, MessageType.LOOKUP, 0).resultCount()).as("A's own probe finds them").isEqualTo(2);
            assertThat(call(b, MessageType.LOOKUP, 0).resultCount()).as("and B still does not, now that the index knows them").isZero();
            final Answer acquired = call(a, MessageType.ACQUIRE, 0);
            assertThat(acquired.resultCount()).isEqualTo(2);
            for (int i = 0; i < HIGHS.length; i++)
            {
                assertThat(IpcTestSupport.holds(a.page(acquired.pageIds()[i]), HIGHS[i], LOWS[i], LENGTH)).isTrue();
            }
        }
    }

    @Test
    void aHelloNamingANamespaceTheUserMayNotNameIsRefusedNamingTheRoot() throws Exception
    {
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        final String rootA = HexFormat.of().formatHex(TENANT_A.rootBytes());
        settings.put("ipc.allowed-namespaces", "uid:" + ownUid + "=" + rootA);
        try (Engine engine = IpcTestSupport.start(settings))
        {
            try (IpcConnection allowed = connect(engine, TENANT_A))
            {
                assertThat(allowed.maxKeys()).isPositive();
            }
            final String rootB = HexFormat.of().formatHex(TENANT_B.rootBytes());
            assertThatThrownBy(() -> connect(engine, TENANT_A, TENANT_B))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.NAMESPACE_DENIED))
                .hasMessageContaining(rootB);
        }
    }

    @Test
    void onceAnAllowListIsSetAClientNamingNoNamespaceIsRefusedUnlessListedForUntagged() throws Exception
    {
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final String rootA = HexFormat.of().formatHex(TENANT_A.rootBytes());
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.allowed-namespaces", "uid:" + ownUid + "=" + rootA);
        try (Engine engine = IpcTestSupport.start(settings))
        {
            // Untagged pages belong to no tenant: a client naming no namespace would reserve and commit there.
            assertThatThrownBy(() -> connect(engine))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.NAMESPACE_DENIED))
                .hasMessageContaining("names no namespace").hasMessageContaining("untagged");
        }
        settings.put("ipc.allowed-namespaces", "uid:" + ownUid + "=" + rootA + ", uid:" + ownUid + "=untagged");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection untagged = connect(engine))
        {
            final Answer reserved = call(untagged, MessageType.RESERVE, 0);
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
        }
    }

    @Test
    void aMalformedAllowListIsRefusedAtStartNamingTheSetting()
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.allowed-namespaces", "uid:12=nothex");
        assertThatThrownBy(() -> EngineConfig.from(settings)).isInstanceOf(ConfigException.class).hasMessageContaining("ipc.allowed-namespaces");
    }
}
