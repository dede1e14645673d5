package io.kvtier.bench.ipc;

import io.kvtier.nativeaccess.libc.Futex;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The baseline's second process: answers every ping by writing its sequence into pong, until the
 * pinger writes {@link PingPongFile#STOP} or goes away.
 */
public final class PingPongEcho
{
    private PingPongEcho()
    {
    }

    /**
     * @param args the ping-pong file's path, and {@code futex} for the wake-up baseline
     * @throws Exception if the file cannot be mapped
     */
    public static void main(final String[] args) throws Exception
    {
        final ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        if (args.length > 1 && args[1].equals(PingPongBaseline.FUTEX_MODE))
        {
            try (PingPongFile file = PingPongFile.map(Path.of(args[0]), false))
            {
                futexEcho(file, parent);
            }
            return;
        }
        try (PingPongFile file = PingPongFile.map(Path.of(args[0]), false))
        {
            long answered = file.readAcquire(PingPongFile.PING);
            // The pinger waits for this before its first ping: the echo is mapped and looking.
            file.writeRelease(PingPongFile.PONG, answered);
            int idle = 0;
            while (true)
            {
                final long ping = file.readAcquire(PingPongFile.PING);
                if (ping == PingPongFile.STOP)
                {
                    return;
                }
                if (ping != answered)
                {
                    answered = ping;
                    file.writeRelease(PingPongFile.PONG, ping);
                    idle = 0;
                    continue;
                }
                SpinThenYield.idle(idle++);
                // Checked only while yielding, a pinger killed without writing STOP does not leave us spinning.
                if (idle > SpinThenYield.SPINS && (idle & 0xFFFF) == 0 && parent != null && !parent.isAlive())
                {
                    return;
                }
            }
        }
    }

    /** Answers every futex ping, sleeping on the ping word in between; each answer wakes the pinger. */
    private static void futexEcho(final PingPongFile file, final ProcessHandle parent)
    {
        final Futex futex = Futex.instance().orElseThrow(() -> new IllegalStateException("no futex here"));
        final MemorySegment ping = file.word(PingPongFile.FUTEX_PING);
        final MemorySegment pong = file.word(PingPongFile.FUTEX_PONG);
        int answered = file.readIntAcquire(PingPongFile.FUTEX_PING);
        file.writeIntRelease(PingPongFile.FUTEX_PONG, answered);
        futex.wakeShared(pong, 1);
        int timeouts = 0;
        while (true)
        {
            final int value = file.readIntAcquire(PingPongFile.FUTEX_PING);
            if (value == (int)PingPongFile.STOP)
            {
                return;
            }
            if (value != answered)
            {
                answered = value;
                file.writeIntRelease(PingPongFile.FUTEX_PONG, value);
                futex.wakeShared(pong, 1);
                continue;
            }
            if (futex.waitShared(ping, answered, PingPongBaseline.FUTEX_WAIT_NANOS) == -Futex.ETIMEDOUT && ++timeouts % 10 == 0
                && parent != null && !parent.isAlive())
            {
                return;
            }
        }
    }
}
