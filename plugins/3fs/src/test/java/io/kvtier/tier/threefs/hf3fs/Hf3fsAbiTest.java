package io.kvtier.tier.threefs.hf3fs;

import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_cqe;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_ior;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_iov;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h;
import io.kvtier.tier.threefs.hf3fs.bindings.timespec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compares the bindings' struct layouts, constants and function arities with what gcc says about the
 * header kvtier implements (plugins/3fs/include/hf3fs_usrbio.h), so the hand-kept numbers in {@code gen} cannot
 * drift from the C ABI unnoticed.
 */
class Hf3fsAbiTest
{
    // Maven runs the tests in the module's directory.
    private static final Path INCLUDE = Path.of("include").toAbsolutePath();

    @Test
    void shouldMatchTheHeadersLayoutsAndConstants(@TempDir final Path dir) throws Exception
    {
        final String source = """
            #include <hf3fs_usrbio.h>
            #include <stddef.h>
            #include <stdio.h>
            #define SIZE(t) printf("sizeof_%s %zu\\n", #t, sizeof(struct t))
            #define ALIGN(t) printf("alignof_%s %zu\\n", #t, _Alignof(struct t))
            #define OFF(t, f) printf("offsetof_%s_%s %zu\\n", #t, #f, offsetof(struct t, f))
            #define VAL(c) printf("%s %ld\\n", #c, (long)(c))
            int main(void) {
                SIZE(hf3fs_iov); ALIGN(hf3fs_iov);
                OFF(hf3fs_iov, base); OFF(hf3fs_iov, iovh); OFF(hf3fs_iov, id); OFF(hf3fs_iov, mount_point);
                OFF(hf3fs_iov, size); OFF(hf3fs_iov, block_size); OFF(hf3fs_iov, numa);
                SIZE(hf3fs_ior); ALIGN(hf3fs_ior);
                OFF(hf3fs_ior, iov); OFF(hf3fs_ior, iorh); OFF(hf3fs_ior, mount_point); OFF(hf3fs_ior, for_read);
                OFF(hf3fs_ior, io_depth); OFF(hf3fs_ior, priority); OFF(hf3fs_ior, timeout); OFF(hf3fs_ior, flags);
                SIZE(hf3fs_cqe); ALIGN(hf3fs_cqe);
                OFF(hf3fs_cqe, index); OFF(hf3fs_cqe, reserved); OFF(hf3fs_cqe, result); OFF(hf3fs_cqe, userdata);
                SIZE(timespec); OFF(timespec, tv_sec); OFF(timespec, tv_nsec);
                VAL(HF3FS_SUPER_MAGIC); VAL(HF3FS_IOR_ALLOW_READ_UNCOMMITTED); VAL(HF3FS_IOR_FORBID_READ_HOLES);
                return 0;
            }
            """;

        final Map<String, Long> c = AbiProbe.run(dir, "hf3fs_abi", source, "-I" + INCLUDE);

        assertThat(c.get("sizeof_hf3fs_iov")).isEqualTo(hf3fs_iov.sizeof()).isEqualTo(312L);
        assertThat(c.get("alignof_hf3fs_iov")).isEqualTo(hf3fs_iov.layout().byteAlignment());
        assertThat(c.get("offsetof_hf3fs_iov_base")).isEqualTo(hf3fs_iov.base$offset());
        assertThat(c.get("offsetof_hf3fs_iov_iovh")).isEqualTo(hf3fs_iov.iovh$offset());
        assertThat(c.get("offsetof_hf3fs_iov_id")).isEqualTo(hf3fs_iov.id$offset());
        assertThat(c.get("offsetof_hf3fs_iov_mount_point")).isEqualTo(hf3fs_iov.mount_point$offset());
        assertThat(c.get("offsetof_hf3fs_iov_size")).isEqualTo(hf3fs_iov.size$offset());
        assertThat(c.get("offsetof_hf3fs_iov_block_size")).isEqualTo(hf3fs_iov.block_size$offset());
        assertThat(c.get("offsetof_hf3fs_iov_numa")).isEqualTo(hf3fs_iov.numa$offset());

        assertThat(c.get("sizeof_hf3fs_ior")).isEqualTo(hf3fs_ior.sizeof()).isEqualTo(600L);
        assertThat(c.get("alignof_hf3fs_ior")).isEqualTo(hf3fs_ior.layout().byteAlignment());
        assertThat(c.get("offsetof_hf3fs_ior_iov")).isEqualTo(hf3fs_ior.iov$offset());
        assertThat(c.get("offsetof_hf3fs_ior_iorh")).isEqualTo(hf3fs_ior.iorh$offset());
        assertThat(c.get("offsetof_hf3fs_ior_mount_point")).isEqualTo(hf3fs_ior.mount_point$offset());
        assertThat(c.get("offsetof_hf3fs_ior_for_read")).isEqualTo(hf3fs_ior.for_read$offset());
        assertThat(c.get("offsetof_hf3fs_ior_io_depth")).isEqualTo(hf3fs_ior.io_depth$offset());
        assertThat(c.get("offsetof_hf3fs_ior_priority")).isEqualTo(hf3fs_ior.priority$offset());
        assertThat(c.get("offsetof_hf3fs_ior_timeout")).isEqualTo(hf3fs_ior.timeout$offset());
        assertThat(c.get("offsetof_hf3fs_ior_flags")).isEqualTo(hf3fs_ior.flags$offset());

        assertThat(c.get("sizeof_hf3fs_cqe")).isEqualTo(hf3fs_cqe.sizeof()).isEqualTo(24L);
        assertThat(c.get("alignof_hf3fs_cqe")).isEqualTo(hf3fs_cqe.layout().byteAlignment());
        assertThat(c.get("offsetof_hf3fs_cqe_index")).isEqualTo(hf3fs_cqe.index$offset());
        assertThat(c.get("offsetof_hf3fs_cqe_reserved")).isEqualTo(hf3fs_cqe.reserved$offset());
        assertThat(c.get("offsetof_hf3fs_cqe_result")).isEqualTo(hf3fs_cqe.result$offset());
        assertThat(c.get("offsetof_hf3fs_cqe_userdata")).isEqualTo(hf3fs_cqe.userdata$offset());

        assertThat(c.get("sizeof_timespec")).isEqualTo(timespec.sizeof());
        assertThat(c.get("offsetof_timespec_tv_sec")).isEqualTo(timespec.tv_sec$offset());
        assertThat(c.get("offsetof_timespec_tv_nsec")).isEqualTo(timespec.tv_nsec$offset());

        assertThat(c.get("HF3FS_SUPER_MAGIC")).isEqualTo(Integer.toUnsignedLong(hf3fs_usrbio_h.HF3FS_SUPER_MAGIC()));
        assertThat(c.get("HF3FS_IOR_ALLOW_READ_UNCOMMITTED")).isEqualTo((long)hf3fs_usrbio_h.HF3FS_IOR_ALLOW_READ_UNCOMMITTED());
        assertThat(c.get("HF3FS_IOR_FORBID_READ_HOLES")).isEqualTo((long)hf3fs_usrbio_h.HF3FS_IOR_FORBID_READ_HOLES());
    }

