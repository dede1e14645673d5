package io.kvtier.engine;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.engine.tier.TinyPlugin;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.TierConfigException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tiers from plugins in plugins.dir, started by a running engine next to those on the class path. */
class EnginePluginDirectoryTest
{
    @TempDir
    Path scratch;

    @Test
    void shouldRunTwoPluginsThatBundleConflictingVersionsOfOneHelperSideBySide() throws Exception
    {
        final Path plugins = Files.createDirectories(scratch.resolve("plugins"));
        // One plugin as a directory of jars, one as a bare jar: both layouts of plugins.dir.
        TinyPlugin.ofType("alpha").helperVersion("1.0").buildJar(plugins.resolve("alpha").resolve("alpha-tier.jar"), scratch);
        TinyPlugin.ofType("beta").helperVersion("2.0").buildJar(plugins.resolve("beta.jar"), scratch);
        final Map<String, String> settings = EngineFixture.settings("local", 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        settings.put("tier.a.type", "alpha");
        settings.put("tier.b.type", "beta");
        try (Engine engine = EngineFixture.start(settings))
        {
            assertThat(engine.tiers()).extracting(TierHandle::type).containsExactly("scripted", "alpha", "beta");
            final String rest = ", engine visible: false, own context loader at create: true, spi " + SpiVersion.current();
            assertThat(engine.tiers().get(1).tier().describe()).isEqualTo("helper 1.0" + rest);
            assertThat(engine.tiers().get(2).tier().describe()).isEqualTo("helper 2.0" + rest);
            assertThat(Thread.currentThread().getContextClassLoader()).as("the starting thread's loader, given back")
                .isSameAs(EnginePluginDirectoryTest.class.getClassLoader());
            assertThat(engine.tiers().get(1).tier().getClass().getClassLoader())
                .isNotSameAs(engine.tiers().get(2).tier().getClass().getClassLoader());
        }
    }

    @Test
    void shouldTrustTiersOnTheClassPathButNotFromPluginsDirUnlessTheSettingSaysSo() throws Exception
    {
        final Path plugins = Files.createDirectories(scratch.resolve("plugins"));
        TinyPlugin.ofType("alpha").buildJar(plugins.resolve("alpha.jar"), scratch);
        final Map<String, String> settings = EngineFixture.settings("local", 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        settings.put("tier.a.type", "alpha");
        settings.put("tier.b.type", "alpha");
        settings.put("tier.b.trusted", "true");
        settings.put("tier.c.type", "scripted");
        settings.put("tier.c.trusted", "false");
        try (Engine engine = EngineFixture.start(settings))
        {
            assertThat(engine.tiers()).extracting(TierHandle::name).containsExactly("local", "a", "b", "c");
            assertThat(engine.tiers()).extracting(TierHandle::trusted).containsExactly(true, false, true, false);
            assertThat(ScriptedTier.get("local").context.transferMemory()).as("a trusted tier may register the pool").isPresent();
            assertThat(ScriptedTier.get("c").context.transferMemory()).as("an untrusted one is offered no memory to register").isEmpty();
        }
        settings.put("tier.b.trusted", "yes");
        assertThatThrownBy(() -> EngineFixture.start(settings).close())
            .isInstanceOf(ConfigException.class)
            .hasMessage("invalid tier.b.trusted = \"yes\": expected true or false");
    }

    @Test
    void shouldRefuseAtStartATierWhosePluginWasBuiltForAnotherMajorAndRunWithoutItWhenNoTierUsesIt() throws Exception
    {
        final Path plugins = Files.createDirectories(scratch.resolve("plugins"));
        final Path jar = TinyPlugin.ofType("future").spiVersion("new SpiVersion(SpiVersion.MAJOR + 1, 0)").buildJar(plugins.resolve("future.jar"), scratch);
        final Map<String, String> settings = EngineFixture.settings("local", 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        settings.put("tier.far.type", "future");
        assertThatThrownBy(() -> EngineFixture.start(settings).close())
            .isInstanceOf(ConfigException.class)
            .hasMessage("invalid tier.far.type = \"future\": tier plugin 'future' (plugin jar " + jar + ") was built for SPI "
                + (SpiVersion.MAJOR + 1) + ".0 but this engine runs SPI " + SpiVersion.current() + ", which takes plugins built for SPI "
                + SpiVersion.MAJOR + ".0 to " + SpiVersion.current() + " (the same major version, a minor version no newer); rebuild the"
                + " plugin against kvtier-spi " + SpiVersion.current());
        assertThat(EngineFixture.poolPath(settings)).doesNotExist();

        // The same directory with no tier of that type: the refused plugin does not stop the others.
        settings.remove("tier.far.type");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            assertThat(engine.tiers()).extracting(TierHandle::name).containsExactly("local");
            EngineFixture.keys(session, 7, 2);
            assertThat(EngineFixture.write(session, 0, 2)).isEqualTo(2);
        }
    }

    @Test
    void shouldFailTheStartWhenAPluginRepeatsATypeOfTheClassPath() throws Exception
    {
        final Path plugins = Files.createDirectories(scratch.resolve("plugins"));
        final Path jar = TinyPlugin.ofType("posix").buildJar(plugins.resolve("posix.jar"), scratch);
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        assertThatThrownBy(() -> EngineFixture.start(settings).close())
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("tier type 'posix' is provided twice: by the class path (")
            .hasMessageContaining("and by plugin jar " + jar + "; remove one of them");
    }

    /** @return plugins that misbehave at start: what they do first in which method, a class left out of the jar, and what the error says they did */
    static Stream<Arguments> pluginsThatFailAtStart()
    {
        final String at = " (at com.example.tiny.broken.Provider";
        return Stream.of(
            Arguments.of("create", "if (true) return null;", null,
                "its provider com.example.tiny.broken.Provider returned null from create(), which must return a ready tier or throw"),
            Arguments.of("create", "if (true) throw new IllegalStateException(\"cannot reach the store\");", null,
                "create() threw java.lang.IllegalStateException: cannot reach the store" + at + ".create("),
            Arguments.of("create", "if (true) throw new AssertionError(\"invariant\");", null,
                "create() threw java.lang.AssertionError: invariant" + at + ".create("),
            Arguments.of("create", "class Down { int go(final int n) { return go(n + 1) + 1; } } new Down().go(0);", null,
                "create() threw java.lang.StackOverflowError" + at + "$1Down.go("),
            Arguments.of("create", "com.example.shared.Helper.version();", "com.example.shared.Helper",
                "create() threw java.lang.NoClassDefFoundError: com/example/shared/Helper" + at + ".create("),
            Arguments.of("capabilities", "if (true) throw new UnsupportedOperationException(\"later\");", null,
                "capabilities() threw java.lang.UnsupportedOperationException: later" + at + "$1.capabilities("),
            Arguments.of("capabilities", "if (true) return null;", null, "capabilities() returned null"),
            Arguments.of("describe", "if (true) throw new AssertionError(\"no words\\nfor it\");", null,
                "describe() threw java.lang.AssertionError: no words for it" + at + "$1.describe("));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("pluginsThatFailAtStart")
    void shouldRefuseToStartWithOneLineNamingTheTierItsTypeItsJarAndWhatItsPluginDid(final String method, final String statement,
                                                                                      final String leftOut, final String what) throws Exception
    {
        final Path plugins = Files.createDirectories(scratch.resolve("plugins"));
        final Path closed = scratch.resolve("closed");
        final TinyPlugin plugin = TinyPlugin.ofType("broken").first(method, statement)
            .first("close", "try { java.nio.file.Files.writeString(java.nio.file.Path.of(\"" + closed + "\"), \"closed\"); }"
                + " catch (final java.io.IOException ex) { throw new java.io.UncheckedIOException(ex); }");
        if (leftOut != null)
        {
            plugin.without(leftOut);
        }
        final Path jar = plugin.buildJar(plugins.resolve("broken.jar"), scratch);
        final Map<String, String> settings = EngineFixture.settings("local", 16);
        settings.put(EngineSettings.PLUGINS_DIR.key(), plugins.toString());
        settings.put("tier.far.type", "broken");
        assertThatThrownBy(() -> EngineFixture.start(settings).close())
            .isInstanceOf(TierConfigException.class)
            .hasMessageStartingWith("tier far (type broken, from plugin jar " + jar + ") failed to start: " + what)
            .hasMessageNotContaining("\n");
        assertThat(EngineFixture.poolPath(settings)).doesNotExist();
        assertThat(closed).as("the tier it created, closed again").matches(file -> Files.exists(file) == !method.equals("create"));
    }
}
