package io.kvtier.engine.tier;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.spi.SpiVersion;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How plugins are found in a plugin directory, which versions are refused, and how each layout mistake is reported. */
class TierPluginsTest
{
    private static final SpiVersion ENGINE = SpiVersion.current();

    @TempDir
    Path scratch;

    private Path pluginsDir() throws IOException
    {
        return Files.createDirectories(scratch.resolve("plugins"));
    }

    private static EngineConfig.TierSettings tier(final String name, final String type)
    {
        return new EngineConfig.TierSettings(name, type, Map.of());
    }

    @Test
    void shouldRefuseAPluginBuiltForAnotherMajorVersionNamingBothVersionsAndThePlugin() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("future").spiVersion("new SpiVersion(SpiVersion.MAJOR + 1, 0)").buildJar(dir.resolve("future.jar"), scratch);
        try (TierPlugins plugins = TierPlugins.discover(dir))
        {
            assertThat(plugins.providers()).doesNotContainKey("future").containsKey("scripted");
            assertThatThrownBy(() -> plugins.provider(tier("far", "future")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("invalid tier.far.type = \"future\"")
                .hasMessageContaining("built for SPI " + (ENGINE.major() + 1) + ".0")
                .hasMessageContaining("this engine runs SPI " + ENGINE)
                .hasMessageContaining(jar.toString())
                .extracting(ex -> ((ConfigException)ex).key()).isEqualTo("tier.far.type");
        }
    }

    @Test
    void shouldRefuseAPluginBuiltForANewerMinorVersion() throws IOException
    {
        final Path dir = pluginsDir();
        TinyPlugin.ofType("newer").spiVersion("new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR + 1)").buildJar(dir.resolve("newer.jar"), scratch);
        try (TierPlugins plugins = TierPlugins.discover(dir))
        {
            assertThat(plugins.refused()).containsOnlyKeys("newer");
            assertThat(plugins.refused().get("newer")).contains("built for SPI " + ENGINE.major() + "." + (ENGINE.minor() + 1));
        }
    }

    @Test
    void shouldReadTheVersionFromTheManifestWhenTheProviderDeclaresNone() throws IOException
    {
        final Path dir = pluginsDir();
        TinyPlugin.ofType("stamped").spiVersion(null).manifest(SpiVersion.MANIFEST_ATTRIBUTE, ENGINE.toString())
            .buildJar(dir.resolve("stamped.jar"), scratch);
        TinyPlugin.ofType("old-stamp").spiVersion(null).manifest(SpiVersion.MANIFEST_ATTRIBUTE, (ENGINE.major() + 1) + ".0")
            .buildJar(dir.resolve("old-stamp.jar"), scratch);
        try (TierPlugins plugins = TierPlugins.discover(dir))
        {
            assertThat(plugins.found().get("stamped").builtFor()).isEqualTo(ENGINE);
            assertThat(plugins.refused().get("old-stamp")).contains("built for SPI " + (ENGINE.major() + 1) + ".0");
        }
    }

    @Test
    void shouldRefuseAPluginThatDeclaresNoVersionAnywhere() throws IOException
    {
        final Path dir = pluginsDir();
        TinyPlugin.ofType("silent").spiVersion(null).buildJar(dir.resolve("silent.jar"), scratch);
        try (TierPlugins plugins = TierPlugins.discover(dir))
        {
            assertThat(plugins.refused().get("silent")).contains("declares no SPI version")
                .contains("new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR)").contains(SpiVersion.MANIFEST_ATTRIBUTE);
        }
    }

    @Test
    void shouldRejectAManifestVersionThatIsNotMajorDotMinor() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("garbled").spiVersion(null).manifest(SpiVersion.MANIFEST_ATTRIBUTE, "one")
            .buildJar(dir.resolve("garbled.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(jar.toString()).hasMessageContaining(SpiVersion.MANIFEST_ATTRIBUTE + ": one").hasMessageContaining("major.minor");
    }

    @Test
    void shouldNameAJarThatRegistersNoProvider() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("lost").unregistered().buildJar(dir.resolve("lost.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("plugin jar " + jar).hasMessageContaining("holds no tier provider")
            .hasMessageContaining("META-INF/services/io.kvtier.spi.StorageTierProvider");
    }

    @Test
    void shouldNameAPluginWhoseProviderCannotBeLoaded() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = PluginJars.jar(null, Map.of(), PluginJars.serviceFile("com.example.Missing"), dir.resolve("broken.jar"));
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("plugin jar " + jar + ": its tier provider cannot be loaded")
            .hasMessageContaining("com.example.Missing");
    }

    @Test
    void shouldNameAPluginDirectoryWithoutJars() throws IOException
    {
        final Path dir = pluginsDir();
        final Path empty = Files.createDirectories(dir.resolve("empty"));
        Files.writeString(empty.resolve("README"), "not a jar");
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("plugin directory " + empty).hasMessageContaining("holds no jar");
    }

    @Test
    void shouldNameAJarThatIsNotAJar() throws IOException
    {
        final Path dir = pluginsDir();
        final Path fake = Files.writeString(dir.resolve("fake.jar"), "plain text");
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("cannot read " + fake + " as a jar");
    }

    @Test
    void shouldNameBothPlacesOfATypeProvidedTwice() throws IOException
    {
        final Path dir = pluginsDir();
        TinyPlugin.ofType("twin").buildJar(dir.resolve("a").resolve("twin.jar"), scratch);
        TinyPlugin.ofType("twin").helperVersion("2.0").buildJar(dir.resolve("b").resolve("twin.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("tier type 'twin' is provided twice")
            .hasMessageContaining("plugin directory " + dir.resolve("a"))
            .hasMessageContaining("plugin directory " + dir.resolve("b"));
    }

    @Test
    void shouldNameTheClassPathAndThePluginWhenAPluginRepeatsABuiltInType() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("scripted").buildJar(dir.resolve("scripted.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("tier type 'scripted' is provided twice: by the class path (")
            .hasMessageContaining("and by plugin jar " + jar);
    }

    @Test
    void shouldRejectAPluginsDirThatIsMissingOrNotADirectory() throws IOException
    {
        final Path missing = scratch.resolve("nowhere");
        assertThatThrownBy(() -> TierPlugins.discover(missing)).isInstanceOf(ConfigException.class)
            .hasMessage("invalid plugins.dir = \"" + missing + "\": no such directory");
        final Path file = Files.writeString(scratch.resolve("file"), "x");
        assertThatThrownBy(() -> TierPlugins.discover(file)).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("invalid plugins.dir = \"" + file + "\": not a directory")
            .extracting(ex -> ((ConfigException)ex).key()).isEqualTo("plugins.dir");
    }

    @Test
    void shouldGiveEachPluginALoaderThatSeesTheSpiAndTheJdkButNotTheEngine() throws Exception
    {
        final Path dir = pluginsDir();
        TinyPlugin.ofType("alone").buildJar(dir.resolve("alone.jar"), scratch);
        try (TierPlugins plugins = TierPlugins.discover(dir))
        {
            final ClassLoader loader = plugins.providers().get("alone").getClass().getClassLoader();
            assertThat(loader).isInstanceOf(PluginClassLoader.class);
            assertThat(loader.loadClass("io.kvtier.spi.TierBatch")).isSameAs(io.kvtier.spi.TierBatch.class);
            assertThat(loader.loadClass("java.lang.foreign.MemorySegment")).isSameAs(java.lang.foreign.MemorySegment.class);
            assertThatThrownBy(() -> loader.loadClass(TierPlugins.class.getName())).isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> loader.loadClass("com.lmax.disruptor.RingBuffer")).isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> loader.loadClass("org.junit.jupiter.api.Test")).isInstanceOf(ClassNotFoundException.class);
        }
    }

    @Test
    void shouldTakeClassPathProvidersWithoutAPluginsDir()
    {
        try (TierPlugins plugins = TierPlugins.discover(Path.of("")))
        {
            assertThat(plugins.providers()).containsKeys("posix", "scripted");
            assertThat(plugins.found().get("posix").place()).startsWith("the class path (");
            assertThatThrownBy(() -> plugins.provider(tier("t", "tape"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("no tier plugin of that type on the class path; available types: [misbehaving, posix, scripted]");
        }
    }

    @Test
    void shouldNameAPluginWhoseTypeThrowsAnErrorInOneLine() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("odd").first("type", "if (true) throw new AssertionError(\"which type\");").buildJar(dir.resolve("odd.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("plugin jar " + jar + ": tier provider com.example.tiny.odd.Provider failed to give its type and SPI version:"
                + " java.lang.AssertionError: which type (at com.example.tiny.odd.Provider.type(")
            .hasMessageNotContaining("\n");
    }

    @Test
    void shouldNameAPluginWhoseSpiVersionIsNull() throws IOException
    {
        final Path dir = pluginsDir();
        final Path jar = TinyPlugin.ofType("hollow").spiVersion("null").buildJar(dir.resolve("hollow.jar"), scratch);
        assertThatThrownBy(() -> TierPlugins.discover(dir)).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("plugin jar " + jar + ": tier provider com.example.tiny.hollow.Provider returned null from spiVersion()");
    }
}
