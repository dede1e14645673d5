package io.kvtier.nativeaccess.cuda;

import io.kvtier.nativeaccess.abi.AbiProbe;
import io.kvtier.nativeaccess.cuda.bindings.cudaIpcMemHandle_t;
import io.kvtier.nativeaccess.cuda.bindings.cudaMemLocation;
import io.kvtier.nativeaccess.cuda.bindings.cudaMemcpyAttributes;
import io.kvtier.nativeaccess.cuda.bindings.cudart_h;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compares the bindings' struct layouts and constants with what gcc says about the project's own
 * declarations ({@code native/include/cuda/cudart.h}, what the bindings are made from) and about the
 * CUDA toolkit's own headers where installed, and the declared functions with the toolkit's, so the
 * hand-kept numbers in the bindings cannot drift from the C ABI unnoticed.
 */
class CudaAbiTest
{
    /** The constants the bindings declare, by C name; each is printed by the probe. */
    private static final Map<String, Integer> CONSTANTS = new LinkedHashMap<>();

    static
    {
        CONSTANTS.put("cudaSuccess", cudart_h.cudaSuccess());
        CONSTANTS.put("cudaErrorInvalidValue", cudart_h.cudaErrorInvalidValue());
        CONSTANTS.put("cudaErrorMemoryAllocation", cudart_h.cudaErrorMemoryAllocation());
        CONSTANTS.put("cudaErrorStubLibrary", cudart_h.cudaErrorStubLibrary());
        CONSTANTS.put("cudaErrorInsufficientDriver", cudart_h.cudaErrorInsufficientDriver());
        CONSTANTS.put("cudaErrorNoDevice", cudart_h.cudaErrorNoDevice());
        CONSTANTS.put("cudaErrorInvalidDevice", cudart_h.cudaErrorInvalidDevice());
        CONSTANTS.put("cudaErrorNotReady", cudart_h.cudaErrorNotReady());
        CONSTANTS.put("cudaErrorHostMemoryAlreadyRegistered", cudart_h.cudaErrorHostMemoryAlreadyRegistered());
        CONSTANTS.put("cudaErrorHostMemoryNotRegistered", cudart_h.cudaErrorHostMemoryNotRegistered());
        CONSTANTS.put("cudaErrorNotSupported", cudart_h.cudaErrorNotSupported());
        CONSTANTS.put("cudaMemcpyHostToHost", cudart_h.cudaMemcpyHostToHost());
        CONSTANTS.put("cudaMemcpyHostToDevice", cudart_h.cudaMemcpyHostToDevice());
        CONSTANTS.put("cudaMemcpyDeviceToHost", cudart_h.cudaMemcpyDeviceToHost());
        CONSTANTS.put("cudaMemcpyDeviceToDevice", cudart_h.cudaMemcpyDeviceToDevice());
        CONSTANTS.put("cudaMemcpyDefault", cudart_h.cudaMemcpyDefault());
        CONSTANTS.put("cudaHostRegisterDefault", cudart_h.cudaHostRegisterDefault());
        CONSTANTS.put("cudaHostRegisterPortable", cudart_h.cudaHostRegisterPortable());
        CONSTANTS.put("cudaHostRegisterMapped", cudart_h.cudaHostRegisterMapped());
        CONSTANTS.put("cudaHostRegisterIoMemory", cudart_h.cudaHostRegisterIoMemory());
        CONSTANTS.put("cudaHostRegisterReadOnly", cudart_h.cudaHostRegisterReadOnly());
        CONSTANTS.put("cudaStreamDefault", cudart_h.cudaStreamDefault());
        CONSTANTS.put("cudaStreamNonBlocking", cudart_h.cudaStreamNonBlocking());
        CONSTANTS.put("cudaEventDefault", cudart_h.cudaEventDefault());
        CONSTANTS.put("cudaEventBlockingSync", cudart_h.cudaEventBlockingSync());
        CONSTANTS.put("cudaEventDisableTiming", cudart_h.cudaEventDisableTiming());
        CONSTANTS.put("cudaEventInterprocess", cudart_h.cudaEventInterprocess());
        CONSTANTS.put("cudaIpcMemLazyEnablePeerAccess", cudart_h.cudaIpcMemLazyEnablePeerAccess());
        CONSTANTS.put("CUDA_IPC_HANDLE_SIZE", cudart_h.CUDA_IPC_HANDLE_SIZE());
        CONSTANTS.put("cudaMemLocationTypeInvalid", cudart_h.cudaMemLocationTypeInvalid());
        CONSTANTS.put("cudaMemLocationTypeDevice", cudart_h.cudaMemLocationTypeDevice());
        CONSTANTS.put("cudaMemLocationTypeHost", cudart_h.cudaMemLocationTypeHost());
        CONSTANTS.put("cudaMemcpySrcAccessOrderInvalid", cudart_h.cudaMemcpySrcAccessOrderInvalid());
        CONSTANTS.put("cudaMemcpySrcAccessOrderStream", cudart_h.cudaMemcpySrcAccessOrderStream());
        CONSTANTS.put("cudaMemcpySrcAccessOrderDuringApiCall", cudart_h.cudaMemcpySrcAccessOrderDuringApiCall());
        CONSTANTS.put("cudaMemcpySrcAccessOrderAny", cudart_h.cudaMemcpySrcAccessOrderAny());
        CONSTANTS.put("cudaMemcpyFlagDefault", cudart_h.cudaMemcpyFlagDefault());
        CONSTANTS.put("cudaMemcpyFlagPreferOverlapWithCompute", cudart_h.cudaMemcpyFlagPreferOverlapWithCompute());
    }

