package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PageStateWord;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;

/** The one check that a page is still a client's reservation: state, generation and owner, each able to say no. */
class ReservationTest
{
    @Test
    void shouldHoldOnlyForTheWritingPageAtItsGenerationByItsOwner()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final PageMetadata metadata = new PageMetadata(arena.allocate(4L * PageMetadataDescriptor.ENTRY_LENGTH, 64), 4);
            final int page = 2;
            final int owner = 7;
            metadata.reservationPlain(page, owner, 0);
            final long writing = PageStateWord.word(5, 0, PageStateWord.WRITING);
            assertThat(Reservation.isHeldBy(metadata, page, writing, 5, owner)).isTrue();
            assertThat(Reservation.isHeldBy(metadata, page, writing, 5, owner + 1)).as("another owner").isFalse();
            assertThat(Reservation.isHeldBy(metadata, page, writing, 4, owner)).as("an older generation").isFalse();
            assertThat(Reservation.isHeldBy(metadata, page, PageStateWord.word(5, 0, PageStateWord.SERVING), 5, owner)).as("committed").isFalse();
            assertThat(Reservation.isHeldBy(metadata, page, PageStateWord.word(6, 0, PageStateWord.FREE), 5, owner)).as("taken back").isFalse();
            assertThat(Reservation.isWriting(writing, 5)).isTrue();
            assertThat(Reservation.isWriting(writing, 6)).isFalse();
            assertThat(Reservation.isWriting(PageStateWord.word(5, 1, PageStateWord.SERVING), 5)).isFalse();
        }
    }
}
