package io.kvtier.tier.faults;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code faults} setting and the control file: the kinds by their agreed names, rates as fractions
 * or percentages, lines applied in order over the configured rates, and each mistake named.
 */
class FaultRatesTest
{
    private static final String EVERY_KIND = "eio-read:0.01, eio-write:0.01, enospc-write:0.01, slow-read:0.005, stall-read:0.001,"
        + " block-call:0.0005, short-read:0.01, torn-write:0.005, bit-flip:0.01, replace:0.005, late-write:0.005";

    @Test
    void shouldReadEveryKindByTheNameTheCampaignWrites()
    {
        final FaultRates rates = FaultRates.parse(EVERY_KIND);
        assertThat(rates.rate(FaultKind.EIO_READ)).isEqualTo(0.01);
        assertThat(rates.rate(FaultKind.STALL_READ)).isEqualTo(0.001);
        assertThat(rates.rate(FaultKind.BLOCK_CALL)).isEqualTo(0.0005);
        assertThat(rates.rate(FaultKind.LATE_WRITE)).isEqualTo(0.005);
        for (final FaultKind kind : FaultKind.values())
        {
            assertThat(rates.rate(kind)).as("%s is in the agreed list", kind).isPositive();
        }
        assertThat(FaultRates.parse("eio-read: 5% ,").rate(FaultKind.EIO_READ)).as("a percentage, spaces and a trailing comma").isEqualTo(0.05);
        assertThat(FaultRates.parse("").any()).isFalse();
    }

    @Test
    void shouldNameWhatIsWrongWithTheSetting()
    {
        assertThatThrownBy(() -> FaultRates.parse("eio-reads:0.1")).hasMessageContaining("eio-reads").hasMessageContaining("eio-read, eio-write");
        assertThatThrownBy(() -> FaultRates.parse("eio-read")).hasMessageContaining("'eio-read' is not kind:rate");
        assertThatThrownBy(() -> FaultRates.parse("eio-read:often")).hasMessageContaining("the rate of eio-read is 'often'");
        assertThatThrownBy(() -> FaultRates.parse("eio-read:1.5")).hasMessageContaining("the rate of eio-read is '1.5'");
        assertThatThrownBy(() -> FaultRates.parse("eio-read:0.1, eio-read:0.2")).hasMessageContaining("named twice");
        assertThatThrownBy(() -> FaultRates.parse("eio-write:0.7, bit-flip:0.4"))
            .hasMessageContaining("eio-write + enospc-write + torn-write + bit-flip + replace add up to 1.1");
    }

    @Test
    void shouldApplyControlLinesInOrderOverTheConfiguredRates()
    {
        final FaultRates configured = FaultRates.parse(EVERY_KIND);
        final FaultRates healed = configured.control("all=0\n");
        assertThat(healed.any()).as("all=0 heals").isFalse();
        final FaultRates one = configured.control("# only EIO on reads now\nall=0\n\neio-read = 0.5\n");
        assertThat(one.rate(FaultKind.EIO_READ)).isEqualTo(0.5);
        assertThat(one.rate(FaultKind.BIT_FLIP)).isZero();
        assertThat(configured.control("").toString()).as("an empty file: the configured rates").isEqualTo(configured.toString());
        assertThat(healed.control("bit-flip=0.2").rate(FaultKind.EIO_READ)).as("applied over the rates it is given").isZero();
    }

    @Test
    void shouldNameTheLineAtFaultInAControlFile()
    {
        final FaultRates configured = FaultRates.parse("eio-read:0.1");
        assertThatThrownBy(() -> configured.control("all=0\nbitflip=0.1\n")).hasMessageContaining("line 2 'bitflip=0.1'")
            .hasMessageContaining("unknown fault kind 'bitflip'");
        assertThatThrownBy(() -> configured.control("eio-read 0.1")).hasMessageContaining("line 1 'eio-read 0.1' is not key=rate");
        assertThatThrownBy(() -> configured.control("eio-read=2")).hasMessageContaining("line 1 'eio-read=2'");
        assertThatThrownBy(() -> configured.control("all=0.5")).hasMessageContaining("add up to");
    }
}
