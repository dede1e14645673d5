package io.kvtier.client.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordRingTest
{
    private static final int CAPACITY = 256;
    private static final long TAIL = 64;
    private static final long HEAD = 128;
    private static final long DATA = 4096;

    private final MemorySegment file = Arena.ofAuto().allocate(DATA + CAPACITY, 64);
    private final RingProducer producer = new RingProducer(file, DATA, CAPACITY, TAIL, HEAD);
    private final RingConsumer consumer = new RingConsumer(file, DATA, CAPACITY, TAIL, HEAD);

    private void write(final int type, final int length, final long value)
    {
        final long at = producer.tryClaim(type, length);
        assertThat(at).isGreaterThanOrEqualTo(0);
        file.set(LittleEndian.LONG, at + 8, value);
        producer.commitRelease();
    }

    private long readValue()
    {
        final long at = consumer.poll();
        assertThat(at).isGreaterThanOrEqualTo(0);
        final long value = file.get(LittleEndian.LONG, at + 8);
        consumer.advanceRelease();
        return value;
    }

    @Test
    void aRecordThatWouldCrossTheEndIsPrecededByPaddingAndStartsTheNextLap()
    {
        write(5, 100, 1);                       // takes 104 bytes: 0..104
        assertThat(readValue()).isEqualTo(1);
        write(5, 100, 2);                       // 104..208
        assertThat(readValue()).isEqualTo(2);
        write(5, 60, 3);                        // needs 64, only 48 left: padding 208..256, record at 0
        final long paddingAt = DATA + 208;
        assertThat(file.get(LittleEndian.INT, paddingAt)).isEqualTo(48);
        assertThat(file.get(LittleEndian.INT, paddingAt + 4)).isEqualTo(MessageType.PADDING);
        assertThat(file.get(LittleEndian.INT, DATA)).isEqualTo(60);
        assertThat(producer.tailPlain()).isEqualTo(256 + 64);
        assertThat(consumer.poll()).isEqualTo(DATA);
        consumer.advanceRelease();
        assertThat(consumer.headPlain()).isEqualTo(256 + 64);
        assertThat(consumer.poll()).isEqualTo(RingConsumer.EMPTY);
    }

    @Test
    void aPaddingRecordThatDoesNotRunToTheEndOfTheDataIsRefused()
    {
        // A hostile producer pads 16 bytes mid-ring, then writes a record after them.
        file.set(LittleEndian.INT, DATA, 16);
        file.set(LittleEndian.INT, DATA + 4, MessageType.PADDING);
        file.set(LittleEndian.INT, DATA + 16, 16);
        file.set(LittleEndian.INT, DATA + 20, 5);
        LittleEndian.LONG_HANDLE.setRelease(file, TAIL, 32L);
        assertThat(consumer.poll()).isEqualTo(RingConsumer.MISPLACED_PADDING);
        assertThat(consumer.headPlain()).as("nothing consumed").isZero();
    }

    @Test
    void aFullRingRefusesAndNeverOverwrites()
    {
        write(5, 64, 1);
        write(5, 64, 2);
        write(5, 64, 3);
        write(5, 64, 4);
        assertThat(producer.tryClaim(5, 16)).isEqualTo(-1);
        assertThat(producer.hasRoomAcquire(8)).isFalse();
        assertThat(readValue()).isEqualTo(1);
        assertThat(producer.hasRoomAcquire(64)).isTrue();
        write(5, 64, 5);
        assertThat(readValue()).isEqualTo(2);
        assertThat(readValue()).isEqualTo(3);
        assertThat(readValue()).isEqualTo(4);
        assertThat(readValue()).isEqualTo(5);
    }

    @Test
    void recordsComeOutInOrderAcrossManyLaps()
    {
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 1000; round++)
        {
            final int length = 16 + (round * 7) % 100;
            if (producer.hasRoomAcquire(length))
            {
                write(5, length, next++);
            }
            if (round % 3 != 0)
            {
                while (consumer.poll() >= 0)
                {
                    assertThat(readValue()).isEqualTo(expected++);
                }
            }
        }
        while (consumer.poll() >= 0)
        {
            assertThat(readValue()).isEqualTo(expected++);
        }
        assertThat(expected).isEqualTo(next).isGreaterThan(300);
        assertThat(producer.tailPlain()).isGreaterThan(10L * CAPACITY);
    }

    @Test
    void aRecordLongerThanHalfTheRingIsRefusedOutright()
    {
        assertThatThrownBy(() -> producer.tryClaim(5, CAPACITY / 2 + 8)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theConsumerNamesBrokenFraming()
    {
        file.set(LittleEndian.INT, DATA, 4);
        LittleEndian.LONG_HANDLE.setRelease(file, TAIL, 8L);
        assertThat(consumer.poll()).isEqualTo(RingConsumer.SHORTER_THAN_HEADER);

        file.set(LittleEndian.INT, DATA, 64);
        assertThat(consumer.poll()).as("Length beyond Tail").isEqualTo(RingConsumer.DOES_NOT_FIT);

        LittleEndian.LONG_HANDLE.setRelease(file, TAIL, 10_000L);
        assertThat(consumer.poll()).as("Tail more than a lap ahead").isEqualTo(RingConsumer.DOES_NOT_FIT);
    }
}
