package io.kvtier.bench.tier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** fio's job line and the reading of its JSON report, on reports captured from fio 3.33 on this project's machine. */
class FioTest
{
    private static String sample(final String name) throws IOException
    {
        try (InputStream in = FioTest.class.getResourceAsStream(name))
        {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void shouldReadTheReadDirectionOfACapturedReport() throws IOException
    {
        final Fio.Figures figures = Fio.parse(sample("fio-3.33-read.json"), "read");
        assertThat(figures.version()).isEqualTo("fio-3.33");
        assertThat(figures.bytesPerSecond()).isEqualTo(493_447_529.0);
        assertThat(figures.iops()).isCloseTo(1882.352941, within(1e-6));
        assertThat(figures.bytes()).isEqualTo(8_388_608);
        assertThat(figures.runtimeMillis()).isEqualTo(17);
    }

    @Test
    void shouldReadTheWriteDirectionAndSkipNotesPrintedBeforeTheJson() throws IOException
    {
        final Fio.Figures figures = Fio.parse("note: both iodepth >= 1 and synchronous I/O engine are selected\n" + sample("fio-3.33-write.json"), "write");
        assertThat(figures.bytesPerSecond()).isEqualTo(1_048_576_000.0);
        assertThat(figures.iops()).isEqualTo(4000.0);
    }

    @Test
    void shouldRefuseAReportWithoutJsonOrWithoutTheJob()
    {
        assertThatThrownBy(() -> Fio.parse("fio: failed to open file", "read")).isInstanceOf(IOException.class).hasMessageContaining("no JSON");
        assertThatThrownBy(() -> Fio.parse("{\"fio version\":\"fio-3.33\",\"jobs\":[]}", "read")).isInstanceOf(IOException.class)
            .hasMessageContaining("jobs.0.read");
        assertThatThrownBy(() -> Fio.parse("{\"jobs\":[", "read")).isInstanceOf(IOException.class).hasMessageContaining("not valid JSON");
    }

    @Test
    void shouldAskFioForTheCaseWithIoUringAndDirectIo()
    {
        final Fio.Job job = new Fio.Job("fio", Path.of("/tmp/x/fio.dat"), 1 << 20, 65536, 16, "write");
        assertThat(job.command()).contains("fio", "--filename=/tmp/x/fio.dat", "--size=1048576", "--bs=65536", "--iodepth=16",
            "--ioengine=io_uring", "--direct=1", "--rw=write", "--output-format=json");
    }

    @Test
    void shouldLayOutItsFileWithAnUntimedJobAndWriteOverItInPlace(@TempDir final Path dir) throws IOException, InterruptedException
    {
        Files.writeString(dir.resolve("write.json"), sample("fio-3.33-write.json"));
        Files.writeString(dir.resolve("read.json"), sample("fio-3.33-read.json"));
        final Path log = dir.resolve("jobs.log");
        // Stands in for fio: logs whether the job's file was there already, makes it when not, and prints a captured report.
        final Path fake = dir.resolve("fake-fio");
        Files.writeString(fake, String.join("\n",
            "#!/bin/sh",
            "for a in \"$@\"; do case \"$a\" in --filename=*) f=\"${a#--filename=}\";; --size=*) n=\"${a#--size=}\";; --rw=*) op=\"${a#--rw=}\";; esac; done",
            "if [ -e \"$f\" ]; then echo \"$op over\" >> '" + log + "'; else echo \"$op new\" >> '" + log + "'; truncate -s \"$n\" \"$f\"; fi",
            "cat '" + dir + "'/\"$op\".json",
            ""));
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        final Path work = Files.createDirectory(dir.resolve("work"));
        try (Fio fio = new Fio(fake.toString(), work))
        {
            final Baseline.Workload small = new Baseline.Workload(65536, 16, 4, 256, 1);
            assertThat(fio.run(small, "write").bytesPerSecond()).as("the timed job's figures").isEqualTo(1_048_576_000.0);
            fio.run(small, "read");
            fio.run(small, "write");
            fio.run(new Baseline.Workload(65536, 32, 4, 256, 2), "write");
        }
        assertThat(Files.readAllLines(log)).as("each job, and whether its file was there").containsExactly(
            "write new", "write over",
            "read over",
            "write over",
            "write new", "write over");
    }

    @Test
    void shouldNameTheInstallCommandWhenFioIsMissing()
    {
        assertThat(Fio.missing("/nonexistent/bin/fio")).hasValueSatisfying(reason ->
            assertThat(reason).startsWith("/nonexistent/bin/fio not found; install it with: ").contains("install -y fio"));
        assertThat(Fio.missing("sh")).as("a program on the PATH").isEmpty();
    }

    @Test
    void shouldFlattenNestedObjectsAndArraysToDottedPaths()
    {
        final Map<String, String> flat = FlatJson.flatten("{\"a\":{\"b\":[1,{\"c\":\"x\"},null]},\"d e\":true,\"f\":{},\"g\":2.5}");
        assertThat(flat.keySet()).containsExactly("a.b.0", "a.b.1.c", "a.b.2", "d e", "g");
        assertThat(flat).containsEntry("a.b.0", "1").containsEntry("a.b.1.c", "x").containsEntry("a.b.2", null).containsEntry("d e", "true")
            .containsEntry("g", "2.5");
        assertThatThrownBy(() -> FlatJson.flatten("{\"a\":")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FlatJson.flatten("3")).isInstanceOf(IllegalArgumentException.class);
    }
}
