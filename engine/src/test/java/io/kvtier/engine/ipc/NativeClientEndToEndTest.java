package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The C client ({@code clients/c}) and its Python binding ({@code clients/python}) against a real engine
 * with IPC on, each as its own process: reserve, write in place, commit, acquire and compare every byte; a replayed request id
 * answered STALE_REQUEST_ID and a namespace the HELLO did not name answered NAMESPACE_DENIED; STATS;
 * the binding's context managers and both examples (two processes sharing a prefix among them); a HELLO
 * refused (NOT_ALLOWED) surfacing in Python with its code. Both also drive the device operations of
 * protocol 1.1 (section 10) on KV buffers in host files: registrations (and refusals with their detail),
 * blocks saved into pages, pages loaded into blocks of another arrangement, every byte compared.
 * Protocol 1.3, from both: LOOKUP_AND_LOCK and COMMIT_AND_RELEASE, entries, counts and bytes.
 * Protocol 1.2, from both: a session mapping the three descriptors of its WELCOME (the ring a memfd file
 * with no name); KV buffers passed as descriptors (HOST_FD), saved and loaded back byte for byte, their
 * numbering and taking, a save whose buffer shrank answered INTERNAL_ERROR; section 4's entries and
 * Result Count for every operation (an engine with an L3 tier); payload lengths read from the pages'
 * trailers and STATS values named from the counters region (section 11); a session announcing minor 1
 * opening the files by path as the engine's own user; and a client of another user attaching at minor 2
 * and refused at minor 1 (when the test runs as root and can drop to uid 65534).
 * The clients module (clients/pom.xml) builds the client at compile; where gcc, make or python3 is missing
 * these skip and say which.
 */
class NativeClientEndToEndTest
{
    private static final Path CLIENTS = Path.of("").toAbsolutePath().resolve("../clients").normalize();
    private static final Path C_TEST = CLIENTS.resolve("c/build/kvtier_client_test");
    private static final Path LIBRARY = CLIENTS.resolve("c/build/libkvtier_client.so");
    private static final Path PYTHON = CLIENTS.resolve("python");

    @TempDir
    Path directory;

    @Test
    void theCClientReservesWritesCommitsAndAcquiresTheSameBytes() throws Exception
    {
        final Run run = runC(IpcTestSupport.settings(directory, 256), "basic", "device");
        assertThat(run.output()).contains("end to end against", "device operations against")
            .as("a 1.3 session, its files mapped from the WELCOME's descriptors, payload lengths and STATS names from the pool file")
            .contains("(session 1.3, files by descriptors)", "payload lengths from their trailers", "STATS values named");
    }

    /** HOST_FD: KV buffers in memfd files passed as descriptors, saved into pages and loaded back byte for byte. */
    @Test
    void theCClientSavesAndLoadsKvBuffersPassedAsDescriptors() throws Exception
    {
        final Run run = runC(IpcTestSupport.settings(directory, 256), "host-fd");
        assertThat(run.output()).contains("HOST_FD buffers against", "loaded them back byte for byte",
            "a faulting save answered INTERNAL_ERROR");
    }

    /**
     * Section 4: every operation's entries and Result Count, on an engine whose commits are copied to an L3 and
     * whose LOOKUP waits for the prefetch it starts (LOADED).
     */
    @Test
    void theCClientSeesAnEntryForEverySlotOfEveryOperation() throws Exception
    {
        final Run run = runC(withL3(IpcTestSupport.settings(directory, 256)), "--prefetch-waits", "entries");
        assertThat(run.output()).contains("entries against", "every operation answered for every slot of its range");
    }

    /** Protocol 1.3's LOOKUP_AND_LOCK and COMMIT_AND_RELEASE from C: entries, counts, bytes read back, refusals, a 1.2 session. */
    @Test
    void theCClientLocksAPrefixAndCommitsAndReleasesInTwoRequests() throws Exception
    {
        final Run run = runC(IpcTestSupport.settings(directory, 256), "combined");
        assertThat(run.output()).contains("combined requests against", "committed and released in another");
    }

    /** A client announcing minor 1 (and 0) still attaches as the engine's own user, opening the files by path. */
    @Test
    void theCClientAnnouncingMinor1OpensTheFilesByPath() throws Exception
    {
        final Run run = runC(IpcTestSupport.settings(directory, 256), "minor1");
        assertThat(run.output()).contains("a 1.1 session against", "the files opened by path");
    }

