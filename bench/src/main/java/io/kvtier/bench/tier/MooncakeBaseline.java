package io.kvtier.bench.tier;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The baseline of {@code kvtier bench tier --backend mooncake}: {@value #SOURCE}, a C program against
 * the same {@code libmooncake_store.so} making the same {@code batch_put_from} and {@code
 * batch_get_into} calls from a registered buffer, with the same page size, pages, queue depth and
 * batch bound. It is compiled at bench time from the copy inside this jar.
 *
 * <p>The topology it sets up, unless {@code --tier-setting master=HOST:PORT} names a master: a
 * {@code mooncake_master} on loopback, and the C program in {@code segment} mode as a separate
 * process holding the only segment; kvtier's tier and the C client both hold none
 * ({@code global-segment-size=0}), so on both sides every page crosses the transfer engine's TCP path
 * to and from that process (within one process Mooncake would take a memcpy shortcut).
 */
public final class MooncakeBaseline implements Baseline
{
    /** The C source, a resource beside this class. */
    public static final String SOURCE = "mooncake_baseline.c";

    private static final String NAME = "mooncake-c";
    private static final String MASTER = "master";
    private static final Duration LEASE_TTL = Duration.ofSeconds(10);
    /** As the tier's {@code setup-retries}: a master that is gone fails a client in seconds, not Mooncake's 90. */
    private static final Map<String, String> CLIENT_ENV = Map.of("MC_STORE_CLIENT_SETUP_RETRIES", "3");

    /**
     * One line of the C program's client output.
     *
     * @param op         write or read
     * @param pageBytes  object size
     * @param pages      objects
     * @param queueDepth objects in flight
     * @param batch      objects per call
     * @param bytes      bytes moved
     * @param nanos      from the first call to the last return
     * @param failures   objects that did not complete (put result not 0, get result not the page size)
     * @param firstError the first such result, or 0
     * @param mismatched slots whose bytes differ from what was written, after a read
     */
    public record Report(String op, long pageBytes, long pages, int queueDepth, int batch, long bytes, long nanos, long failures, long firstError,
                         long mismatched)
    {
        /** @return the figures, 10^9 × bytes / nanos */
        public Figures figures()
        {
            final double seconds = Math.max(1, nanos) / 1e9;
            return new Figures(bytes / seconds, pages / seconds);
        }
    }

    private final Path workspace;
    private final Path program;
    private final String missing;
    private final String version;
    private final String masterAddress;
    private final MooncakeMasterProcess master;
    private final Process segment;
    private final Map<String, String> tierSettings;
    private final String topology;

    private MooncakeBaseline(final Path workspace, final Path program, final String missing, final String version, final String masterAddress,
                             final MooncakeMasterProcess master, final Process segment, final Map<String, String> tierSettings, final String topology)
    {
        this.workspace = workspace;
        this.program = program;
        this.missing = missing;
        this.version = version;
        this.masterAddress = masterAddress;
        this.master = master;
        this.segment = segment;
        this.tierSettings = tierSettings;
        this.topology = topology;
    }

    /**
     * Compiles the C program, and, unless the user's settings name a master, starts a master and a
     * segment-holding process.
     *
     * @param userSettings the user's {@code --tier-setting}s
     * @param compiler     the C compiler's name or path, or null to leave the baseline out
     * @param segmentBytes the segment the holding process contributes
     * @param workspace    the run's own directory (the program, logs)
     * @param env          the environment ({@value MooncakeMasterProcess#HOME_ENV_NAME})
     * @return the baseline; its {@link #missing()} says why it gives no figures when it cannot
     * @throws IOException if no master can be had: none named and none can be started
     * @throws InterruptedException if interrupted while compiling or starting
     */
    public static MooncakeBaseline start(final Map<String, String> userSettings, final String compiler, final long segmentBytes, final Path workspace,
                                         final Map<String, String> env)
        throws IOException, InterruptedException
    {
        final Optional<Path> home = findHome(env);
        String missing = null;
        Path program = null;
        String version = null;
        if (compiler == null)
        {
            missing = "not asked for (--no-baseline)";
        }
        else if (home.isEmpty())
        {
            missing = noHome();
        }
        else
        {
            final Compiled compiled = compile(compiler, home.get(), workspace);
            program = compiled.program();
            missing = compiled.failure();
            version = compiled.version();
        }
        final Map<String, String> settings = new HashMap<>();
        final String userMaster = userSettings.get(MASTER);
        if (userMaster != null)
        {
            // The cluster's own segments hold the pages: both sides are clients without one.
            settings.put("global-segment-size", "0");
            if (home.isPresent() && !userSettings.containsKey("lib"))
            {
                settings.put("lib", MooncakeMasterProcess.library(home.get()).toString());
            }
            return new MooncakeBaseline(workspace, program, missing, version, userMaster, null, null, settings,
                "the master named by --tier-setting master=" + userMaster + " and its cluster's segments; kvtier's tier and the C client hold none");
        }
        if (home.isEmpty())
        {
            throw new IOException("--backend mooncake: " + noHome() + " so that the benchmark can start a master, or name a running one with"
                + " --tier-setting master=HOST:PORT");
        }
        settings.put("lib", MooncakeMasterProcess.library(home.get()).toString());
        final MooncakeMasterProcess master;
        try
        {
            master = MooncakeMasterProcess.start(home.get(), LEASE_TTL, workspace.resolve("mooncake_master.log"));
        }
        catch (final IOException ex)
        {
            throw new IOException("--backend mooncake: " + ex.getMessage(), ex);
        }
        settings.put(MASTER, master.address());
        settings.put("lease-ttl", LEASE_TTL.toSeconds() + "s");
        if (program == null)
        {
            // Without the C program there is no segment-holding process: the tier holds the segment itself.
            return new MooncakeBaseline(workspace, null, missing, null, master.address(), master, null, settings,
                "one process: a master on loopback, kvtier's tier holds the segment (Mooncake copies with memcpy, no TCP), no baseline");
        }
        final Process segment;
        try
        {
            segment = startSegment(program, master.address(), segmentBytes, workspace.resolve("segment.log"));
        }
        catch (final IOException ex)
        {
            master.close();
            throw ex;
        }
        settings.put("global-segment-size", "0");
        return new MooncakeBaseline(workspace, program, missing, version, master.address(), master, segment, settings,
            "three processes on loopback: mooncake_master, a C process holding the only segment (" + segmentBytes / (1 << 20)
                + " MiB), and the client (kvtier's tier, or the C client) with no segment: every page crosses TCP");
    }

    private record Compiled(Path program, String failure, String version)
    {
    }

    private static Compiled compile(final String compiler, final Path home, final Path workspace) throws IOException, InterruptedException
    {
        final Path source = workspace.resolve(SOURCE);
        try (InputStream in = MooncakeBaseline.class.getResourceAsStream(SOURCE))
        {
            if (in == null)
            {
                return new Compiled(null, SOURCE + " is not inside this build", null);
            }
            Files.copy(in, source);
        }
        final Path lib = home.resolve("lib");
        if (!Files.isRegularFile(lib.resolve(MooncakeMasterProcess.LIBRARY_FILE)) || !Files.isRegularFile(home.resolve("include/store_c.h")))
        {
            return new Compiled(null, home + " lacks lib/" + MooncakeMasterProcess.LIBRARY_FILE + " or include/store_c.h", null);
        }
        final Path program = workspace.resolve("mooncake_baseline");
        final List<String> command = List.of(compiler, "-O2", "-pthread", "-o", program.toString(), source.toString(), "-I" + home.resolve("include"),
            "-L" + lib, "-Wl,-rpath," + lib, "-lmooncake_store");
        final Exec compiled;
        try
        {
            compiled = exec(command, Map.of(), workspace.resolve("cc.log"), Duration.ofMinutes(2));
        }
        catch (final IOException ex)
        {
            return new Compiled(null, compiler + " cannot run (" + ex.getMessage() + "); install it with: apt-get install -y gcc", null);
        }
        if (compiled.exit() != 0)
        {
            return new Compiled(null, String.join(" ", command) + " failed: " + compiled.errors().strip(), null);
        }
        final Exec version = exec(List.of(compiler, "-dumpfullversion"), Map.of(), workspace.resolve("cc.log"), Duration.ofSeconds(30));
        return new Compiled(program, null, SOURCE + " built with " + compiler + " " + version.out().strip() + " against " + lib.resolve(MooncakeMasterProcess.LIBRARY_FILE));
    }

    private static Process startSegment(final Path program, final String master, final long segmentBytes, final Path log) throws IOException
    {
        final ProcessBuilder builder = new ProcessBuilder(program.toString(), "segment", master, Long.toString(segmentBytes)).redirectError(log.toFile());
        builder.environment().putAll(CLIENT_ENV);
        final Process process = builder.start();
        final String ready = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
        if (!"READY".equals(ready))
        {
            process.destroyForcibly();
            throw new IOException("the segment-holding process did not start (" + ready + "); its log " + log + ":\n" + Files.readString(log).strip());
        }
        return process;
    }

    /**
     * @param env the environment
     * @return the real install {@value MooncakeMasterProcess#HOME_ENV_NAME} names, when set (the baseline measures
     *         Mooncake's own client, so the project's test double never stands in for it)
     */
    static Optional<Path> findHome(final Map<String, String> env)
    {
        final String named = env.get(MooncakeMasterProcess.HOME_ENV_NAME);
        if (named != null && !named.isBlank())
        {
            return Optional.of(Path.of(named.trim()).toAbsolutePath());
        }
        return Optional.empty();
    }

    private static String noHome()
    {
        return "no Mooncake install: set " + MooncakeMasterProcess.HOME_ENV_NAME + " to one holding bin/mooncake_master, lib/" + MooncakeMasterProcess.LIBRARY_FILE
            + " and include/store_c.h";
    }

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public Optional<String> missing()
    {
        return Optional.ofNullable(missing);
    }

    @Override
    public String version()
    {
        return version;
    }

    @Override
    public String describe()
    {
        return SOURCE + ": batch_put_from / batch_get_into of the same pages from one registered buffer, queue depth = threads x batch"
            + " (batch = min(depth, max-batch)), each thread taking the next keys as its call returns; topology: " + topology;
    }

    @Override
    public Map<String, String> tierSettings()
    {
        return tierSettings;
    }

    /** @return the master both sides use */
    public String masterAddress()
    {
        return masterAddress;
    }

    @Override
    public Figures run(final Workload workload, final String op) throws IOException, InterruptedException
    {
        if (program == null)
        {
            throw new IllegalStateException("no baseline: " + missing);
        }
        final List<String> command = List.of(program.toString(), "client", masterAddress, op, Long.toString(workload.pageBytes()),
            Integer.toString(workload.pages()), Integer.toString(workload.queueDepth()), Integer.toString(workload.maxBatch()),
            String.format(Locale.ROOT, "%016x", workload.tag()));
        final Exec run = exec(command, CLIENT_ENV, workspace.resolve("client.log"), Duration.ofMinutes(10));
        if (run.exit() != 0)
        {
            throw new IOException(String.join(" ", command) + " exited with " + run.exit() + ": " + tail(run.errors()));
        }
        final Report report = parse(run.out());
        if (report.failures() != 0 || report.mismatched() != 0)
        {
            throw new IOException(SOURCE + " " + op + ": " + report.failures() + " of " + report.pages() + " pages failed (first result "
                + report.firstError() + "), " + report.mismatched() + " read back wrong: " + tail(run.errors()));
        }
        return report.figures();
    }

    /**
     * Reads the client's report: the first line of its output that is a JSON object (Mooncake logs on stderr, but a line on stdout
     * is tolerated).
     *
     * @param output the program's standard output
     * @return the report
     * @throws IOException if there is none, or it lacks a field
     */
    public static Report parse(final String output) throws IOException
    {
        for (final String line : output.split("\n"))
        {
            if (!line.startsWith("{"))
            {
                continue;
            }
            final Map<String, String> json;
            try
            {
                json = FlatJson.flatten(line);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IOException(SOURCE + " printed invalid JSON: " + line, ex);
            }
            try
            {
                return new Report(field(json, "op"), Long.parseLong(field(json, "page_bytes")), Long.parseLong(field(json, "pages")),
                    Integer.parseInt(field(json, "queue_depth")), Integer.parseInt(field(json, "batch")), Long.parseLong(field(json, "bytes")),
                    Long.parseLong(field(json, "nanos")), Long.parseLong(field(json, "failures")), Long.parseLong(field(json, "first_error")),
                    Long.parseLong(field(json, "mismatched")));
            }
            catch (final NumberFormatException ex)
            {
                throw new IOException(SOURCE + " printed a field that is not a number: " + line, ex);
            }
        }
        throw new IOException(SOURCE + " printed no report: " + output.strip());
    }

    private static String field(final Map<String, String> json, final String name) throws IOException
    {
        final String value = json.get(name);
        if (value == null)
        {
            throw new IOException(SOURCE + "'s report lacks " + name + ": " + json);
        }
        return value;
    }

    @Override
    public void close() throws IOException
    {
        try
        {
            if (segment != null)
            {
                // Closing its standard input is the segment holder's signal to unmount and exit.
                segment.getOutputStream().close();
                if (!segment.waitFor(20, TimeUnit.SECONDS))
                {
                    segment.destroyForcibly();
                }
            }
        }
        catch (final InterruptedException ex)
        {
            segment.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        finally
        {
            if (master != null)
            {
                master.close();
            }
        }
    }

    private record Exec(int exit, String out, String errors)
    {
    }

    /** Runs a command to its end; its stderr goes to a file, so that a chatty one never fills a pipe nobody reads. */
    private static Exec exec(final List<String> command, final Map<String, String> env, final Path errors, final Duration timeout)
        throws IOException, InterruptedException
    {
        final ProcessBuilder builder = new ProcessBuilder(command).redirectError(errors.toFile());
        builder.environment().putAll(env);
        final Process process = builder.start();
        try
        {
            process.getOutputStream().close();
            final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                throw new IOException(String.join(" ", command) + " did not finish within " + timeout);
            }
            return new Exec(process.exitValue(), out, Files.readString(errors));
        }
        finally
        {
            if (process.isAlive())
            {
                process.destroyForcibly();
            }
        }
    }

    private static String tail(final String text)
    {
        final String[] lines = text.strip().split("\n");
        return String.join("\n", java.util.Arrays.asList(lines).subList(Math.max(0, lines.length - 10), lines.length));
    }
}
