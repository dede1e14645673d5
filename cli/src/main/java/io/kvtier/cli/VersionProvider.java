package io.kvtier.cli;

import io.kvtier.nativeaccess.NativeAccess;
import picocli.CommandLine;

/**
 * Version from the jar manifest, plus the runtime and whether native access is on.
 */
public final class VersionProvider implements CommandLine.IVersionProvider
{
    @Override
    public String[] getVersion()
    {
        final String version = Main.class.getPackage().getImplementationVersion();
        return new String[] {
            "kvtier " + (version == null ? "(development build)" : version),
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")",
            "native access: " + NativeAccess.unavailableReason().orElse("enabled"),
        };
    }
}