    @Test
    void thePythonBindingAndItsExamplesWorkAgainstTheEngine() throws Exception
    {
        final Run run = runPythonTests(IpcTestSupport.settings(directory, 256), "test_kvtier_client.EndToEndTest",
            Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()), null);
        assertThat(run.output()).contains("test_device_save_then_load_bytes_equal",
            "test_a_1_2_session_maps_the_welcomes_descriptors", "test_host_fd_save_then_load_every_byte",
            "test_descriptor_numbers_are_taken_by_a_registration", "test_payload_length_and_trailer_of_a_pinned_page",
            "test_stats_values_named_by_the_counters_region", "test_minor_1_opens_the_files_by_path",
            "test_lookup_and_lock_then_commit_and_release");
    }

    /**
     * The Python package as a user installs it ({@code pip install --no-index ./clients/python} into a new venv, in
     * a temporary directory): {@code python -m kvtier stats} and {@code lookup} from the venv against this engine,
     * pages stored under keys from SGLang's page hashes found by the CLI, and not under another tenant's salt.
     */
    @Test
    void theInstalledPythonPackageChecksARunningEngine() throws Exception
    {
        // no KVTIER_CLIENT_LIB: the installed package loads the library it carries
        final Run run = runPythonTests(IpcTestSupport.settings(directory, 256), "test_kvtier_package.InstallTest", Map.of(),
            "python3-venv");
        assertThat(run.output()).contains("test_installed_cli_reads_a_running_engines_stats_and_looks_up",
            "test_installed_package_imports_with_its_own_library_and_the_project_version",
            "test_installed_package_carries_the_engine_adapters_their_contracts_and_drivers", "Ran 5 tests");
    }

    /** Section 4 from Python: every operation's entries and Result Count, on an engine with an L3. */
    @Test
    void thePythonBindingSeesAnEntryForEverySlotOfEveryOperation() throws Exception
    {
        final Run run = runPythonTests(withL3(IpcTestSupport.settings(directory, 256)), "test_kvtier_client.EntriesTest",
            Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString(), "KVTIER_PREFETCH_WAITS", "1"), null);
        assertThat(run.output()).contains("test_every_operation", "test_a_lookup_whose_prefetch_is_waited_for");
    }

    /** The uid the other-user test drops to, and its primary group's (nobody, nogroup on Debian). */
    private static final int OTHER_UID = 65534;

    /** A Python client of another user: refused at minor 1, then at minor 2 pages and a HOST_FD buffer, both round trips checked. */
    private static final String OTHER_USER = """
        import mmap, os, sys, time, kvtier_client as kv
        print("uid", os.getuid(), flush=True)
        try:
            kv.Client(sys.argv[1], max_keys=8, minor_version=1)
            print("minor 1 accepted")
        except kv.KvtierError as e:
            print("minor 1 refused", e.name)
        c = kv.Client(sys.argv[1], max_keys=8, minor_version=2)  # a 1.2 client facing a 1.3 engine
        print("minor 2 session", c.session_minor, "descriptors", c.descriptors_mapped)
        keys = kv.page_keys(kv.namespace_root("other-user", "bytes/page4", 0, str(time.time_ns())), range(12), 4)
        with c.reserved(keys[:2]) as r:
            for i, page in r.pages():
                page[:5] = b"other"
                r.set_length(i, 5)
        with c.pinned(keys[:2]) as pages:
            print("read back", bytes(pages[0][:5]).decode(), c.payload_length(0), c.payload_length(1))
        shape, blocks, s = (3, 2, 4, 2, 8, 2), 6, 128
        fd = os.memfd_create("other-user-kv")
        os.ftruncate(fd, 6 * blocks * s)
        kv_buffer = mmap.mmap(fd, 6 * blocks * s)
        kv_buffer[:] = bytes((i * 7 + 3) % 251 for i in range(len(kv_buffer)))
        layout = c.register_host_fds(kv.ARRANGEMENT_CONTIGUOUS, shape, blocks, [fd])
        c.reserve(keys[2:3])
        c.device_save(layout, 0, [1], [4])
        c.acquire(keys[2:3], first_slot=4)
        c.device_load(layout, 4, [4], [4])
        c.release(4, 1)
        block = lambda b: b"".join(kv_buffer[((lt * blocks) + b) * s:((lt * blocks) + b + 1) * s] for lt in range(6))
        print("HOST_FD round trip", "equal" if block(4) == block(1) else "DIFFERS")
        c.close()
        """;

    @Test
    void aClientOfAnotherUserAttachesByDescriptorsAtMinor2AndIsRefusedAtMinor1() throws Exception
    {
        final String group = assumeOtherUser();
        // the other user reaches the socket only: the directory is searchable, every file in it stays 0600
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
        final Map<String, String> settings = IpcTestSupport.settings(directory, 64);
        settings.put("ipc.group", group);
        settings.put("ipc.allowed-uids", String.valueOf(OTHER_UID));
        try (Engine engine = IpcTestSupport.start(settings))
        {
            assertThat(Files.getPosixFilePermissions(directory.resolve("pool"))).isEqualTo(PosixFilePermissions.fromString("rw-------"));
            final List<String> command = List.of("setpriv", "--reuid=" + OTHER_UID, "--regid=" + OTHER_UID, "--clear-groups",
                "/usr/bin/python3", "-c", OTHER_USER, IpcTestSupport.socket(engine).toString());
            final Run run = run(command, PYTHON, Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("uid " + OTHER_UID, "minor 1 refused NOT_ALLOWED", "minor 2 session 2 descriptors True",
                "read back other 5 5", "HOST_FD round trip equal");
            awaitNoClients(engine);
        }
    }

    /** A client of another uid than the engine's, trying to attach and printing how it was refused. */
    private static final String OTHER_USER_REFUSED = """
        import os, sys, kvtier_client as kv
        print("uid", os.getuid(), flush=True)
        try:
            kv.Client(sys.argv[1], max_keys=8)
            print("accepted")
        except kv.KvtierError as e:
            print("refused", e.name, e)
        """;

    /**
     * docs/RELIABILITY.md's promise: a process of another uid, not on the allow-lists, is refused at the socket. With
     * {@code ipc.group} naming its group it reaches the socket and the engine answers NOT_ALLOWED from the peer's
     * credentials; without it the socket's mode (0600) stops it before the engine hears of it. Neither attaches.
     */
    @Test
    void aClientOfAnotherUserNotOnTheAllowListsIsRefusedAtTheSocket() throws Exception
    {
        final String group = assumeOtherUser();
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
        for (final boolean throughGroup : new boolean[] {true, false})
        {
            final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
            if (throughGroup)
            {
                // The group lets it connect; the allow-lists name another uid and another gid.
                settings.put("ipc.group", group);
                settings.put("ipc.allowed-uids", String.valueOf(OTHER_UID - 1));
                settings.put("ipc.allowed-gids", String.valueOf(OTHER_UID - 1));
            }
            try (Engine engine = IpcTestSupport.start(settings))
            {
                final List<String> command = List.of("setpriv", "--reuid=" + OTHER_UID, "--regid=" + OTHER_UID, "--clear-groups",
                    "/usr/bin/python3", "-c", OTHER_USER_REFUSED, IpcTestSupport.socket(engine).toString());
                final Run run = run(command, PYTHON, Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
                assertThat(run.exit()).as(run.output()).isZero();
                assertThat(run.output()).as(throughGroup ? "through ipc.group" : "with the socket's default mode")
                    .contains("uid " + OTHER_UID, throughGroup ? "refused NOT_ALLOWED" : "refused ERR_SYSTEM").doesNotContain("accepted");
                if (!throughGroup)
                {
                    assertThat(run.output()).contains("connect " + IpcTestSupport.socket(engine) + ": Permission denied");
                }
                assertThat(engine.ipc().orElseThrow().clientCount()).isZero();
            }
        }
    }

    @Test
    void aRefusedHelloSurfacesInPythonAsItsCodeAndTheEnginesMessage() throws Exception
    {
        assumePythonBinding();
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.allowed-uids", String.valueOf(ownUid + 4242));
        try (Engine engine = IpcTestSupport.start(settings))
        {
            final String script = "import sys, kvtier_client as kv\n"
                + "try:\n    kv.Client(sys.argv[1])\nexcept kv.KvtierError as e:\n    print('refused', e.code, e.name, e)\n";
            final Run run = run(List.of("python3", "-c", script, IpcTestSupport.socket(engine).toString()), PYTHON,
                Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("refused 33 NOT_ALLOWED");
            assertThat(engine.ipc().orElseThrow().clientCount()).isZero();
        }
    }

    /** A Python client holding 2 pins and 2 half-written reservations, then killed with SIGKILL. */
    private static final String HOLDER = """
        import os, sys, time, kvtier_client as kv
        root = kv.namespace_root("killed-client", "bytes/page4", 0, "")
        committed = kv.page_keys(root, range(0, 8), 4)
        writing = kv.page_keys(root, range(100, 108), 4)
        c = kv.Client(sys.argv[1], namespaces=[root], max_keys=16)
        if sys.argv[2] == "hold":
            with c.reserved(committed) as r:
                for i, page in r.pages():
                    page[:4] = b"kept"
            c.acquire(committed, first_slot=4)
            c.reserve(writing, first_slot=8)
            for slot in (8, 9):
                c.slot_view(slot)[:4] = b"torn"
            print("READY", c.slot_page(4), c.slot_page(5), flush=True)
            time.sleep(600)
        else:
            print("CHECK", c.lookup(committed).pool_pages, c.lookup(writing, first_slot=4).pool_pages, flush=True)
            c.close()
        """;

    @Test
    void aPythonClientKilledWithSigkillGivesBackItsPinsAndItsReservationsNeverBecomeVisible() throws Exception
    {
        assumePythonBinding();
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64)))
        {
            final String socket = IpcTestSupport.socket(engine).toString();
            final long expiredBefore = engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED);
            final Path out = directory.resolve("holder.out");
            final ProcessBuilder builder = new ProcessBuilder("python3", "-c", HOLDER, socket, "hold")
                .directory(PYTHON.toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
            builder.environment().put("KVTIER_CLIENT_LIB", LIBRARY.toString());
            final Process holder = builder.start();
            final int[] pinned = new int[2];
            try
            {
                final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!Files.readString(out).contains("\n") && holder.isAlive() && System.nanoTime() < deadline)
                {
                    Thread.sleep(10);
                }
                final String ready = Files.readString(out);
                assertThat(ready).startsWith("READY");
                final String[] fields = ready.trim().split(" ");
                for (int i = 0; i < 2; i++)
                {
                    pinned[i] = Integer.parseInt(fields[1 + i]);
                    assertThat(pins(engine, pinned[i])).as("the holder's pin on page %d", pinned[i]).isEqualTo(1);
                }
            }
            finally
            {
                holder.destroyForcibly();   // SIGKILL
                assertThat(holder.waitFor(5, TimeUnit.MINUTES)).isTrue();
            }
            awaitNoClients(engine);
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while ((pins(engine, pinned[0]) != 0 || pins(engine, pinned[1]) != 0) && System.nanoTime() < deadline)
            {
                Thread.sleep(10);
            }
            assertThat(pins(engine, pinned[0]) + pins(engine, pinned[1])).as("the killed client's pins are given back").isZero();
            assertThat(engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED) - expiredBefore)
                .as("its 2 reservations went through quarantine").isEqualTo(2);

            final Run check = run(List.of("python3", "-c", HOLDER, socket, "check"), PYTHON,
                Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(check.exit()).as(check.output()).isZero();
            assertThat(check.output()).as("committed pages stay found; the half-written ones never appear").contains("CHECK 2 0");
        }
    }

    /**
     * Runs {@code python3 -m unittest -v tests} in clients/python against an engine of these settings, with
     * KVTIER_SOCKET naming its socket and this environment besides: it passed with no test skipped, and every client
     * process has gone.
     *
     * @param skipsWithout a Debian package without which the tests skip, saying {@code apt-get install} it: then this
     *                     test is skipped too; or null, when every skip fails it
     */
    private Run runPythonTests(final Map<String, String> settings, final String tests, final Map<String, String> environment,
                               final String skipsWithout) throws Exception
    {
        assumePythonBinding();
        try (Engine engine = IpcTestSupport.start(settings))
        {
            final Map<String, String> withSocket = new HashMap<>(environment);
            withSocket.put("KVTIER_SOCKET", IpcTestSupport.socket(engine).toString());
            final Run run = run(List.of("python3", "-m", "unittest", "-v", tests), PYTHON, withSocket);
            assertThat(run.exit()).as(run.output()).isZero();
            if (skipsWithout != null)
            {
                assumeTrue(!run.output().contains("apt-get install " + skipsWithout),
                    "the Python tests need what " + skipsWithout + " gives (apt-get install " + skipsWithout + "): " + run.output());
            }
            assertThat(run.output()).contains("OK").doesNotContain("skipped");
            awaitNoClients(engine);
            return run;
        }
    }

    /** The Python binding's tests need the C client's library and python3: else the test skips, saying which. */
    private static void assumePythonBinding()
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the clients module builds it with gcc and make: apt-get install gcc make)");
        assumeTrue(onPath("python3"), "python3 is not installed (apt-get install python3)");
    }

    /** Runs the C test with these arguments (options, then scenarios) against an engine of these settings: every check passes. */
    private Run runC(final Map<String, String> settings, final String... arguments) throws Exception
    {
        assumeTrue(Files.isExecutable(C_TEST),
            "the C client is not built at " + C_TEST + " (the clients module builds it with gcc and make: apt-get install gcc make)");
        try (Engine engine = IpcTestSupport.start(settings))
        {
            final List<String> command = new ArrayList<>(List.of(C_TEST.toString(), "--socket", IpcTestSupport.socket(engine).toString()));
            command.addAll(List.of(arguments));
            final Run run = run(command, CLIENTS.resolve("c"), Map.of());
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains(", 0 failed");
            awaitNoClients(engine);
            return run;
        }
    }

    /**
     * The settings with a POSIX L3 tier in the test's directory, to which every commit is copied (write-through), and
     * a LOOKUP that waits for the prefetch it starts (of 4 L3 pages or more, the default threshold).
     */
    private Map<String, String> withL3(final Map<String, String> settings)
    {
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", directory.resolve("l3").toString());
        settings.put(EngineConfig.POLICY_PREFETCH, "wait-complete");
        return settings;
    }

    /**
     * A client of uid {@link #OTHER_UID} needs the C client's library, this test running as root, setpriv, a
     * /usr/bin/python3 and a group of that gid: else the test skips, saying which is missing.
     *
     * @return the name of that group
     */
    private static String assumeOtherUser() throws IOException
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the clients module builds it with gcc and make: apt-get install gcc make)");
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        assumeTrue(ownUid == 0, "running a client as uid " + OTHER_UID + " needs this test to run as root (it runs as uid " + ownUid + ")");
        assumeTrue(onPath("setpriv"), "setpriv is not installed (apt-get install util-linux)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")),
            "no /usr/bin/python3 for uid " + OTHER_UID + " (apt-get install python3)");
        final String group = groupName(OTHER_UID);
        assumeTrue(group != null, "no group of gid " + OTHER_UID + " in /etc/group");
        return group;
    }

    /** The name of the group of this gid in /etc/group, or null. */
    private static String groupName(final int gid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/etc/group")))
        {
            final String[] fields = line.split(":");
            if (fields.length > 2 && fields[2].equals(String.valueOf(gid)))
            {
                return fields[0];
            }
        }
        return null;
    }

    private static int pins(final Engine engine, final int page)
    {
        return PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page));
    }

    private record Run(int exit, String output)
    {
    }

    private Run run(final List<String> command, final Path workingDirectory, final Map<String, String> environment)
        throws IOException, InterruptedException
    {
        final Path log = directory.resolve("client.log");
        final ProcessBuilder builder = new ProcessBuilder(command).directory(workingDirectory.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        final Process process = builder.start();
        process.getOutputStream().close();   // nothing to say on its stdin: no pipe left for a Cleaner to close later
        if (!process.waitFor(5, TimeUnit.MINUTES))   // only a hang gets here
        {
            process.destroyForcibly().waitFor();
            return new Run(-1, "timed out after 5 minutes: " + command + "\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        final String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new Run(process.exitValue(), output);
    }

    private static void awaitNoClients(final Engine engine) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (engine.ipc().orElseThrow().clientCount() != 0 && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        assertThat(engine.ipc().orElseThrow().clientCount()).as("every client process closed or went").isZero();
    }

    private static boolean onPath(final String program)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":"))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program)))
            {
                return true;
            }
        }
        return false;
    }
}
