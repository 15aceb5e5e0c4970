"""serve(): the go-plugin server side of a runner process (gRPC served by rpc.py).

Lifecycle contract (what go-plugin's Go client expects of a plugin process): cookie check, one handshake line on the
real stdout, health "plugin"=SERVING, GRPCController/Shutdown and GRPCStdio served, SIGINT
ignored (the host shuts us down itself), exit on SIGTERM, on Shutdown and when the parent
process goes away.
"""

from __future__ import annotations

import asyncio
import grp
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from . import health, stdio
from .context import use_ksadk
from .handshake import HandshakeEnv, HandshakeError, check_env, handshake_line
from .hclog import get_logger, handler, install_root_handler
from .lane import LaneServer
from .rpc import Server
from .runner import Runner
from .services import Broker, BrokerService, ControllerService, RunnerService, StdioService, add_services

log = get_logger()

# go-plugin's host: health checks use this service name.
HEALTH_SERVICE = "plugin"
# Kill() waits 2 s for a graceful exit before SIGKILL: stay well inside that.
DEFAULT_GRACE = 0.5
PARENT_POLL_INTERVAL = 1.0
# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), NUL included.
MAX_SOCKET_PATH = 103
# The runner protocol's message size limit on both sides: runnerplugin.MaxMessageBytes
# (4 x the 32 MiB request limit + the 16 MiB history budget + 16 MiB).
MAX_MESSAGE_BYTES = 4 * (32 << 20) + (16 << 20) + (16 << 20)

_broker = Broker()


def broker() -> Broker:
    """Host-brokered servers (host callbacks such as durable key/value), by service id."""
    return _broker


