package io.kvtier.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.engine.events.EventRingDescriptor;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The msgpack form of each event type, against bytes written out by hand from the msgpack specification
 * (fixarray 0x90|n, fixstr 0xa0|n, bin8 0xc4, float64 0xcb, nil 0xc0, positive fixint).
 */
class KvEventEncoderTest
{
    private static final long HIGH = 0x0102030405060708L;
    private static final long LOW = 0x090a0b0c0d0e0f10L;
    /** bin8 of 16 bytes: the key, high half first. */
    private static final String HASH = "c410" + "0102030405060708" + "090a0b0c0d0e0f10";
    /** 1.5 as a msgpack float64. */
    private static final String TS = "cb3ff8000000000000";

    private static String ascii(final String text)
    {
        return HexFormat.of().formatHex(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private static String hex(final byte[] bytes)
    {
        return HexFormat.of().formatHex(bytes);
    }

    @Test
    void shouldEncodeABlockStoredEventOfThePool()
    {
        final KvEventEncoder encoder = new KvEventEncoder(List.of("cpu", "disk"), 4);
        encoder.add(EventRingDescriptor.TYPE_STORED, 0, HIGH, LOW);
        final String expected = "92" + TS + "91"
            + "97" + "ab" + ascii("BlockStored")   // [tag, hashes, parent, token_ids, block_size, lora_id, medium]
            + "91" + HASH                          // one block hash
            + "c0"                                 // no parent
            + "90"                                 // no token ids
            + "00"                                 // block size 0
            + "c0"                                 // no LoRA
            + "a3" + ascii("cpu");
        assertThat(hex(encoder.encode(1.5))).isEqualTo(expected);
        assertThat(encoder.count()).as("encoding starts an empty batch").isZero();
    }

    @Test
    void shouldEncodeABlockRemovedEventOfATier()
    {
        final KvEventEncoder encoder = new KvEventEncoder(List.of("cpu", "disk"), 4);
        encoder.add(EventRingDescriptor.TYPE_REMOVED, 1, HIGH, LOW);
        assertThat(hex(encoder.encode(1.5))).isEqualTo("92" + TS + "91" + "93" + "ac" + ascii("BlockRemoved") + "91" + HASH + "a4" + ascii("disk"));
    }

    @Test
    void shouldEncodeAllBlocksClearedAndSeveralEventsInOrder()
    {
        final KvEventEncoder encoder = new KvEventEncoder(List.of("cpu"), 4);
        encoder.add(EventRingDescriptor.TYPE_CLEARED, 0, 0, 0);
        encoder.add(EventRingDescriptor.TYPE_REMOVED, 0, HIGH, LOW);
        assertThat(hex(encoder.encode(1.5))).isEqualTo("92" + TS + "92"
            + "91" + "b0" + ascii("AllBlocksCleared")
            + "93" + "ac" + ascii("BlockRemoved") + "91" + HASH + "a3" + ascii("cpu"));
    }

    @Test
    void shouldEncodeAnEmptyBatch()
    {
        assertThat(hex(new KvEventEncoder(List.of("cpu"), 1).encode(1.5))).isEqualTo("92" + TS + "90");
    }

    @Test
    void shouldNameAMediumOrTypeItDoesNotKnow()
    {
        final KvEventEncoder encoder = new KvEventEncoder(List.of("cpu"), 2);
        assertThatThrownBy(() -> encoder.add(EventRingDescriptor.TYPE_STORED, 3, 1, 2)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("medium=3");
        assertThatThrownBy(() -> encoder.add(9, 0, 1, 2)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("type=9");
    }

    @Test
    void shouldNameTopicsByNamespace()
    {
        assertThat(EventPublisher.topic("kv@node1@", 0)).isEqualTo("kv@node1@untagged");
        assertThat(EventPublisher.topic("kv@node1@", 0x0d8d5b6bec68e56eL)).isEqualTo("kv@node1@0d8d5b6bec68e56e");
        assertThat(EventPublisher.topic("kv@node1@", -1L)).isEqualTo("kv@node1@ffffffffffffffff");
    }
}
