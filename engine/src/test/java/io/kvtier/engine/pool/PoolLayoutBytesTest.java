package io.kvtier.engine.pool;

import io.kvtier.client.pool.ClientSlotDescriptor;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PinTableDescriptor;
import io.kvtier.collections.KeyTableDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool file as another process in another language sees it: plain little-endian reads at the
 * offsets the descriptors' diagrams give, with none of the accessor classes. What the engine writes
 * through the accessors must be exactly there.
 */
class PoolLayoutBytesTest
{
    private static final long PAGE_SIZE = 64 << 10;
    private static final int PAGES = 4;
    private static final long KEY_HIGH = 0x0102030405060708L;
    private static final long KEY_LOW = 0x1112131415161718L;

    @Test
    void shouldPutEveryFieldWhereTheDiagramsSayInLittleEndian(@TempDir final Path dir) throws Exception
    {
        final Path path = dir.resolve("pool");
        try (PagePool pool = PagePool.create(path, PAGE_SIZE, PAGES, 64, 2, Duration.ofSeconds(3)))
        {
            final int page = 2;
            final PageMetadata metadata = pool.metadata();
            metadata.keyPlain(page, KEY_HIGH, KEY_LOW);
            metadata.reservationPlain(page, 5, 123_456_789L);
            metadata.hitCountPlain(page, 9);
            metadata.lastAccessPlain(page, 987_654_321L);
            metadata.namespaceTagPlain(page, 0x7A6L);
            assertThat(metadata.compareAndSetStateWord(page, metadata.stateWordAcquire(page), PageStateWord.word(7, 0, PageStateWord.WRITING)))
                .isTrue();
            final MemorySegment payload = pool.frames().payload(page);
            final byte[] text = "the page's bytes".getBytes(StandardCharsets.US_ASCII);
            MemorySegment.copy(MemorySegment.ofArray(text), 0, payload, 0, text.length);
            final int crc = pool.frames().seal(page, KEY_HIGH, KEY_LOW, text.length);
            assertThat(metadata.compareAndSetStateWord(page, PageStateWord.word(7, 0, PageStateWord.WRITING),
                PageStateWord.word(7, 3, PageStateWord.SERVING))).isTrue();
            pool.clientSlots().heartbeatRelease(1, 42L);
            pool.clientSlots().flagsRelease(1, ClientSlotDescriptor.FLAG_LOCKED);
            assertThat(pool.pinTable().compareAndSetEntry(page, 1, 0, PinTableDescriptor.entry(3, 2))).isTrue();
            final int indexSlot = pool.index().insert(KEY_HIGH, KEY_LOW);
            pool.index().value(indexSlot, page);
            pool.header().heartbeatRelease(1_700_000_000_000L);

            final ByteBuffer file = readWholeFile(path);
            final PagePoolDescriptor.Layout layout = pool.layout();

            assertThat(file.getLong(PagePoolDescriptor.MAGIC_OFFSET)).isEqualTo(PagePoolDescriptor.MAGIC);
            assertThat(new String(bytes(file, 0, 8), StandardCharsets.US_ASCII)).as("magic reads as text").isEqualTo("KVTPOOL1");
            assertThat(file.getInt(PagePoolDescriptor.LAYOUT_VERSION_OFFSET)).isEqualTo(PagePoolDescriptor.LAYOUT_VERSION);
            assertThat(file.getInt(PagePoolDescriptor.POOL_STATE_OFFSET)).isEqualTo(PagePoolDescriptor.STATE_OPEN);
            assertThat(file.getLong(PagePoolDescriptor.PAGE_SIZE_OFFSET)).isEqualTo(PAGE_SIZE);
            assertThat(file.getLong(PagePoolDescriptor.PAGE_COUNT_OFFSET)).isEqualTo(PAGES);
            assertThat(file.getLong(PagePoolDescriptor.METADATA_OFFSET_OFFSET)).isEqualTo(layout.metadataOffset());
            assertThat(file.getLong(PagePoolDescriptor.DATA_OFFSET_OFFSET)).isEqualTo(layout.dataOffset());
            assertThat(file.getLong(PagePoolDescriptor.INDEX_OFFSET_OFFSET)).isEqualTo(layout.indexOffset());
            assertThat(file.getLong(PagePoolDescriptor.COUNTERS_OFFSET_OFFSET)).isEqualTo(layout.countersOffset());
            assertThat(file.getLong(PagePoolDescriptor.CREATOR_PID_OFFSET)).isEqualTo(ProcessHandle.current().pid());
            assertThat(file.getLong(PagePoolDescriptor.HEARTBEAT_OFFSET)).isEqualTo(1_700_000_000_000L);
            assertThat(file.getInt(PagePoolDescriptor.CLIENT_SLOT_COUNT_OFFSET)).isEqualTo(2);
            assertThat(file.getInt(PagePoolDescriptor.CLIENT_TIMEOUT_MS_OFFSET)).isEqualTo(3000);

            final int entry = (int)(layout.metadataOffset() + (long)page * PageMetadataDescriptor.ENTRY_LENGTH);
            assertThat(file.get(entry)).as("state byte first").isEqualTo((byte)PageStateWord.SERVING);
            assertThat(file.getInt(entry) >>> 8).as("pins in the next three bytes").isEqualTo(3);
            assertThat(file.getInt(entry + 4)).as("generation").isEqualTo(7);
            assertThat(file.getLong(entry + PageMetadataDescriptor.KEY_HIGH_OFFSET)).isEqualTo(KEY_HIGH);
            assertThat(file.getLong(entry + PageMetadataDescriptor.KEY_LOW_OFFSET)).isEqualTo(KEY_LOW);
            assertThat(file.getInt(entry + PageMetadataDescriptor.PAYLOAD_LENGTH_OFFSET)).isEqualTo(text.length);
            assertThat(file.getInt(entry + PageMetadataDescriptor.PAYLOAD_CRC_OFFSET)).isEqualTo(crc);
            assertThat(file.getInt(entry + PageMetadataDescriptor.OWNER_OFFSET)).isEqualTo(5);
            assertThat(file.getInt(entry + PageMetadataDescriptor.HIT_COUNT_OFFSET)).isEqualTo(9);
            assertThat(file.getLong(entry + PageMetadataDescriptor.LEASE_DEADLINE_OFFSET)).isEqualTo(123_456_789L);
            assertThat(file.getLong(entry + PageMetadataDescriptor.LAST_ACCESS_OFFSET)).isEqualTo(987_654_321L);
            assertThat(file.getLong(entry + PageMetadataDescriptor.NAMESPACE_TAG_OFFSET)).isEqualTo(0x7A6L);

            final int frame = (int)(layout.dataOffset() + page * layout.frameLength());
            assertThat(bytes(file, frame, text.length)).isEqualTo(text);
            assertThat(bytes(file, frame + text.length, 32)).as("the tail is zeroed").containsOnly(0);
            final int trailer = frame + (int)PAGE_SIZE;
            assertThat(file.getLong(trailer + PageFrameDescriptor.MAGIC_OFFSET)).isEqualTo(PageFrameDescriptor.MAGIC);
            assertThat(file.getLong(trailer + PageFrameDescriptor.KEY_HIGH_OFFSET)).isEqualTo(KEY_HIGH);
            assertThat(file.getLong(trailer + PageFrameDescriptor.KEY_LOW_OFFSET)).isEqualTo(KEY_LOW);
            assertThat(file.getLong(trailer + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET)).isEqualTo(text.length);
            assertThat(file.getInt(trailer + PageFrameDescriptor.PAYLOAD_CRC_OFFSET)).isEqualTo(crc);
            final java.util.zip.CRC32C expected = new java.util.zip.CRC32C();
            expected.update(text);
            assertThat(crc).as("payload CRC32C").isEqualTo((int)expected.getValue());
            assertThat(file.getInt(trailer + PageFrameDescriptor.FRAME_VERSION_OFFSET)).isEqualTo(PageFrameDescriptor.FRAME_VERSION);
            assertThat(file.getLong(trailer + PageFrameDescriptor.PAGE_SIZE_OFFSET)).isEqualTo(PAGE_SIZE);
            assertThat(file.getLong(trailer + PageFrameDescriptor.NAMESPACE_TAG_OFFSET)).isEqualTo(0x7A6L);
            final java.util.zip.CRC32C trailerCrc = new java.util.zip.CRC32C();
            trailerCrc.update(bytes(file, trailer, PageFrameDescriptor.TRAILER_CHECKED_LENGTH));
            assertThat(file.getInt(trailer + PageFrameDescriptor.TRAILER_CRC_OFFSET)).as("trailer CRC32C of bytes 0..63").isEqualTo((int)trailerCrc.getValue());

            final int slot = (int)ClientSlotDescriptor.slotOffset(layout.clientSlotsOffset(), 1);
            assertThat(file.getLong(slot + ClientSlotDescriptor.HEARTBEAT_OFFSET)).isEqualTo(42L);
            assertThat(file.getInt(slot + ClientSlotDescriptor.FLAGS_OFFSET)).isEqualTo(ClientSlotDescriptor.FLAG_LOCKED);
            final int pin = (int)PinTableDescriptor.entryOffset(layout.pinTableOffset(), 2, page, 1);
            assertThat(file.getShort(pin)).as("pin count in the low half").isEqualTo((short)2);
            assertThat(file.getShort(pin + 2)).as("slot generation in the high half").isEqualTo((short)3);

            final int index = (int)layout.indexOffset();
            assertThat(file.getInt(index + KeyTableDescriptor.MAGIC_OFFSET)).isEqualTo(KeyTableDescriptor.MAGIC);
            assertThat(new String(bytes(file, index, 4), StandardCharsets.US_ASCII)).isEqualTo("KTB1");
            assertThat(file.getLong(index + KeyTableDescriptor.SIZE_OFFSET)).isEqualTo(1);
            final int indexEntry = index + KeyTableDescriptor.HEADER_LENGTH + indexSlot * KeyTableDescriptor.SLOT_LENGTH;
            assertThat(file.getLong(indexEntry + KeyTableDescriptor.KEY_HIGH_OFFSET)).isEqualTo(KEY_HIGH);
            assertThat(file.getLong(indexEntry + KeyTableDescriptor.KEY_LOW_OFFSET)).isEqualTo(KEY_LOW);
            assertThat(file.getInt(indexEntry + KeyTableDescriptor.VALUE_OFFSET)).isEqualTo(page);
            assertThat(file.getInt(indexEntry + KeyTableDescriptor.FLAGS_OFFSET) & KeyTableDescriptor.OCCUPIED).as("occupied bit").isNotZero();
        }
    }

