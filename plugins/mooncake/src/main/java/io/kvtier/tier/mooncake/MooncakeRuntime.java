package io.kvtier.tier.mooncake;

import java.util.List;

/**
 * What a machine needs besides the JDK to run a Mooncake tier, for messages and the install script
 * ({@code plugins/mooncake/scripts/install-runtime.sh}, which lists the same packages).
 */
public final class MooncakeRuntime
{
    /**
     * Debian 12 packages the Mooncake build links: the libraries {@code ldd libmooncake_store.so} and
     * {@code ldd mooncake_master} need at run time.
     */
    public static final List<String> DEBIAN_PACKAGES = List.of("libgoogle-glog0v6", "libgflags2.2", "libjsoncpp25", "libyaml-cpp0.7",
        "libxxhash0", "libnuma1", "liburing2", "libibverbs1", "libcurl4", "libzstd1", "libunwind8");

    private MooncakeRuntime()
    {
    }
}
