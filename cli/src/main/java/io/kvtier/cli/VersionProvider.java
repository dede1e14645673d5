package io.kvtier.cli;

import io.kvtier.nativeaccess.NativeAccess;
import picocli.CommandLine;

/**
 * Version from the module descriptor (on the module path, as the launcher runs kvtier) or the jar
 * manifest (kvtier.jar on the class path), plus the runtime and whether native access is on.
 */
public final class VersionProvider implements CommandLine.IVersionProvider
{
    @Override
    public String[] getVersion()
    {
        final String version = Main.class.getModule().isNamed()
            // A named module's packages carry no manifest versions; the build records its version in the descriptor.
            ? Main.class.getModule().getDescriptor().rawVersion().orElse(null)
            : Main.class.getPackage().getImplementationVersion();
        return new String[] {
            "kvtier " + (version == null ? "(development build)" : version),
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")",
            "native access: " + NativeAccess.unavailableReason().orElse("enabled"),
        };
    }
}