    @Test
    void shouldReadTheLayoutBackFromTheHeaderAlone(@TempDir final Path dir) throws Exception
    {
        final Path path = dir.resolve("pool");
        try (PagePool owner = PagePool.create(path, PAGE_SIZE, PAGES, 64, 2, Duration.ofSeconds(3));
             MappedPool client = MappedPool.attach(path))
        {
            assertThat(client.layout()).isEqualTo(owner.layout());
            assertThat(client.header().epochPlain()).isEqualTo(owner.header().epochPlain());
            owner.metadata().keyPlain(1, KEY_HIGH, KEY_LOW);
            assertThat(client.metadata().keyHighPlain(1)).isEqualTo(KEY_HIGH);
            assertThat(client.metadata().keyLowPlain(1)).isEqualTo(KEY_LOW);
        }
    }

    private static ByteBuffer readWholeFile(final Path path) throws Exception
    {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ))
        {
            final ByteBuffer buffer = ByteBuffer.allocate((int)channel.size()).order(ByteOrder.LITTLE_ENDIAN);
            while (buffer.hasRemaining() && channel.read(buffer) >= 0)
            {
                // read it all
            }
            return buffer.flip();
        }
    }

    private static byte[] bytes(final ByteBuffer buffer, final int at, final int length)
    {
        final byte[] out = new byte[length];
        buffer.get(at, out);
        return out;
    }
}
