package io.kvtier.nativeaccess.uring.bindings;

import io.kvtier.nativeaccess.abi.AbiProbe;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.UnionLayout;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bindings against the C compiler: a probe prints {@code sizeof} and {@code offsetof} of every
 * bound struct and field and the value of every bound constant, compiled once against the project's
 * own declarations in {@code native/include/linux/io_uring.h} (what the bindings are made from) and
 * once against this machine's {@code /usr/include/linux/io_uring.h} (the kernel's own ABI, from
 * linux-libc-dev), and both must match the Java side.
 */
class UringAbiTest
{
    private static final List<Class<?>> STRUCTS = List.of(io_uring_params.class, io_sqring_offsets.class, io_cqring_offsets.class,
        io_uring_sqe.class, io_uring_cqe.class, statx.class, iovec.class);

    /** The probe's fact saying which linux/io_uring.h it was compiled with: 1 for the project's own, 0 otherwise. */
    private static final String OWN_HEADER = "header.kvtier_own";

    @Test
    void shouldMatchTheProjectsOwnHeaderTheBindingsAreMadeFrom(@TempDir final Path dir) throws Exception
    {
        final Path include = Path.of("include").toAbsolutePath();
        assertThat(include.resolve("linux/io_uring.h")).exists();
        final Map<String, Long> facts = AbiProbe.run(dir, "uring_abi_own", probeSource(), "-I" + include);
        assertThat(facts.get(OWN_HEADER)).as("the probe compiled the project's own linux/io_uring.h").isEqualTo(1L);
        compareWith(facts);
    }

    @Test
    void shouldMatchTheKernelHeadersOfThisMachine(@TempDir final Path dir) throws Exception
    {
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/linux/io_uring.h")),
            "no /usr/include/linux/io_uring.h to compare with; install linux-libc-dev");
        final Map<String, Long> facts = AbiProbe.run(dir, "uring_abi_system", probeSource());
        assertThat(facts.get(OWN_HEADER)).as("the probe compiled the system's linux/io_uring.h").isEqualTo(0L);
        compareWith(facts);
    }

    @Test
    void shouldKeepEachFieldsOffsetConstantEqualToItsPlaceInTheLayout() throws Exception
    {
        for (final Class<?> struct : STRUCTS)
        {
            for (final Map.Entry<String, Long> field : fields(layoutOf(struct)).entrySet())
            {
                final Method offset = struct.getMethod(field.getKey() + "$offset");
                assertThat((long)offset.invoke(null)).as("%s.%s$offset()", struct.getSimpleName(), field.getKey())
                    .isEqualTo(field.getValue());
            }
        }
    }

    private static void compareWith(final Map<String, Long> facts) throws Exception
    {
        int compared = 0;
        for (final Class<?> struct : STRUCTS)
        {
            final GroupLayout layout = layoutOf(struct);
            assertThat(layout.byteSize()).as("sizeof(struct %s)", struct.getSimpleName())
                .isEqualTo(facts.get("sizeof." + struct.getSimpleName()));
            for (final Map.Entry<String, Long> field : fields(layout).entrySet())
            {
                final String name = struct.getSimpleName() + "." + field.getKey();
                assertThat(facts).as("the probe printed " + name).containsKey(name);
                assertThat(field.getValue()).as("offsetof(struct %s)", name).isEqualTo(facts.get(name));
                compared++;
            }
        }
        for (final Map.Entry<String, Long> constant : constants().entrySet())
        {
            assertThat(constant.getValue()).as(constant.getKey()).isEqualTo(facts.get(constant.getKey()));
            compared++;
        }
        assertThat(compared).isGreaterThan(100);
    }

    private static String probeSource() throws Exception
    {
        final StringBuilder c = new StringBuilder("""
            #define _GNU_SOURCE
            #include <errno.h>
            #include <fcntl.h>
            #include <stddef.h>
            #include <stdio.h>
            #include <sys/mman.h>
            #include <sys/stat.h>
            #include <sys/syscall.h>
            #include <sys/uio.h>
            #include <linux/io_uring.h>
            int main(void) {
            #ifdef KVTIER_IO_URING_H
                printf("header.kvtier_own 1\\n");
            #else
                printf("header.kvtier_own 0\\n");
            #endif
            """);
        for (final Class<?> struct : STRUCTS)
        {
            final String name = struct.getSimpleName();
            c.append("    printf(\"sizeof.").append(name).append(" %zu\\n\", sizeof(struct ").append(name).append("));\n");
            for (final String field : fields(layoutOf(struct)).keySet())
            {
                c.append("    printf(\"").append(name).append('.').append(field).append(" %zu\\n\", offsetof(struct ").append(name).append(", ")
                    .append(field).append("));\n");
            }
        }
        for (final String constant : constants().keySet())
        {
            c.append("    printf(\"").append(constant).append(" %lld\\n\", (long long)(").append(constant).append("));\n");
        }
        return c.append("    return 0;\n}\n").toString();
    }

    private static GroupLayout layoutOf(final Class<?> struct) throws Exception
    {
        return (GroupLayout)struct.getMethod("layout").invoke(null);
    }

    /** Named fields and their offsets, looking through anonymous unions as C does; padding is skipped. */
    private static Map<String, Long> fields(final GroupLayout layout)
    {
        final Map<String, Long> fields = new LinkedHashMap<>();
        collect(layout, 0, fields);
        return fields;
    }

    private static void collect(final GroupLayout group, final long base, final Map<String, Long> fields)
    {
        long offset = base;
        for (final MemoryLayout member : group.memberLayouts())
        {
            final String name = member.name().orElse("");
            if (member instanceof UnionLayout union && name.startsWith("$anon$"))
            {
                collect(union, offset, fields);
            }
            else if (!(member instanceof PaddingLayout))
            {
                fields.put(name, offset);
            }
            if (!(group instanceof UnionLayout))
            {
                offset += member.byteSize();
            }
        }
    }

    /** Every constant getter of the header class: {@code static int NAME()} or {@code static long NAME()}. */
    private static Map<String, Long> constants() throws Exception
    {
        final Map<String, Long> constants = new java.util.TreeMap<>();
        for (final Method method : io_uring_h.class.getDeclaredMethods())
        {
            final Class<?> type = method.getReturnType();
            if (Modifier.isPublic(method.getModifiers()) && method.getParameterCount() == 0 && !method.getName().contains("$")
                && (type == int.class || type == long.class))
            {
                constants.put(method.getName(), ((Number)method.invoke(null)).longValue());
            }
        }
        assertThat(constants).containsKeys("IORING_OP_READ", "__NR_io_uring_enter", "STATX_DIOALIGN", "IORING_SQ_CQ_OVERFLOW");
        return constants;
    }
}
