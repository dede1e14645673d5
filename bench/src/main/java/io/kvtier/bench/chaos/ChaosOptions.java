package io.kvtier.bench.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * What a campaign runs: for how long, from which seed, where, with which clients, and how to start the
 * engine.
 *
 * @param duration        the faulty phase's length (the healed verification follows it)
 * @param seed            the seed every decision is drawn from
 * @param workDir         the directory the campaign owns: config, L3 directories, logs, replay file
 * @param clients         client languages asked for (java, c, python)
 * @param clientProcesses honest client processes at any time, the languages that run taking the slots in turn
 * @param wrongWriter     test only: the language (java, c, python) whose first client commits wrong bytes on purpose,
 *                        to prove the check can fail; null for none
 * @param serveCommand    the command that runs {@code kvtier serve}, without its options
 * @param minEach         how often every fault kind must have been injected before the faulty phase ends: past
 *                        {@code duration} it goes on, drawing only the kinds still short, until each has been injected
 *                        this often or {@code overtime} has passed too (0: the duration alone decides)
 * @param overtime        the most the faulty phase may run past {@code duration} to reach {@code minEach}
 */
public record ChaosOptions(Duration duration, long seed, Path workDir, List<String> clients, int clientProcesses, String wrongWriter,
    List<String> serveCommand, int minEach, Duration overtime)
{
}
