package io.kvtier.client.python;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds the python3 that runs kvtier's engine adapters. They hand engines' tensors over as torch does, so an
 * interpreter that imports torch is preferred: the PATH's first python3, else Debian's {@code /usr/bin/python3}, where
 * {@code python3-torch} installs it (a venv first on the PATH often lacks it).
 */
public final class PythonInterpreter
{
    /** Where Debian's python3 is, the one its {@code python3-torch} package serves. */
    private static final Path SYSTEM_PYTHON = Path.of("/usr/bin/python3");

    private PythonInterpreter()
    {
    }

    /**
     * Asks each candidate in turn to {@code import torch}; a probe that has not answered in two minutes is a no.
     *
     * @return a python3 that imports torch if there is one; else the first python3 there is; else null
     * @throws IOException          if a probe cannot start
     * @throws InterruptedException if interrupted while a probe runs
     */
    public static String withTorch() throws IOException, InterruptedException
    {
        final List<String> candidates = new ArrayList<>();
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "python3")))
            {
                candidates.add(Path.of(dir, "python3").toString());
                break;
            }
        }
        if (Files.isExecutable(SYSTEM_PYTHON))
        {
            candidates.add(SYSTEM_PYTHON.toString());
        }
        for (final String candidate : candidates)
        {
            final Process probe = new ProcessBuilder(candidate, "-c", "import torch").redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (probe.waitFor(2, TimeUnit.MINUTES) && probe.exitValue() == 0)
            {
                return candidate;
            }
            probe.destroyForcibly();
        }
        return candidates.isEmpty() ? null : candidates.getFirst();
    }
}
