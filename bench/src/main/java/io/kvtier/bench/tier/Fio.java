package io.kvtier.bench.tier;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * fio, the baseline of {@code kvtier bench tier} for directory backends: one job per case with the
 * case's file size, block size and queue depth, {@code ioengine=io_uring}, {@code direct=1},
 * sequential {@code rw=write} or {@code rw=read} on one file, and its {@code --output-format=json}
 * report read back.
 *
 * <p>The file of a page size is laid out by one untimed write job, the first time a case needs it, and
 * every timed write then goes over it in place: space fio has written before, as the tier's timed
 * writes go into the space its previous run's pages left (the benchmark removes them, untimed). A new
 * file per run would put fio's writes into blocks just freed (on tmpfs, memory just freed) and the
 * tier's into space it never wrote, which on this project's VM measured the memory's first touch, not
 * either side.
 */
public final class Fio implements Baseline
{
    /** What the JSON's {@code fio_job} and the text say fio does. */
    public static final String JOB_DESCRIPTION =
        "ioengine=io_uring direct=1 rw=write|read (sequential, one file of the case's bytes per page size, laid out by an untimed"
            + " write job and written over in place by every timed one) bs=page iodepth=queue depth";

    /** What fio is asked for: the fio binary, file, bytes, block size, depth and direction. */
    public record Job(String binary, Path file, long bytes, long blockBytes, int queueDepth, String op)
    {
        /** @return fio's command line for this job */
        public List<String> command()
        {
            return List.of(binary, "--name=kvtier-bench-" + op, "--filename=" + file, "--size=" + bytes, "--bs=" + blockBytes,
                "--iodepth=" + queueDepth, "--ioengine=io_uring", "--direct=1", "--rw=" + op, "--numjobs=1", "--thread",
                "--output-format=json");
        }
    }

    /**
     * What fio reported for one job.
     *
     * @param version        fio's version, e.g. {@code fio-3.33}
     * @param bytesPerSecond {@code bw_bytes} of the job's direction
     * @param iops           {@code iops} of the job's direction
     * @param bytes          {@code io_bytes} it moved
     * @param runtimeMillis  its {@code runtime}
     */
    public record Figures(String version, double bytesPerSecond, double iops, long bytes, long runtimeMillis)
    {
    }

    private final String binary;
    private final Path directory;
    private final String missing;
    private String version;

    /**
     * @param binary    fio's name or path, or null to leave fio out
     * @param directory where its file goes
     */
    public Fio(final String binary, final Path directory)
    {
        this.binary = binary;
        this.directory = directory;
        this.missing = binary == null ? "not asked for (--no-fio)" : missing(binary).orElse(null);
    }

    @Override
    public String name()
    {
        return "fio";
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
        return JOB_DESCRIPTION;
    }

    @Override
    public Baseline.Figures run(final Workload workload, final String op) throws IOException, InterruptedException
    {
        final Path file = directory.resolve("fio-" + workload.pageBytes() + ".dat");
        final Job job = new Job(binary, file, workload.bytes(), workload.pageBytes(), workload.queueDepth(), op);
        if (!Files.isRegularFile(file) || Files.size(file) != workload.bytes())
        {
            // Untimed: the file written once whole, so that the timed jobs write over space written before, as the tier's writes do.
            Files.deleteIfExists(file);
            run(new Job(binary, file, workload.bytes(), workload.pageBytes(), workload.queueDepth(), "write"));
        }
        final Figures figures = run(job);
        version = figures.version();
        return new Baseline.Figures(figures.bytesPerSecond(), figures.iops());
    }

    /**
     * @param binary fio's name or path
     * @return why fio cannot be run (with the command that installs it), or empty when it can
     */
    public static Optional<String> missing(final String binary)
    {
        final boolean found = binary.contains("/") ? Files.isExecutable(Path.of(binary)) : onPath(binary);
        return found ? Optional.empty() : Optional.of(binary + " not found; install it with: " + installCommand());
    }

    private static boolean onPath(final String name)
    {
        final String path = System.getenv("PATH");
        if (path == null)
        {
            return false;
        }
        for (final String dir : path.split(File.pathSeparator))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name)))
            {
                return true;
            }
        }
        return false;
    }

    /** @return the command that installs fio on this machine's distribution family (Debian/Ubuntu, else Fedora/RHEL) */
    public static String installCommand()
    {
        final String sudo = "root".equals(System.getProperty("user.name")) ? "" : "sudo ";
        if (Files.isExecutable(Path.of("/usr/bin/apt-get")))
        {
            return sudo + "apt-get update && " + sudo + "apt-get install -y fio";
        }
        if (Files.isExecutable(Path.of("/usr/bin/dnf")))
        {
            return sudo + "dnf install -y fio";
        }
        return sudo + "apt-get install -y fio (Debian, Ubuntu) or " + sudo + "dnf install -y fio (Fedora, RHEL)";
    }

    /**
     * Runs one job and reads its report.
     *
     * @param job what to run
     * @return fio's figures
     * @throws IOException if fio cannot start, fails, or prints no report
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static Figures run(final Job job) throws IOException, InterruptedException
    {
        // fio's notes and errors go to a file, so a chatty stderr can never fill a pipe nobody reads.
        final Path errors = Files.createTempFile("kvtier-fio-", ".err");
        try
        {
            final Process process = new ProcessBuilder(job.command()).redirectError(errors.toFile()).start();
            try
            {
                process.getOutputStream().close();
                final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0)
                {
                    throw new IOException("fio failed (" + (process.isAlive() ? "still running" : "exit code " + process.exitValue()) + "): "
                        + String.join(" ", job.command()) + System.lineSeparator() + Files.readString(errors).strip());
                }
                return parse(out, job.op());
            }
            finally
            {
                if (process.isAlive())
                {
                    process.destroyForcibly();
                }
            }
        }
        finally
        {
            Files.deleteIfExists(errors);
        }
    }

    /**
     * Reads one job's figures from fio's JSON report. fio may print notes before the JSON; they are skipped.
     *
     * @param report fio's {@code --output-format=json} output
     * @param op     {@code read} or {@code write}: which direction of the first job to read
     * @return its figures
     * @throws IOException if the report holds no job or not that direction's figures
     */
    public static Figures parse(final String report, final String op) throws IOException
    {
        final String direction = op.toLowerCase(Locale.ROOT).endsWith("read") ? "read" : "write";
        final int start = report.indexOf('{');
        if (start < 0)
        {
            throw new IOException("fio printed no JSON report: " + report.strip());
        }
        final Map<String, String> json;
        try
        {
            json = FlatJson.flatten(report.substring(start));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException("fio's report is not valid JSON: " + ex.getMessage(), ex);
        }
        final String prefix = "jobs.0." + direction + ".";
        final String bandwidth = json.get(prefix + "bw_bytes");
        final String iops = json.get(prefix + "iops");
        final String bytes = json.get(prefix + "io_bytes");
        final String runtime = json.get(prefix + "runtime");
        if (bandwidth == null || iops == null || bytes == null || runtime == null)
        {
            throw new IOException("fio's report has no " + prefix + "{bw_bytes,iops,io_bytes,runtime}");
        }
        if (json.containsKey("jobs.0.error") && !"0".equals(json.get("jobs.0.error")))
        {
            throw new IOException("fio's job reports error " + json.get("jobs.0.error"));
        }
        return new Figures(json.getOrDefault("fio version", "fio"), Double.parseDouble(bandwidth), Double.parseDouble(iops), Long.parseLong(bytes),
            Long.parseLong(runtime));
    }
}
