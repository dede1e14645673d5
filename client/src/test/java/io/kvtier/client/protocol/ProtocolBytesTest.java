package io.kvtier.client.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes through the flyweights and reads raw little-endian bytes at the offsets of the diagrams in
 * docs/ipc-protocol.md: the Java constants and the document cannot drift apart unnoticed.
 */
class ProtocolBytesTest
{
    private static int intAt(final MemorySegment s, final long at)
    {
        return (s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at) & 0xFF)
            | (s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at + 1) & 0xFF) << 8
            | (s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at + 2) & 0xFF) << 16
            | (s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at + 3) & 0xFF) << 24;
    }

    private static long longAt(final MemorySegment s, final long at)
    {
        return (intAt(s, at) & 0xFFFF_FFFFL) | ((long)intAt(s, at + 4) << 32);
    }

    @Test
    void requestFieldsSitAtTheDiagramsOffsets()
    {
        final MemorySegment s = Arena.ofAuto().allocate(128);
        new RequestEncoder().wrap(s, 8).header(64, MessageType.RESERVE, 0x0102030405060708L, 3, 2, 1, RequestDescriptor.FLAG_KEYS_IN_SLOTS)
            .key(0, 0x1122334455667788L, 0x99AABBCCDDEEFF00L);
        assertThat(intAt(s, 8)).isEqualTo(64);
        assertThat(intAt(s, 8 + 4)).isEqualTo(5);
        assertThat(longAt(s, 8 + 8)).isEqualTo(0x0102030405060708L);
        assertThat(intAt(s, 8 + 16)).isEqualTo(3);
        assertThat(intAt(s, 8 + 20)).isEqualTo(2);
        assertThat(intAt(s, 8 + 24)).isEqualTo(1 | (1 << 16));
        assertThat(intAt(s, 8 + 28)).isZero();
        // keys.md: the digest's bytes in order, so the high half's most significant byte comes first
        assertThat(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8 + 32)).isEqualTo((byte)0x11);
        assertThat(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8 + 39)).isEqualTo((byte)0x88);
        assertThat(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8 + 40)).isEqualTo((byte)0x99);

        final RequestDecoder d = new RequestDecoder().wrap(s, 8, 64);
        assertThat(d.type()).isEqualTo(MessageType.RESERVE);
        assertThat(d.requestId()).isEqualTo(0x0102030405060708L);
        assertThat(d.firstSlot()).isEqualTo(3);
        assertThat(d.count()).isEqualTo(2);
        assertThat(d.namespaceIndex()).isEqualTo(1);
        assertThat(d.flags()).isEqualTo(1);
        assertThat(d.keyHigh(0)).isEqualTo(0x1122334455667788L);
        assertThat(d.keyLow(0)).isEqualTo(0x99AABBCCDDEEFF00L);
    }

    @Test
    void responseFieldsSitAtTheDiagramsOffsets()
    {
        final MemorySegment s = Arena.ofAuto().allocate(128);
        new ResponseEncoder().wrap(s, 0).header(72, MessageType.ACQUIRE, 77L, 0, 9, 4, 2, 10, 11, 12, 13)
            .entry(1, 42, 7, PageEntryStatus.PINNED_FROM_L3);
        final int[] expected = {72, MessageType.ACQUIRE, 77, 0, 0, 9, 4, 2, 10, 11, 12, 13};
        for (int i = 0; i < expected.length; i++)
        {
            assertThat(intAt(s, 4L * i)).as("int at %d", 4 * i).isEqualTo(expected[i]);
        }
        assertThat(intAt(s, 48 + 12)).isEqualTo(42);
        assertThat(intAt(s, 48 + 12 + 4)).isEqualTo(7);
        assertThat(intAt(s, 48 + 12 + 8)).isEqualTo(2);
        final ResponseDecoder d = new ResponseDecoder().wrap(s, 0);
        assertThat(d.requestId()).isEqualTo(77L);
        assertThat(d.resultCount()).isEqualTo(9);
        assertThat(d.entryPageId(1)).isEqualTo(42);
        assertThat(d.entryGeneration(1)).isEqualTo(7);
        assertThat(d.entryStatus(1)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);

        new ResponseEncoder().wrap(s, 0).statsCount(2).statsValue(0, 5L).statsValue(1, -1L);
        assertThat(intAt(s, 48)).isEqualTo(2);
        assertThat(longAt(s, 52)).isEqualTo(5L);
        assertThat(longAt(s, 60)).isEqualTo(-1L);
    }

    @Test
    void fileHeadersAndMagicsMatchTheDocument()
    {
        assertThat(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(ControlFileDescriptor.MAGIC).array())
            .isEqualTo("KVTIPC01".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(RingFileDescriptor.MAGIC).array())
            .isEqualTo("KVTRING1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(HandshakeDescriptor.HELLO_MAGIC).array())
            .isEqualTo("HELL".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(HandshakeDescriptor.WELCOME_MAGIC).array())
            .isEqualTo("ELWC".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(new int[] {RingFileDescriptor.REQUEST_TAIL_OFFSET, RingFileDescriptor.REQUEST_HEAD_OFFSET, RingFileDescriptor.RESPONSE_TAIL_OFFSET,
            RingFileDescriptor.RESPONSE_HEAD_OFFSET, RingFileDescriptor.CLIENT_SLEEPING_OFFSET, RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET,
            RingFileDescriptor.DISCONNECT_REASON_OFFSET}).containsExactly(64, 128, 192, 256, 320, 384, 448);
        assertThat(RingFileDescriptor.responseRingOffset(1 << 18)).isEqualTo(4096 + (1 << 18));
        assertThat(ControlFileDescriptor.DOORBELL_OFFSET).isEqualTo(128);
        assertThat(ControlFileDescriptor.ENGINE_HEARTBEAT_OFFSET).isEqualTo(64);
    }

    @Test
    void helloAndWelcomeEncodeAtTheirOffsets()
    {
        final ByteBuffer hello = new HandshakeDescriptor.Hello(HandshakeDescriptor.HELLO_MAGIC, 1, 0, 512, 4321, 0, new byte[16]).encode()
            .order(ByteOrder.LITTLE_ENDIAN);
        assertThat(hello.remaining()).isEqualTo(40);
        assertThat(hello.getInt(0)).isEqualTo(0x4C4C4548);
        assertThat(hello.getShort(4)).isEqualTo((short)1);
        assertThat(hello.getShort(6)).isEqualTo((short)0);
        assertThat(hello.getInt(8)).isEqualTo(512);
        assertThat(hello.getInt(12)).isEqualTo(1);
        assertThat(hello.getInt(16)).isEqualTo(4321);

        final ByteBuffer welcome = new HandshakeDescriptor.Welcome(0, 3, 64, 9L, 4096, 100, 8192L, 4224L, 1 << 16, 5000, 1056, 2, 3,
            "/p", "/c", "/r").encode().order(ByteOrder.LITTLE_ENDIAN);
        assertThat(welcome.getInt(0)).isEqualTo(0x43574C45);
        assertThat(welcome.getInt(8)).isEqualTo(3);
        assertThat(welcome.getInt(12)).isEqualTo(64);
        assertThat(welcome.getLong(16)).isEqualTo(9L);
        assertThat(welcome.getInt(24)).isEqualTo(4096);
        assertThat(welcome.getInt(28)).isEqualTo(100);
        assertThat(welcome.getLong(32)).isEqualTo(8192L);
        assertThat(welcome.getLong(40)).isEqualTo(4224L);
        assertThat(welcome.getInt(48)).isEqualTo(1 << 16);
        assertThat(welcome.getInt(52)).isEqualTo(5000);
        assertThat(welcome.getInt(56)).isEqualTo(1056);
        assertThat(welcome.getInt(60)).as("Engine Minor Version").isEqualTo(2);
        assertThat(welcome.getInt(64)).as("Descriptors").isEqualTo(3);
        assertThat(welcome.getInt(68)).as("Reserved").isZero();
        assertThat(welcome.getInt(72)).isEqualTo(2);
        assertThat(welcome.get(76)).isEqualTo((byte)'/');
        assertThat(welcome.remaining()).isEqualTo(72 + 3 * 6);
    }
}