    /** The newest {@code /usr/local/cuda*}{@code /include} holding the runtime header. */
    private static Optional<Path> cudaInclude() throws IOException
    {
        final Path preferred = Path.of("/usr/local/cuda/include");
        if (Files.exists(preferred.resolve("cuda_runtime_api.h")))
        {
            return Optional.of(preferred);
        }
        try (Stream<Path> roots = Files.list(Path.of("/usr/local")))
        {
            return roots.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                .map(p -> p.resolve("include"))
                .filter(p -> Files.exists(p.resolve("cuda_runtime_api.h")))
                .max(Comparator.comparing(Path::toString));
        }
    }

    @Test
    void shouldMatchTheProjectsOwnHeadersLayoutsAndConstants(@TempDir final Path dir) throws Exception
    {
        final Path include = Path.of("include").toAbsolutePath();
        assertThat(include.resolve("cuda/cudart.h")).exists();
        final String source = layoutProbe("#include \"cuda/cudart.h\"", "");

        final Map<String, Long> c = AbiProbe.run(dir, "cuda_abi_own", source, "-I" + include);

        assertLayoutsAndConstantsMatch(c);
    }

    @Test
    void shouldMatchTheCudaHeadersLayoutsAndConstants(@TempDir final Path dir) throws Exception
    {
        final Optional<Path> include = cudaInclude();
        Assumptions.assumeTrue(include.isPresent(),
            "skipped: the CUDA runtime headers (cuda_runtime_api.h) are not under /usr/local/cuda*/include; install NVIDIA's "
                + "cuda-cudart-dev-13-0 package (or the CUDA toolkit) to check the bindings against them");
        final String source = layoutProbe("#include <cuda_runtime_api.h>", "    VAL(CUDART_VERSION);\n");

        final Map<String, Long> c = AbiProbe.run(dir, "cuda_abi", source, "-I" + include.get());

        assertLayoutsAndConstantsMatch(c);
        // The headers' version decides which cudaMemcpyBatchAsync they declare; the bindings carry both.
        assertThat(c.get("CUDART_VERSION")).isGreaterThanOrEqualTo(12000L);
    }

