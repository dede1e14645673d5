package io.kvtier.bench.ipc;

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
     * @param args the ping-pong file's path
     * @throws Exception if the file cannot be mapped
     */
    public static void main(final String[] args) throws Exception
    {
        final ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
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
}
