package io.kvtier.cli;

/** The engine settings that turn on the IPC protocol (docs/config.md), as the commands that need it set them. */
final class IpcSettings
{
    /** Serve clients in other processes over docs/ipc-protocol.md. */
    static final String ENABLED = "ipc.enabled";
    /** Where the engine listens for their handshakes. */
    static final String SOCKET_PATH = "ipc.socket-path";

    private IpcSettings()
    {
    }
}
