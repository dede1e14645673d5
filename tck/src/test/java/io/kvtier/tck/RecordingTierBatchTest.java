package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordingTierBatchTest
{
    private static final List<PageKey> KEYS = List.of(new PageKey(1, 2), new PageKey(3, 4));

    @Test
    void shouldRecordEachKeysStatus()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        batch.complete(1, TierStatus.NOT_FOUND);
        assertThat(batch.isComplete()).isFalse();
        batch.complete(0, TierStatus.OK);
        assertThat(batch.awaitCompletion(Duration.ofSeconds(1)).statuses()).containsExactly(TierStatus.OK, TierStatus.NOT_FOUND);
    }

    @Test
    void shouldThrowAndRecordWhenAKeyIsCompletedTwice()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        batch.complete(0, TierStatus.OK);
        assertThatThrownBy(() -> batch.complete(0, TierStatus.CLOSED)).isInstanceOf(IllegalStateException.class);
        batch.complete(1, TierStatus.OK);
        assertThat(batch.violations()).singleElement().asString().contains("key 0 completed twice", "OK", "CLOSED");
        assertThatThrownBy(() -> batch.awaitCompletion(Duration.ofSeconds(1))).isInstanceOf(AssertionError.class).hasMessageContaining("completed twice");
    }

    @Test
    void shouldRecordOutOfRangeAndNullCompletions()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        assertThatThrownBy(() -> batch.complete(2, TierStatus.OK)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> batch.complete(0, null)).isInstanceOf(NullPointerException.class);
        assertThat(batch.violations()).hasSize(2);
    }

    @Test
    void shouldRecordATierTouchingTheBatchAfterCompletion()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        assertThat(batch.keyHigh(1)).isEqualTo(3);
        batch.complete(0, TierStatus.OK);
        batch.complete(1, TierStatus.OK);
        assertThat(batch.pageKey(1)).isEqualTo(KEYS.get(1));
        assertThat(batch.violations()).isEmpty();
        batch.segment(0);
        assertThat(batch.violations()).singleElement().asString().contains("segment(0)", "after the batch's last key was completed");
    }

    @Test
    void shouldRecordATierReadingTheSizeAfterTheLastCompletion()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        // The loop the guide's example had: its condition reads size() once more after completing the last key.
        for (int i = 0; i < batch.size(); i++)
        {
            batch.complete(i, TierStatus.OK);
        }
        assertThat(batch.violations()).singleElement().asString().contains("size()", "after the batch's last key was completed",
            "read size() once");
        assertThat(batch.keyCount()).isEqualTo(2);
        assertThat(batch.violations()).as("keyCount() is the tests' own, not watched").hasSize(1);
        assertThatThrownBy(() -> batch.awaitCompletion(Duration.ofSeconds(1))).isInstanceOf(AssertionError.class).hasMessageContaining("size()");
    }

    @Test
    void shouldLetATierReadTheSizeWhileKeysArePendingAndOfAnEmptyBatch()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        final int size = batch.size();
        batch.complete(0, TierStatus.OK);
        assertThat(batch.size()).isEqualTo(size);
        batch.complete(1, TierStatus.OK);
        final RecordingTierBatch empty = RecordingTierBatch.ofKeys("empty", java.util.List.of());
        assertThat(empty.size()).isZero();
        assertThat(batch.violations()).isEmpty();
        assertThat(empty.violations()).isEmpty();
    }

    @Test
    void shouldRecordACompletionAfterTheLastOneNamingTheCall()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        batch.complete(0, TierStatus.OK);
        batch.complete(1, TierStatus.OK);
        assertThatThrownBy(() -> batch.complete(1, TierStatus.CLOSED)).isInstanceOf(IllegalStateException.class);
        assertThat(batch.violations()).hasSize(2).anySatisfy(violation -> assertThat(violation)
            .contains("complete(1, CLOSED)", "after the batch's last key was completed"));
    }

    @Test
    void shouldRecordAKeyAskedForOutsideTheBatch()
    {
        final RecordingTierBatch empty = RecordingTierBatch.ofKeys("empty", java.util.List.of());
        assertThatThrownBy(() -> empty.keyHigh(0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(empty.violations()).singleElement().asString().contains("keyHigh(0) is out of range for a batch of 0");
    }

    @Test
    void shouldRecordATierTouchingAKeyItCompletedWhileOthersArePending()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("b", KEYS);
        batch.complete(0, TierStatus.OK);
        batch.keyLow(1);
        assertThat(batch.violations()).isEmpty();
        batch.keyLow(0);
        assertThat(batch.violations()).singleElement().asString().contains("keyLow(0)", "after completing key 0");
    }

    @Test
    void shouldRecordATierWritingIntoASegmentAfterCompletingItsKey()
    {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            final java.lang.foreign.MemorySegment first = arena.allocate(64);
            final java.lang.foreign.MemorySegment second = arena.allocate(64);
            final RecordingTierBatch batch = new RecordingTierBatch("r", KEYS, java.util.List.of(first, second));
            final java.lang.foreign.MemorySegment kept = batch.segment(0);
            kept.fill((byte)1);
            batch.complete(0, TierStatus.OK);
            batch.segment(1).fill((byte)2);
            batch.complete(1, TierStatus.OK);
            batch.assertNoViolations();
            // A reference the tier kept, written after the key was the engine's again.
            kept.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 63, (byte)9);
            assertThatThrownBy(batch::assertNoViolations).isInstanceOf(AssertionError.class).hasMessageContaining("key 0's segment changed");
        }
    }

    @Test
    void shouldNameThePendingKeysWhenTheDeadlinePasses()
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("hung", KEYS);
        batch.complete(0, TierStatus.OK);
        assertThatThrownBy(() -> batch.awaitCompletion(Duration.ofMillis(20)))
            .isInstanceOf(AssertionError.class)
            .hasMessageContaining("'hung'")
            .hasMessageContaining("1 of 2 keys")
            .hasMessageContaining("[1]");
    }
}