def prepare() -> HandshakeEnv:
    """Checks the handshake env (exit 1 with a message if wrong), ignores SIGINT, captures
    stdout and makes `import ksadk` work (the project's own ksadk if it has one, else the
    stand-in; see context.use_ksadk). Idempotent; call it before importing user code."""
    try:
        env = check_env()
    except HandshakeError as exc:
        # Plain text: most likely a human ran the runner by hand.
        sys.stderr.write(f"{exc}\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
    # The host's Ctrl-C reaches the whole process group; the host stops us itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdio.capture()
    try:
        log.debug("ksadk", extra={"ksadk": use_ksadk()})
    except Exception:
        # A broken ksadk install: the project's own imports of it will fail with the real
        # error; the runner itself does not need it.
        log.warning("cannot import ksadk.runtime_context", exc_info=True)
    return env


def serve(runner: Runner, *, grace: float = DEFAULT_GRACE) -> None:
    """Serves runner until the host shuts it down, SIGTERM, or the parent process exits.

    Prefer starting the process with `python -m agentengine_runner module:attr`, which
    captures stdout before your module is imported; a runner script calling serve() itself
    must not print anything at import time. Returns once stopped; the process is ended 2 s
    later even if non-daemon threads remain.
    """
    env = prepare()
    install_root_handler()
    try:
        asyncio.run(_serve(runner, env, grace))
    except (HandshakeError, OSError, RuntimeError) as exc:  # e.g. the socket cannot be bound
        log.error("runner cannot serve", extra={"error": f"{type(exc).__name__}: {exc}"})
        raise SystemExit(1) from None
    finally:
        # Non-daemon threads left by user code would otherwise keep the process alive past
        # the host's 2 s Kill window.
        _exit_after(2.0)


@dataclass
class _Lifecycle:
    loop: asyncio.AbstractEventLoop
    stop: asyncio.Event
    stopping: bool = False
    reason: str = ""

    def request_stop(self, reason: str) -> None:
        """Loop thread only."""
        self.stopping = True
        self.reason = self.reason or reason
        self.stop.set()

    def request_stop_threadsafe(self, reason: str) -> None:
        try:
            self.loop.call_soon_threadsafe(self.request_stop, reason)
        except RuntimeError:  # loop already closed
            pass


async def _serve(runner: Runner, env: HandshakeEnv, grace: float) -> None:
    loop = asyncio.get_running_loop()
    life = _Lifecycle(loop, asyncio.Event())
    hub = stdio.hub() or stdio.StdioHub()

    # The same limit as the host and the Go SDK (runnerplugin.MaxMessageBytes).
    server = Server(MAX_MESSAGE_BYTES)
    health_servicer = health.HealthServicer()
    await health_servicer.set(HEALTH_SERVICE, health.SERVING)
    await health_servicer.set("", health.SERVING)
    health.add_to_server(health_servicer, server)
    service = RunnerService(runner)
    add_services(server, service, ControllerService(life.request_stop), StdioService(hub), BrokerService(_broker))

    sock_dir, own_dir = _socket_dir(env)
    path = os.path.join(sock_dir, f"r{os.getpid()}.sock")
    lane_path = os.path.join(sock_dir, f"r{os.getpid()}.lane")
    lane = LaneServer(service.run, MAX_MESSAGE_BYTES) if _lane_enabled() else None
    try:
        if len(path.encode()) > MAX_SOCKET_PATH:
            raise HandshakeError(f"unix socket path too long ({len(path)} bytes): {path}")
        if os.path.exists(path):
            os.unlink(path)  # stale socket of a dead process with our pid
        await server.start_unix(path)
        if lane is not None:
            await lane.start(lane_path)
            service.run_lane = lane_path
        if env.socket_group:
            _share_with_group(path, env.socket_group)
            if lane is not None:
                _share_with_group(lane_path, env.socket_group)

        loop.add_signal_handler(signal.SIGTERM, life.request_stop, "SIGTERM")
        threading.Thread(
            target=_watch_parent, args=(life, grace), name="agentengine-parent-watch", daemon=True
        ).start()

        service.lifelong.ready()
        stdio.write_handshake(handshake_line(env.app_version, "unix", path))
        log.debug("runner serving", extra={"address": path, "pid": os.getpid()})

        await life.stop.wait()
        # A run that swallows cancellation or a stuck stop must not outlive the host's
        # patience (a loop blocked outright is caught by the parent watch instead).
        _exit_after(grace + 2.0)
        log.debug("runner stopping", extra={"reason": life.reason})
        await health_servicer.enter_graceful_shutdown()
        if lane is not None:
            await lane.close(grace)
        await server.stop(grace)
    finally:
        _remove(lane_path, None)
        _remove(path, sock_dir if own_dir else None)


def _lane_enabled() -> bool:
    """AGENTENGINE_RUN_LANE=off makes the host call Run over gRPC for every run (to compare
    the two, or to rule the lane out)."""
    return os.environ.get("AGENTENGINE_RUN_LANE", "").strip().lower() not in ("off", "0", "false")


def _socket_dir(env: HandshakeEnv) -> tuple[str, bool]:
    if env.socket_dir:
        return env.socket_dir, False
    base = tempfile.gettempdir()
    if len(base) > 60:  # a long TMPDIR (macOS) would overflow sun_path
        base = "/tmp"
    return tempfile.mkdtemp(prefix="aer-", dir=base), True


def _share_with_group(path: str, group: str) -> None:
    gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    os.chown(path, -1, gid)
    os.chmod(path, 0o770)


def _remove(path: str, own_dir: str | None) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
    if own_dir:
        shutil.rmtree(own_dir, ignore_errors=True)


def _watch_parent(life: _Lifecycle, grace: float) -> None:
    """Exits when the host dies without a Shutdown (go-plugin has no Pdeathsig)."""
    parent = os.getppid()
    # A pre-forked runner's parent is the zygote, which may go before it does: it
    # watches the host instead.
    watched = os.environ.get("AGENTENGINE_WATCH_PID", "").strip()
    host = int(watched) if watched.isdigit() else 0
    while not life.stopping:
        time.sleep(PARENT_POLL_INTERVAL)
        gone = not _alive(host) if host else os.getppid() != parent
        if gone:
            parent = host or parent
            # Flag first, then log: stderr is probably a broken pipe now.
            life.stopping = True
            log.warning("parent process exited; stopping", extra={"parent_pid": str(parent)})
            handler().mark_dead()  # nobody reads stderr any more; never block on it
            life.request_stop_threadsafe("parent exited")
            _exit_after(grace + 2.0)
            return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists
    return True


def _exit_after(seconds: float) -> None:
    def hard_exit() -> None:
        time.sleep(seconds)
        os._exit(0)

    threading.Thread(target=hard_exit, name="agentengine-exit-deadline", daemon=True).start()
