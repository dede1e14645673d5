package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A shutdown hook and a command's engine start, in each order they can meet. */
class HookClosableEngineTest
{
    @TempDir
    Path dir;

    private EngineConfig config()
    {
        return EngineConfig.from(Map.of(EngineConfig.POOL_PATH, dir.resolve("pool").toString(), EngineConfig.POOL_SIZE, "1MiB",
            EngineConfig.POOL_PAGE_SIZE, "64KiB"));
    }

    @Test
    void shouldRefuseAStartOnceTheHookHasRun() throws Exception
    {
        final HookClosableEngine engine = new HookClosableEngine();
        assertThat(engine.closeOnExit(1_000)).as("no engine to close").isFalse();
        assertThatThrownBy(() -> engine.start(config())).isInstanceOf(IllegalStateException.class).hasMessageContaining("the JVM is exiting");
        assertThat(dir.resolve("pool")).as("no pool file made after the hook removed what there was").doesNotExist();
    }

    @Test
    void shouldCloseAnEngineStartedBeforeTheHook() throws Exception
    {
        final HookClosableEngine engine = new HookClosableEngine();
        final Engine started = engine.start(config());
        assertThat(dir.resolve("pool")).exists();
        assertThat(engine.closeOnExit(1_000)).isTrue();
        assertThat(dir.resolve("pool")).as("the engine's close removed its pool file").doesNotExist();
        started.close();
    }

    @Test
    void shouldWaitForAStartUnderWayAndCloseWhatItStarted() throws Exception
    {
        final HookClosableEngine engine = new HookClosableEngine();
        final CountDownLatch inStart = new CountDownLatch(1);
        final CountDownLatch finishStart = new CountDownLatch(1);
        final CompletableFuture<Engine> command = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return engine.start(() ->
                {
                    inStart.countDown();
                    // The start's later steps (a tier's files, say) come after the hook has begun.
                    assertThat(await(finishStart)).isTrue();
                    return Engine.start(config());
                });
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        assertThat(inStart.await(30, TimeUnit.SECONDS)).isTrue();
        final CompletableFuture<Boolean> hook = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return engine.closeOnExit(30_000);
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
        });
        Thread.sleep(100);
        assertThat(hook).as("the hook waits while the start is under way").isNotDone();
        finishStart.countDown();
        assertThat(hook.get(30, TimeUnit.SECONDS)).as("the hook closed the engine the start made").isTrue();
        command.get(30, TimeUnit.SECONDS).close();
        assertThat(dir.resolve("pool")).doesNotExist();
    }

    private static boolean await(final CountDownLatch latch)
    {
        try
        {
            return latch.await(30, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void shouldLetTheHookGoOnWhenAStartFailed() throws Exception
    {
        final HookClosableEngine engine = new HookClosableEngine();
        assertThatThrownBy(() -> engine.start(() -> { throw new IllegalArgumentException("a bad tier"); })).hasMessage("a bad tier");
        assertThat(engine.closeOnExit(30_000)).as("nothing started, nothing to close; no wait either").isFalse();
    }
}
