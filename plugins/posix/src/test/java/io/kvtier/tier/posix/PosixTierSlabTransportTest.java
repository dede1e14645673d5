package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.support.SlabTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The slab run over another tier's transport ({@link PosixTierProvider#createSlab}), as the 3FS tier runs it over USRBIO:
 * which operations the transport is told are a page's bytes (every slot and tail transfer, never a frame header), that
 * every byte then moves through it, that it is closed with the tier and before the factory, and that a refused start
 * closes the factory too.
 */
class PosixTierSlabTransportTest
{
    private static final String NAME = "t";
    private static final long SIZE = 64 * 1024;

    @TempDir
    Path dir;
    private final PosixTierFixture fixture = new PosixTierFixture(NAME);
    private LibC libc;

    @BeforeEach
    void requireLibc()
    {
        libc = LibC.instance().orElse(null);
        assumeTrue(libc != null, "skipped: LibC is unavailable here (run with --enable-native-access)");
    }

    @AfterEach
    void tearDown()
    {
        fixture.close();
    }

    /** Runs every operation with plain calls, recording what it was told of each. */
    private final class RecordingTransport implements SlabTransport
    {
        long pageOperations;
        long recordOperations;
        long pageBytesMoved;
        long loneTransfers;
        boolean closed;

        @Override
        public void execute(final UringBatch batch, final boolean[] pageBytes)
        {
            for (int i = 0; i < batch.size(); i++)
            {
                final byte kind = batch.operation(i);
                if (kind == UringBatch.FSYNC || kind == UringBatch.FDATASYNC)
                {
                    recordOperations++;
                    batch.complete(i, libc.fdatasync(batch.fd(i)));
                    continue;
                }
                final MemorySegment memory = MemorySegment.ofAddress(batch.address(i)).reinterpret(batch.length(i));
                final long moved = kind == UringBatch.READ ? libc.preadFully(batch.fd(i), memory, 0, batch.length(i), batch.fileOffset(i))
                    : libc.pwriteFully(batch.fd(i), memory, 0, batch.length(i), batch.fileOffset(i));
                if (pageBytes[i])
                {
                    pageOperations++;
                    pageBytesMoved += Math.max(moved, 0);
                }
                else
                {
                    recordOperations++;
                    assertThat(batch.length(i) % SlabDescriptor.HEADER_ENTRY).as("frame header records: whole entries").isZero();
                }
                batch.complete(i, moved);
            }
        }

        @Override
        public long transfer(final boolean write, final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
        {
            loneTransfers++;
            return write ? libc.pwriteFully(fd, buffer, from, length, offset) : libc.preadFully(fd, buffer, from, length, offset);
        }

        @Override
        public void close()
        {
            closed = true;
        }
    }

    private final class RecordingFactory implements SlabTransport.Factory
    {
        final List<RecordingTransport> opened = new ArrayList<>();
        boolean closed;
        boolean transportsClosedFirst;

        @Override
        public SlabTransport open(final int worker)
        {
            final RecordingTransport transport = new RecordingTransport();
            opened.add(transport);
            return transport;
        }

        @Override
        public String describe()
        {
            return "a recording transport";
        }

        @Override
        public String ioName()
        {
            return "recording";
        }

        @Override
        public void close()
        {
            transportsClosedFirst = opened.stream().allMatch(transport -> transport.closed);
            closed = true;
        }
    }

    private StorageTier open(final RecordingFactory factory, final String... settings)
    {
        final Map<String, String> config = new HashMap<>(Map.of("dir", dir.toString(), "layout", "slab", "extent-size", "4MiB", "io-threads", "1"));
        for (int i = 0; i < settings.length; i += 2)
        {
            config.put(settings[i], settings[i + 1]);
        }
        return new PosixTierProvider().createSlab(new TierConfig(NAME, config), new ContractTierContext(NAME, SIZE), factory);
    }

    @Test
    void shouldMoveEveryPageByteThroughTheTransportAndTellItWhichOperationsArePages()
    {
        final RecordingFactory factory = new RecordingFactory();
        final StorageTier tier = open(factory);
        assertThat(tier.describe()).startsWith("io=recording").contains("layout=slab");
        assertThat(factory.opened).as("one transport an I/O thread").hasSize(1);
        final RecordingTransport transport = factory.opened.getFirst();
        final PageArena arena = fixture.arena(40, SIZE);
        final List<PageKey> keys = fixture.keys(20);

        assertThat(PosixTierFixture.write(tier, keys, 500, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch read = PosixTierFixture.read(tier, keys, arena, SIZE);

        assertThat(read.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < keys.size(); i++)
        {
            PageBytes.assertContent(read.slice(i), 500 + i, "page " + i);
        }
        // Noise is stored whole: the slot and the tail block, each way, every byte of every page.
        assertThat(transport.pageOperations).as("page transfers").isEqualTo(4L * keys.size());
        assertThat(transport.pageBytesMoved).as("page bytes moved through the transport").isEqualTo(2L * keys.size() * SIZE);
        assertThat(transport.recordOperations).as("header writes: a run of neighbouring slots in one").isPositive().isLessThan(keys.size());
        assertThat(transport.loneTransfers).as("pages done alone").isZero();

        tier.close();
        assertThat(transport.closed).isTrue();
        assertThat(factory.closed).isTrue();
        assertThat(factory.transportsClosedFirst).as("transports closed before the factory").isTrue();
    }

    @Test
    void shouldRefuseTheFilesLayoutNamingItAndCloseTheFactory()
    {
        final RecordingFactory factory = new RecordingFactory();

        assertThatThrownBy(() -> open(factory, "layout", "files"))
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.layout");
        assertThat(factory.closed).isTrue();
    }
}