    /**
     * @param include the line that includes the declarations to probe
     * @param extra   more lines of {@code main}
     * @return a C program printing the size and offsets of every bound struct and the value of every bound constant
     */
    private static String layoutProbe(final String include, final String extra)
    {
        final StringBuilder source = new StringBuilder(include).append("\n").append("""
            #include <stddef.h>
            #include <stdio.h>
            /* n names the type in the output, which must be one word; t is the C type */
            #define SIZE(n, t) printf("sizeof_%s %zu\\n", #n, sizeof(t))
            #define OFF(n, t, f) printf("offsetof_%s_%s %zu\\n", #n, #f, offsetof(t, f))
            #define VAL(c) printf("%s %ld\\n", #c, (long)(c))
            int main(void) {
                SIZE(cudaIpcMemHandle_t, cudaIpcMemHandle_t); OFF(cudaIpcMemHandle_t, cudaIpcMemHandle_t, reserved);
                SIZE(cudaMemLocation, struct cudaMemLocation);
                OFF(cudaMemLocation, struct cudaMemLocation, type); OFF(cudaMemLocation, struct cudaMemLocation, id);
                SIZE(cudaMemcpyAttributes, struct cudaMemcpyAttributes);
                OFF(cudaMemcpyAttributes, struct cudaMemcpyAttributes, srcAccessOrder);
                OFF(cudaMemcpyAttributes, struct cudaMemcpyAttributes, srcLocHint);
                OFF(cudaMemcpyAttributes, struct cudaMemcpyAttributes, dstLocHint);
                OFF(cudaMemcpyAttributes, struct cudaMemcpyAttributes, flags);
            """).append(extra);
        CONSTANTS.keySet().forEach(name -> source.append("    VAL(").append(name).append(");\n"));
        return source.append("    return 0;\n}\n").toString();
    }

    /** Every layout and constant the bindings declare equals the probe's fact of the same name. */
    private static void assertLayoutsAndConstantsMatch(final Map<String, Long> c)
    {
        assertThat(fact(c, "sizeof_cudaIpcMemHandle_t")).isEqualTo(cudaIpcMemHandle_t.sizeof());
        assertThat(fact(c, "offsetof_cudaIpcMemHandle_t_reserved")).isEqualTo(cudaIpcMemHandle_t.reserved$offset());
        assertThat(fact(c, "sizeof_cudaMemLocation")).isEqualTo(cudaMemLocation.sizeof());
        assertThat(fact(c, "offsetof_cudaMemLocation_type")).isEqualTo(cudaMemLocation.type$offset());
        assertThat(fact(c, "offsetof_cudaMemLocation_id")).isEqualTo(cudaMemLocation.id$offset());
        assertThat(fact(c, "sizeof_cudaMemcpyAttributes")).isEqualTo(cudaMemcpyAttributes.sizeof());
        assertThat(fact(c, "offsetof_cudaMemcpyAttributes_srcAccessOrder")).isEqualTo(cudaMemcpyAttributes.srcAccessOrder$offset());
        assertThat(fact(c, "offsetof_cudaMemcpyAttributes_srcLocHint")).isEqualTo(cudaMemcpyAttributes.srcLocHint$offset());
        assertThat(fact(c, "offsetof_cudaMemcpyAttributes_dstLocHint")).isEqualTo(cudaMemcpyAttributes.dstLocHint$offset());
        assertThat(fact(c, "offsetof_cudaMemcpyAttributes_flags")).isEqualTo(cudaMemcpyAttributes.flags$offset());
        for (final Map.Entry<String, Integer> constant : CONSTANTS.entrySet())
        {
            assertThat(c.get(constant.getKey())).as(constant.getKey()).isEqualTo(constant.getValue().longValue());
        }
    }

    /** A function the bindings are made from: its C text, name and parameter count. */
    private record Declaration(String text, String name, int parameters, boolean returnsPointer)
    {
    }

