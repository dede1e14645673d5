package io.kvtier.bench.chaos;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A campaign's figures. The must-be-zero ones are {@link #wrongBytesServed}, {@link #pagesLost},
 * {@link #pinsLeaked} and {@link #reservationsLeaked}; {@link #failures} adds what else must not happen
 * (a late commit that landed, a hostile request the engine let through).
 */
public final class ChaosReport
{
    long pagesVerified;
    long wrongBytesServed;
    long pagesLost;
    long pagesDestroyedByFaults;
    long pinsLeaked;
    long reservationsLeaked;
    final Map<String, Long> faults = new TreeMap<>();
    long clientKills;
    long clientStops;
    long engineRestarts;
    long hostileRefused;
    String tiersJson = "[]";
    long seed;
    double durationSeconds;
    /** {@code --min-each}: how often every kind had to be injected (0: not asked). */
    int minEach;
    /** How long the faulty phase ran past its duration to reach {@code minEach}. */
    double overtimeSeconds;
    /** The kinds still short of {@code minEach} when the overtime allowed ran out, with their counts. */
    final Map<String, Long> shortOfMinEach = new TreeMap<>();
    long pagesAcknowledged;
    final List<String> failures = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    /** Each client language asked for, in the order asked, with what its processes did (or why none ran). */
    final Map<String, LanguageFigures> clientsByLanguage = new LinkedHashMap<>();

    /**
     * What one language's honest client processes did: the totals each process last reported, summed over
     * every process of the language (those killed included), and what the campaign did to them.
     */
    public static final class LanguageFigures
    {
        /** Null when its processes ran, else what is missing to run them and how to get it. */
        String missing;
        long started;
        long killed;
        long stopped;
        long pagesVerified;
        long wrongBytesServed;
        long pagesCommitted;
        long pagesAcknowledged;
        long requests;
        long refused;

        /** @return processes started */
        public long started()
        {
            return started;
        }

        /** @return processes killed by the client-kill faults (kill -9 holding pins, mid-write, at random) */
        public long killed()
        {
            return killed;
        }

        /** @return pages its processes read and found right */
        public long pagesVerified()
        {
            return pagesVerified;
        }

        /** @return null when it ran, else what is missing */
        public String missing()
        {
            return missing;
        }
    }

    /** @return whether a must-be-zero figure is not zero, or something else that must not happen happened */
    public boolean failed()
    {
        return wrongBytesServed > 0 || pagesLost > 0 || pinsLeaked > 0 || reservationsLeaked > 0 || !failures.isEmpty();
    }

    /** @return pages read and found right */
    public long pagesVerified()
    {
        return pagesVerified;
    }

    /** @return pages read whose bytes were not their key's */
    public long wrongBytesServed()
    {
        return wrongBytesServed;
    }

    /** @return pages acknowledged as backed up, destroyed by no fault, and unreadable at the end */
    public long pagesLost()
    {
        return pagesLost;
    }

    /** @return pins still held once every lease expired */
    public long pinsLeaked()
    {
        return pinsLeaked;
    }

    /** @return reservations still held once every lease expired */
    public long reservationsLeaked()
    {
        return reservationsLeaked;
    }

    /** @return faults injected, by kind */
    public Map<String, Long> faults()
    {
        return faults;
    }

    /** @return what else went wrong, each in words */
    public List<String> failures()
    {
        return failures;
    }

    /** @return what the campaign could not do here, and why */
    public List<String> notes()
    {
        return notes;
    }

    /** @return each client language asked for and what its processes did */
    public Map<String, LanguageFigures> clientsByLanguage()
    {
        return clientsByLanguage;
    }

    /** @return the report as one JSON object, with the keys docs/chaos.md lists */
    public String toJson()
    {
        final StringWriter text = new StringWriter();
        try (JsonGenerator json = new JsonFactory().createGenerator(text))
        {
            json.writeStartObject();
            json.writeNumberField("pages_verified", pagesVerified);
            json.writeNumberField("wrong_bytes_served", wrongBytesServed);
            json.writeNumberField("pages_lost", pagesLost);
            json.writeNumberField("pages_destroyed_by_faults", pagesDestroyedByFaults);
            json.writeNumberField("pins_leaked", pinsLeaked);
            json.writeNumberField("reservations_leaked", reservationsLeaked);
            json.writeObjectFieldStart("faults");
            for (final Map.Entry<String, Long> fault : faults.entrySet())
            {
                json.writeNumberField(fault.getKey(), fault.getValue());
            }
            json.writeEndObject();
            json.writeNumberField("client_kills", clientKills);
            json.writeNumberField("client_stops", clientStops);
            json.writeNumberField("engine_restarts", engineRestarts);
            json.writeNumberField("hostile_refused", hostileRefused);
            json.writeObjectFieldStart("clients_by_language");
            for (final Map.Entry<String, LanguageFigures> language : clientsByLanguage.entrySet())
            {
                final LanguageFigures f = language.getValue();
                json.writeObjectFieldStart(language.getKey());
                json.writeBooleanField("ran", f.missing == null);
                if (f.missing != null)
                {
                    json.writeStringField("missing", f.missing);
                }
                json.writeNumberField("started", f.started);
                json.writeNumberField("killed", f.killed);
                json.writeNumberField("stopped", f.stopped);
                json.writeNumberField("pages_verified", f.pagesVerified);
                json.writeNumberField("wrong_bytes_served", f.wrongBytesServed);
                json.writeNumberField("pages_committed", f.pagesCommitted);
                json.writeNumberField("pages_acknowledged", f.pagesAcknowledged);
                json.writeNumberField("requests", f.requests);
                json.writeNumberField("commits_refused", f.refused);
                json.writeEndObject();
            }
            json.writeEndObject();
            json.writeFieldName("tiers");
            json.writeRawValue(tiersJson);
            json.writeNumberField("seed", seed);
            json.writeNumberField("duration_s", Math.round(durationSeconds * 10) / 10.0);
            json.writeNumberField("min_each", minEach);
            json.writeNumberField("overtime_s", Math.round(overtimeSeconds * 10) / 10.0);
            json.writeObjectFieldStart("short_of_min_each");
            for (final Map.Entry<String, Long> kind : shortOfMinEach.entrySet())
            {
                json.writeNumberField(kind.getKey(), kind.getValue());
            }
            json.writeEndObject();
            json.writeEndObject();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return text.toString();
    }

    /** @return the report for people, one figure a line */
    public String toText()
    {
        final StringBuilder out = new StringBuilder();
        out.append(String.format("kvtier chaos, seed %d, %.1f s%n", seed, durationSeconds));
        out.append(String.format("  pages verified            %,d%n", pagesVerified));
        out.append(String.format("  wrong bytes served        %,d   (must be 0)%n", wrongBytesServed));
        out.append(String.format("  pages acknowledged in L3  %,d%n", pagesAcknowledged));
        out.append(String.format("  pages lost                %,d   (must be 0)%n", pagesLost));
        out.append(String.format("  destroyed by faults       %,d%n", pagesDestroyedByFaults));
        out.append(String.format("  pins leaked               %,d   (must be 0)%n", pinsLeaked));
        out.append(String.format("  reservations leaked       %,d   (must be 0)%n", reservationsLeaked));
        out.append(String.format("  client kills %d, stops %d, engine restarts %d, hostile requests refused %d%n", clientKills, clientStops,
            engineRestarts, hostileRefused));
        clientsByLanguage.forEach((language, f) -> out.append(f.missing != null
            ? String.format("  %-7s clients did not run: %s%n", language, f.missing)
            : String.format("  %-7s clients: %d started, %d killed, %d stopped; %,d pages verified, %,d wrong, %,d committed, %,d acknowledged,"
                + " %,d requests%n", language, f.started, f.killed, f.stopped, f.pagesVerified, f.wrongBytesServed, f.pagesCommitted,
                f.pagesAcknowledged, f.requests)));
        if (minEach > 0)
        {
            out.append(String.format("  every kind at least %d times: %s, %.0f s past the duration%n", minEach,
                shortOfMinEach.isEmpty() ? "yes" : "no, short " + shortOfMinEach, overtimeSeconds));
        }
        out.append("  faults:");
        faults.forEach((kind, count) -> out.append(' ').append(kind).append('=').append(count));
        out.append(System.lineSeparator());
        out.append("  tiers: ").append(tiersJson).append(System.lineSeparator());
        notes.forEach(note -> out.append("  note: ").append(note).append(System.lineSeparator()));
        failures.forEach(failure -> out.append("  FAILED: ").append(failure).append(System.lineSeparator()));
        return out.toString();
    }
}
