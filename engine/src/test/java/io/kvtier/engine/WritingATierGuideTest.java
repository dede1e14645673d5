package io.kvtier.engine;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.tier.PluginJars;
import io.kvtier.spi.StorageTierProvider;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * The third-party plugin that docs/writing-a-tier.md walks through, built from the very files under
 * docs/examples/memory-tier that the guide quotes: compiled against the SPI alone, passed through the
 * conformance kit, and loaded from a plugin directory into a running engine as its L3.
 */
class WritingATierGuideTest
{
    private static final Path GUIDE = Path.of("..", "docs", "writing-a-tier.md");
    private static final Path EXAMPLE = Path.of("..", "docs", "examples", "memory-tier");
    private static final String CONTRACT_TEST = "com.example.kvtier.memory.MemoryTierContractTest";

    @TempDir
    static Path build;

    private static Path mainClasses;
    private static Path testClasses;

    @BeforeAll
    static void buildTheExampleAsItsAuthorWould() throws IOException
    {
        // Main sources see the SPI and the JDK only: a plugin needs nothing else of kvtier.
        mainClasses = PluginJars.compile(sources(EXAMPLE.resolve("src/main/java")), List.of(), build.resolve("classes"));
        final List<Path> testPath = new ArrayList<>(List.of(mainClasses, PluginJars.locationOf(io.kvtier.tck.AbstractStorageTierContractTest.class)));
        for (final String name : List.of("org.junit.jupiter.api.Test", "org.assertj.core.api.Assertions", "org.opentest4j.AssertionFailedError",
            "org.apiguardian.api.API"))
        {
            testPath.add(PluginJars.locationOf(loadable(name)));
        }
        testClasses = PluginJars.compile(sources(EXAMPLE.resolve("src/test/java")), testPath, build.resolve("test-classes"));
    }

    @Test
    void shouldPassTheConformanceKit() throws Exception
    {
        try (URLClassLoader loader = new URLClassLoader(new URL[] {mainClasses.toUri().toURL(), testClasses.toUri().toURL()},
            WritingATierGuideTest.class.getClassLoader()))
        {
            final SummaryGeneratingListener listener = new SummaryGeneratingListener();
            LauncherFactory.create().execute(request().selectors(selectClass(loader.loadClass(CONTRACT_TEST))).build(), listener);
            final TestExecutionSummary summary = listener.getSummary();
            assertThat(summary.getTotalFailureCount())
                .as("contract tests the example fails: %s", summary.getFailures().stream()
                    .map(f -> f.getTestIdentifier().getDisplayName() + ": " + f.getException())
                    .collect(Collectors.joining("; ")))
                .isZero();
            assertThat(summary.getTestsSucceededCount()).as("contract tests passed").isGreaterThanOrEqualTo(20);
        }
    }

    @Test
    void shouldServeAPageBackByteExactFromThePluginLoadedFromAPluginDirectory() throws Exception
    {
        final Path plugins = build.resolve("plugins");
        final Map<String, String> services = new LinkedHashMap<>();
        final Path resources = EXAMPLE.resolve("src/main/resources");
        try (Stream<Path> files = Files.walk(resources))
        {
            for (final Path file : files.filter(Files::isRegularFile).toList())
            {
                services.put(resources.relativize(file).toString().replace('\\', '/'), Files.readString(file));
            }
        }
        PluginJars.jar(mainClasses, Map.of(), services, plugins.resolve("memory-tier").resolve("kvtier-memory-tier-1.0.0.jar"));

        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        settings.put("tier.heap.type", "memory");
        settings.put("tier.heap.capacity", "1MiB");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            assertThat(engine.tiers().getFirst().tier().getClass().getClassLoader())
                .as("the tier's loader").isNotSameAs(StorageTierProvider.class.getClassLoader());
            keys(session, 90, 4);
            assertThat(write(session, 0, 4)).isEqualTo(4);
            session.flush();
            assertThat(session.evict(0, 4)).isEqualTo(4);
            assertThat(session.acquire(0, 4)).isEqualTo(4);
            for (int i = 0; i < 4; i++)
            {
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_HIT_PAGES)).isEqualTo(4);
        }
    }

    @Test
    void shouldQuoteOnlyTheExampleItBuildsInTheGuide() throws IOException
    {
        final String guide = Files.readString(GUIDE);
        final List<String> files = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(EXAMPLE))
        {
            for (final Path file : walk.filter(Files::isRegularFile).toList())
            {
                files.add(Files.readString(file));
            }
        }
        final Matcher block = Pattern.compile("```(java|xml)\\n(.*?)```", Pattern.DOTALL).matcher(guide);
        int quoted = 0;
        while (block.find())
        {
            final String code = block.group(2);
            assertThat(files).as("a file of %s quoted by the guide as:%n%s", EXAMPLE, code).anyMatch(text -> text.contains(code));
            quoted++;
        }
        assertThat(quoted).as("code blocks the guide quotes from the example").isGreaterThanOrEqualTo(4);
    }

    @Test
    void shouldBuildTheExampleAgainstThisVersionOfKvtier() throws IOException
    {
        final String kvtierVersion = firstMatch(Files.readString(Path.of("..", "pom.xml")), "<artifactId>kvtier-parent</artifactId>\\s*<version>([^<]+)</version>");
        assertThat(firstMatch(Files.readString(EXAMPLE.resolve("pom.xml")), "<kvtier.version>([^<]+)</kvtier.version>")).isEqualTo(kvtierVersion);
    }

    @Test
    void shouldKeepTheSpiAndTheKitFreeOfTheEnginesOwnModules() throws IOException
    {
        // A plugin author depends on these two alone; whatever they depend on of ours, a plugin drags in.
        final Pattern ourArtifact = Pattern.compile("<groupId>io\\.kvtier</groupId>\\s*<artifactId>([^<]+)</artifactId>");
        assertThat(ourArtifacts(ourArtifact, Path.of("..", "spi", "pom.xml"))).as("kvtier dependencies of spi").isEmpty();
        assertThat(ourArtifacts(ourArtifact, Path.of("..", "tck", "pom.xml"))).as("kvtier dependencies of tck").containsExactly("kvtier-spi");
    }

    private static List<String> ourArtifacts(final Pattern ourArtifact, final Path pom) throws IOException
    {
        final String text = Files.readString(pom);
        final Matcher dependency = ourArtifact.matcher(text.substring(text.indexOf("</parent>")));
        final List<String> artifacts = new ArrayList<>();
        while (dependency.find())
        {
            artifacts.add(dependency.group(1));
        }
        return artifacts;
    }

    private static String firstMatch(final String text, final String regex)
    {
        final Matcher matcher = Pattern.compile(regex).matcher(text);
        assertThat(matcher.find()).as("%s found", regex).isTrue();
        return matcher.group(1);
    }

    private static Map<String, String> sources(final Path root) throws IOException
    {
        final Map<String, String> sources = new LinkedHashMap<>();
        try (Stream<Path> files = Files.walk(root))
        {
            for (final Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList())
            {
                final String relative = root.relativize(file).toString();
                sources.put(relative.substring(0, relative.length() - ".java".length()).replace('/', '.'), Files.readString(file));
            }
        }
        return sources;
    }

    private static Class<?> loadable(final String name)
    {
        try
        {
            return Class.forName(name, false, WritingATierGuideTest.class.getClassLoader());
        }
        catch (final ClassNotFoundException ex)
        {
            throw new IllegalStateException(name + " is not on the test class path", ex);
        }
    }
}