    /**
     * @return the functions of the project's own declarations ({@code cuda/cudart.h}) and of the
     *         jextract input around them ({@code cuda_ffm.h}, which adds the 12.8 form of the batch copy)
     */
    private static List<Declaration> declaredFunctions() throws IOException
    {
        // Maven runs the tests in the module's directory.
        final String functions = Files.readString(Path.of("include/cuda/cudart.h")) + Files.readString(Path.of("include/cuda_ffm.h"));
        final Matcher m = Pattern.compile("(cudaError_t|const char \\*)\\s*(\\w+)\\(([^)]*)\\);").matcher(functions);
        final List<Declaration> declarations = new ArrayList<>();
        while (m.find())
        {
            final String parameters = m.group(3).strip();
            final int count = parameters.isEmpty() || parameters.equals("void") ? 0 : parameters.split(",").length;
            declarations.add(new Declaration(m.group(), m.group(2), count, m.group(1).startsWith("const char")));
        }
        return declarations;
    }

    @Test
    void shouldDeclareEveryFunctionAsTheToolkitsHeadersDo(@TempDir final Path dir) throws Exception
    {
        final Optional<Path> include = cudaInclude();
        Assumptions.assumeTrue(include.isPresent(),
            "skipped: the CUDA runtime headers (cuda_runtime_api.h) are not under /usr/local/cuda*/include; install NVIDIA's "
                + "cuda-cudart-dev-13-0 package (or the CUDA toolkit) to check the bindings against them");
        final List<Declaration> declarations = declaredFunctions();
        assertThat(declarations).extracting(Declaration::name).contains("cudaGetDeviceCount", "cudaMemcpyBatchAsync",
            "cudaMemcpyBatchAsync_v12080", "cudaIpcOpenMemHandle");

        // C accepts a second declaration of a function only when its type is compatible with the first,
        // so gcc rejects ("conflicting types") any of the project's declarations that drifted from the toolkit's.
        final StringBuilder source = new StringBuilder("#include <cuda_runtime_api.h>\n#include <stdio.h>\n");
        for (final Declaration declaration : declarations)
        {
            if (declaration.name().equals("cudaMemcpyBatchAsync"))
            {
                source.append("#if CUDART_VERSION >= 13000\n").append(declaration.text()).append("\n#endif\n");
            }
            else if (declaration.name().equals("cudaMemcpyBatchAsync_v12080"))
            {
                source.append("#if CUDART_VERSION >= 12080 && CUDART_VERSION < 13000\n")
                    .append(declaration.text().replace("cudaMemcpyBatchAsync_v12080", "cudaMemcpyBatchAsync")).append("\n#endif\n");
            }
            else
            {
                source.append(declaration.text()).append('\n');
            }
        }
        source.append("int main(void) { printf(\"declarations %d\\n\", ").append(declarations.size()).append("); return 0; }\n");

        final Map<String, Long> c = AbiProbe.run(dir, "cuda_decls", source.toString(), "-I" + include.get());

        assertThat(c.get("declarations")).isEqualTo((long)declarations.size());
    }

    @Test
    void shouldBindEveryFunctionWithItsDeclaredArity() throws Exception
    {
        Assumptions.assumeTrue(CudartLibrary.loaded().symbols().isPresent(),
            () -> "skipped: the bindings look their symbols up on first use and no libcudart is here: " + CudartLibrary.location());
        for (final Declaration declaration : declaredFunctions())
        {
            final FunctionDescriptor descriptor = (FunctionDescriptor)cudart_h.class.getMethod(declaration.name() + "$descriptor").invoke(null);
            assertThat(descriptor.argumentLayouts()).as(declaration.name()).hasSize(declaration.parameters());
            assertThat(descriptor.returnLayout()).as(declaration.name())
                .contains(declaration.returnsPointer() ? cudart_h.C_POINTER : cudart_h.C_INT);
        }
    }

    private static long fact(final Map<String, Long> facts, final String name)
    {
        final Long value = facts.get(name);
        assertThat(value).as(name).isNotNull();
        return value;
    }
}
