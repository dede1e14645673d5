package io.kvtier.nativeaccess.libc;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The Linux constants that differ between CPU architectures, one row per architecture.
 *
 * <p>Most of {@code <fcntl.h>} is the same everywhere ({@code O_CREAT}, {@code O_EXCL}, the
 * {@code F_OFD_*} commands, {@code struct flock} on 64-bit), but four {@code open(2)} flags are
 * not: on aarch64 the bit that means {@code O_DIRECT} on x86_64 is {@code O_DIRECTORY}. A flag
 * taken from the wrong row silently opens a file with other semantics, so an architecture without a
 * row gets no native front at all (the caller falls back to {@link java.nio.channels.FileChannel}
 * and logs why) rather than a guess.
 *
 * <p>Values are from the kernel's {@code include/uapi/asm-generic/fcntl.h} (x86_64, riscv64) and
 * {@code arch/{arm64,powerpc}/include/uapi/asm/fcntl.h}; {@code SO_PEERCRED} from
 * {@code include/uapi/asm-generic/socket.h} and {@code arch/powerpc/include/uapi/asm/socket.h}.
 *
 * @param arch        {@code os.arch} names of the row
 * @param oDirect     {@code O_DIRECT}
 * @param oDirectory  {@code O_DIRECTORY}
 * @param oNofollow   {@code O_NOFOLLOW}
 * @param oLargefile  {@code O_LARGEFILE} as the kernel defines it (glibc passes it implicitly on 64-bit)
 * @param soPeercred  the {@code SO_PEERCRED} socket option (17 in asm-generic, 21 on powerpc)
 */
record LinuxAbi(List<String> arch, int oDirect, int oDirectory, int oNofollow, int oLargefile, int soPeercred)
{
    /** x86_64: the asm-generic values. */
    public static final LinuxAbi X86_64 = new LinuxAbi(List.of("amd64", "x86_64"), 0x4000, 0x10000, 0x20000, 0x8000, 17);
    /** aarch64: O_DIRECTORY and O_NOFOLLOW move down, O_DIRECT and O_LARGEFILE up. */
    public static final LinuxAbi AARCH64 = new LinuxAbi(List.of("aarch64", "arm64"), 0x10000, 0x4000, 0x8000, 0x20000, 17);
    /** riscv64: the asm-generic values. */
    public static final LinuxAbi RISCV64 = new LinuxAbi(List.of("riscv64"), 0x4000, 0x10000, 0x20000, 0x8000, 17);
    /** ppc64le: its own values. */
    public static final LinuxAbi PPC64LE = new LinuxAbi(List.of("ppc64le", "ppc64"), 0x20000, 0x4000, 0x8000, 0x10000, 21);

    /** Every architecture with a row. */
    public static final List<LinuxAbi> KNOWN = List.of(X86_64, AARCH64, RISCV64, PPC64LE);

    /**
     * @param osArch a value of the {@code os.arch} property
     * @return the row for it, or empty when there is none
     */
    public static Optional<LinuxAbi> forArch(final String osArch)
    {
        final String name = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
        for (final LinuxAbi abi : KNOWN)
        {
            if (abi.arch.contains(name))
            {
                return Optional.of(abi);
            }
        }
        return Optional.empty();
    }

    /** @return the row for this JVM's architecture, or empty */
    public static Optional<LinuxAbi> current()
    {
        return forArch(System.getProperty("os.arch"));
    }

    /**
     * @param osArch an architecture without a row
     * @return why the native front refuses it, naming what is supported
     */
    public static String unsupportedReason(final String osArch)
    {
        final StringBuilder names = new StringBuilder();
        for (final LinuxAbi abi : KNOWN)
        {
            names.append(names.isEmpty() ? "" : ", ").append(abi.arch.getFirst());
        }
        return "no table of open(2) flags for architecture " + osArch + " (O_DIRECT and O_DIRECTORY differ by architecture,"
            + " and a guessed value opens files with other semantics); supported: " + names;
    }
}
