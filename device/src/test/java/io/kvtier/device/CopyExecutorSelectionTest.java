package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import static org.assertj.core.api.Assertions.assertThat;

class CopyExecutorSelectionTest
{
    @Test
    void shouldFallBackToTheEmulationSayingWhyWhenThereIsNoDevice()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeFalse(discovery.hasDevices(), "skipped: this machine has a CUDA device, so the CUDA executor is chosen");
        try (Arena arena = Arena.ofConfined(); CopyExecutor executor = CopyExecutor.open(0, arena.allocate(64)))
        {
            assertThat(executor).isInstanceOf(EmulatedCopyExecutor.class);
            assertThat(executor.isDevice()).isFalse();
            assertThat(executor.description()).contains("emulation").contains(discovery.reason());
        }
    }

    @Test
    void shouldSayAtStartupThatItIsAnEmulationAndWhy()
    {
        final Logger logger = Logger.getLogger(EmulatedCopyExecutor.class.getName());
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        final Handler handler = new Handler()
        {
            @Override
            public void publish(final LogRecord record)
            {
                records.add(record);
            }

            @Override
            public void flush()
            {
            }

            @Override
            public void close()
            {
            }
        };
        logger.addHandler(handler);
        try (Arena arena = Arena.ofConfined())
        {
            new EmulatedCopyExecutor(arena.allocate(8), "no driver in this test").close();
        }
        finally
        {
            logger.removeHandler(handler);
        }

        assertThat(records).anySatisfy(record ->
        {
            assertThat(record.getLevel()).isEqualTo(Level.INFO);
            assertThat(new SimpleFormatter().formatMessage(record)).contains("emulation").contains("no driver in this test");
        });
    }

    @Test
    void shouldChooseCudaWhenADeviceIsPresent()
    {
        final Cuda.Discovery discovery = Cuda.discovery();
        Assumptions.assumeTrue(discovery.hasDevices(), () -> "skipped: no CUDA device here (" + discovery.reason() + ")");
        try (Arena arena = Arena.ofConfined(); CopyExecutor executor = CopyExecutor.open(0, arena.allocate(64)))
        {
            assertThat(executor).isInstanceOf(CudaCopyExecutor.class);
            assertThat(executor.isDevice()).isTrue();
        }
    }
}