    @Test
    void shouldBindEveryFunctionOfTheHeaderWithItsArity() throws Exception
    {
        // As in jextract's output, asking for a descriptor resolves the function: bind the fake to have them all.
        FakeLibrary.bind();
        final String header = Files.readString(INCLUDE.resolve("hf3fs_usrbio.h"));
        final Matcher m = Pattern.compile("(?m)^(?:bool|int|void|size_t)\\s+(hf3fs_\\w+)\\(([^)]*)\\);").matcher(header);
        int functions = 0;
        while (m.find())
        {
            functions++;
            final String name = m.group(1);
            final int parameters = m.group(2).split(",").length;
            assertThat(hf3fs_usrbio_h.FUNCTIONS).as("bound functions").contains(name);
            final FunctionDescriptor descriptor = (FunctionDescriptor)hf3fs_usrbio_h.class.getMethod(name + "$descriptor").invoke(null);
            assertThat(descriptor.argumentLayouts()).as(name + " parameters").hasSize(parameters);
            assertThat(descriptor.returnLayout().isEmpty()).as(name + " returns void").isEqualTo(m.group().startsWith("void"));
        }
        assertThat(functions).isEqualTo(hf3fs_usrbio_h.FUNCTIONS.size());
        // The getter exists for every function, in jextract's shape.
        assertThat(hf3fs_usrbio_h.class.getMethod("hf3fs_prep_io$handle").getReturnType()).isEqualTo(MethodHandle.class);
    }
}
