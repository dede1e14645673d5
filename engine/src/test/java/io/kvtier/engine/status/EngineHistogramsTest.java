package io.kvtier.engine.status;

import io.kvtier.client.protocol.MessageType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine's histograms: one per tier and direction, one per message type, each its own. */
class EngineHistogramsTest
{
    @Test
    void shouldKeepEachTiersReadsWritesAndEachTypesRequestsApart()
    {
        final EngineHistograms histograms = new EngineHistograms();
        histograms.tierRead(1).record(3_000);
        histograms.tierWrite(1).record(4_000);
        histograms.recordRequest(MessageType.LOOKUP, 5_000);
        histograms.recordRequest(64, 5_000);
        assertThat(histograms.tierRead(1).sumNanosOpaque()).isEqualTo(3_000);
        assertThat(histograms.tierWrite(1).sumNanosOpaque()).isEqualTo(4_000);
        assertThat(histograms.tierRead(0).sumNanosOpaque()).isZero();
        assertThat(histograms.request(MessageType.LOOKUP).sumNanosOpaque()).isEqualTo(5_000);
        assertThat(histograms.request(MessageType.ACQUIRE).sumNanosOpaque()).isZero();
    }

    @Test
    void shouldRefuseATierOrTypeOutsideItsRangeNamingIt()
    {
        final EngineHistograms histograms = new EngineHistograms();
        assertThatThrownBy(() -> histograms.tierRead(EngineHistograms.MAX_TIERS)).hasMessageContaining("tier=30");
        assertThatThrownBy(() -> histograms.tierWrite(-1)).hasMessageContaining("tier=-1");
        assertThatThrownBy(() -> histograms.request(32)).hasMessageContaining("message type=32");
    }
}
