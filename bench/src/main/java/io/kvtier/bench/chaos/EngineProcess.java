package io.kvtier.bench.chaos;

import io.kvtier.client.pool.CountersReader;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PageMetadataReader;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PinTable;
import io.kvtier.engine.status.EngineCounter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The engine under test: {@code kvtier serve} in a process of its own on the campaign's config, its output
 * in a file, started, killed with SIGKILL and started again on the same L3 directories.
 */
final class EngineProcess
{
    private final List<String> serveCommand;
    private final Path config;
    private final Path pool;
    private final Path workDir;
    private Process process;
    private Path output;
    private String adminUrl;
    private int starts;

    /**
     * @param serveCommand the command that runs {@code kvtier serve}, without its options
     * @param config       the config file
     * @param pool         the pool file the config names
     * @param workDir      where each run's output goes
     */
    EngineProcess(final List<String> serveCommand, final Path config, final Path pool, final Path workDir)
    {
        this.serveCommand = serveCommand;
        this.config = config;
        this.pool = pool;
        this.workDir = workDir;
    }

    /**
     * Starts the engine and waits, at most a minute, until it says it serves.
     *
     * @param limits a command prefix that sets resource limits (prlimit), or empty
     * @throws IOException if it cannot be started or does not come up, naming its output
     */
    void start(final List<String> limits) throws IOException, InterruptedException
    {
        output = workDir.resolve("serve-" + starts++ + ".txt");
        final List<String> command = new ArrayList<>(limits);
        command.addAll(serveCommand);
        command.addAll(List.of("--config", config.toString()));
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true)
        {
            final String text = Files.readString(output);
            // The admin API's line follows the serving one (the campaign's config always sets admin.listen).
            if (text.contains("kvtier serving") && text.contains("kvtier admin API: ") && text.indexOf('\n', text.indexOf("kvtier admin API: ")) > 0)
            {
                final int at = text.indexOf("kvtier admin API: ");
                adminUrl = at < 0 ? null : text.substring(at + 18, text.indexOf('\n', at)).trim().split("\\s+")[0];
                return;
            }
            if (!process.isAlive() || System.nanoTime() > deadline)
            {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                throw new IOException("kvtier serve did not come up (" + (process.isAlive() ? "no \"kvtier serving\" in 60 s" : "exit "
                    + process.exitValue()) + "); its output, " + output + ":\n" + text);
            }
            Thread.sleep(20);
        }
    }

    /** SIGKILL: no shutdown hook, no close; whatever was in flight stays as it was. */
    void kill() throws InterruptedException
    {
        if (process != null)
        {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** SIGTERM, then SIGKILL if it has not stopped in 30 s. */
    void stop() throws InterruptedException
    {
        if (process != null && process.isAlive())
        {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                kill();
            }
        }
    }

    /** @return whether the engine process runs */
    boolean alive()
    {
        return process != null && process.isAlive();
    }

    /** @return its process id */
    long pid()
    {
        return process.pid();
    }

    /** @return the IPC socket clients connect to */
    Path socket()
    {
        return Path.of(pool + ".sock");
    }

    /** @return the admin API's URL, or null when it did not print one */
    String adminUrl()
    {
        return adminUrl;
    }

    /** @return the output of the current run */
    Path output()
    {
        return output;
    }

    /**
     * @param counter an engine counter
     * @return its value, read from the pool's counters region
     * @throws IOException if the pool cannot be mapped
     */
    long counter(final EngineCounter counter) throws IOException
    {
        try (MappedPool mapped = MappedPool.attach(pool))
        {
            return new CountersReader(mapped.counters()).valueOpaque(counter.id());
        }
    }

    /**
     * Pins and reservations still held in the pool: pages with a pin in their state word or the pin
     * table, and pages WRITING. Read once no client is attached and every lease has expired, each is a
     * leak.
     *
     * @return {pins leaked, reservations leaked}
     * @throws IOException if the pool cannot be mapped
     */
    long[] leaks() throws IOException
    {
        try (MappedPool mapped = MappedPool.attach(pool))
        {
            final PageMetadataReader metadata = mapped.metadata();
            final PinTable pins = mapped.pinTable();
            long pinned = 0;
            long writing = 0;
            for (int page = 0; page < metadata.pageCount(); page++)
            {
                final long word = metadata.stateWordVolatile(page);
                if (PageStateWord.pins(word) > 0 || pins.hasPinsVolatile(page))
                {
                    pinned++;
                }
                if (PageStateWord.state(word) == PageStateWord.WRITING)
                {
                    writing++;
                }
            }
            return new long[] {pinned, writing};
        }
    }
}
