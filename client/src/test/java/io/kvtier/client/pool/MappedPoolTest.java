package io.kvtier.client.pool;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link MappedPool} and {@link PoolClient} map only a ready pool of this layout version, and say what
 * they found instead. Mapping a running engine's pool is tested with the engine, in the engine module.
 */
class MappedPoolTest
{
    @Test
    void shouldRefuseToAttachToWhatIsNotAReadyPool(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve("pool");
        try
        {
            Files.write(file, new byte[100]);
            assertThatThrownBy(() -> MappedPool.attach(file)).isInstanceOf(IllegalStateException.class).hasMessageContaining("too small");
            Files.write(file, new byte[PagePoolDescriptor.HEADER_LENGTH]);
            assertThatThrownBy(() -> MappedPool.attach(file)).isInstanceOf(IllegalStateException.class).hasMessageContaining("not a kvtier pool");
            final ByteBuffer header = ByteBuffer.allocate(PagePoolDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            header.putLong(PagePoolDescriptor.MAGIC_OFFSET, PagePoolDescriptor.MAGIC);
            header.putInt(PagePoolDescriptor.LAYOUT_VERSION_OFFSET, 1);
            Files.write(file, header.array());
            assertThatThrownBy(() -> MappedPool.attach(file)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("layout version 1").hasMessageContaining("version " + PagePoolDescriptor.LAYOUT_VERSION);
            header.putInt(PagePoolDescriptor.LAYOUT_VERSION_OFFSET, 0);
            Files.write(file, header.array());
            assertThatThrownBy(() -> MappedPool.attach(file)).isInstanceOf(IllegalStateException.class).hasMessageContaining("still being created");
            assertThatThrownBy(() -> PoolClient.attach(file)).isInstanceOf(IllegalStateException.class);
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }
}
