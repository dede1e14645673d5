package io.kvtier.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's exit-code table lists exactly the codes kvtier's help lists. */
class ExitCodeTableTest
{
    @Test
    void shouldListInTheReadmeEveryExitCodeTheHelpLists() throws IOException
    {
        final String readme = Files.readString(Path.of("..", "README.md"));
        final int start = readme.indexOf("| code | meaning |");
        assertThat(start).as("the README has an exit-code table").isPositive();
        final Matcher row = Pattern.compile("\\| (\\d+) \\|").matcher(readme.substring(start, readme.indexOf("\n\n", start)));
        final List<Integer> documented = row.results().map(result -> Integer.parseInt(result.group(1))).toList();
        assertThat(documented).containsExactlyElementsOf(ExitCode.list().keySet().stream().map(code -> Integer.parseInt(code.trim())).toList());
    }
}
