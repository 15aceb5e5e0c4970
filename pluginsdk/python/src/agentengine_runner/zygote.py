"""Pre-forking: a parent that has imported the framework and the agent forks runners.

The host starts the runner's command (`python -m agentengine_runner module:attr`, or the
framework bridge `python -m agentengine_adapters`) with AGENTENGINE_ZYGOTE_FD set to a
unix SOCK_SEQPACKET socket; the entry point hands over to run() instead of serving. This process (the zygote) imports the runner, freezes the
garbage collector's view of what it imported (so that collections in the children do not
write to, and so copy, the shared pages) and then only forks: it never starts gRPC, an
event loop or a thread, because a fork copies only the forking thread and would leave
their locks held.

Each request is one JSON message {"env": [...], "dir": "..."} carrying two file
descriptors, the child's stdout and stderr. The zygote answers {"id": ..., "pid": N} (or
{"error": "..."}) and later {"exit": N, "status": "..."} once it has reaped the child.
The child puts the descriptors on fds 1 and 2, takes the request's environment, and
serves exactly as a runner started on its own does (go-plugin handshake line on its
stdout): the host attaches to it as to any runner process. A child has its own process
group, so the host can kill it and what it started without touching the zygote, and it
watches the host rather than its parent: the zygote may die (or be replaced after a
reload) while its children serve on.

What a run imports lazily (ADK imports hundreds of modules on its first turn) would be
private to each child. So each child records the modules it has imported after its
first runs in the project's state directory, and the zygote imports those before it forks
again (and at its next start): a learned preload list, as Android's zygote has. The
zygote also calls describe() once, which the host asks every new process for.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .hclog import get_logger
from .runner import Runner

ENV_FD = "AGENTENGINE_ZYGOTE_FD"
MODULES_FILE = "prefork-modules.txt"
# When a child records its modules: after its first runs, and once more later.
RECORD_AFTER = (10.0, 60.0)
# How often an idle zygote looks for a new list.
PRELOAD_POLL = 5.0
# The host's pid, for a forked runner's parent watch (its parent is the zygote).
ENV_WATCH_PID = "AGENTENGINE_WATCH_PID"
MAX_REQUEST = 1 << 20

log = get_logger()


def fd_from_env() -> int | None:
    raw = os.environ.get(ENV_FD, "").strip()
    return int(raw) if raw.isdigit() else None


def run(fd: int, load: Callable[[], Runner], what: str) -> None:
    """The zygote's main: load the runner, then fork on request until the host hangs up.

    load imports the agent and returns its runner (SystemExit passes through); what names
    it in the error logged when it raises."""
    # Import-time prints must not reach the host's stdout reader as if they were a
    # handshake; they go to stderr, which the host logs.
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctrl = socket.socket(fileno=fd)
    try:
        from .context import use_ksadk

        use_ksadk()
    except Exception:
        log.warning("cannot import ksadk.runtime_context", exc_info=True)
    try:
        runner = load()
    except Exception:
        exc = sys.exc_info()[1]
        log.error(f"cannot load runner {what}: {type(exc).__name__}: {exc}", exc_info=True, extra={"spec": what})
        raise SystemExit(1) from None
    try:
        runner.describe()  # imports what describing takes, for every child
    except Exception:
        log.debug("describe failed in the zygote", exc_info=True)
    preload = _Preload(_modules_path())
    preload.load()
    _check_threads()
    gc.collect()
    gc.freeze()
    host = os.getppid()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    # A Python-level handler (not SIG_DFL, which would discard SIGCHLD before the wakeup
    # fd sees it) so that exits wake the loop.
    signal.signal(signal.SIGCHLD, lambda *_: None)
    ctrl.sendall(json.dumps({"ready": os.getpid()}).encode())
    while True:
        readable, _, _ = select.select([ctrl.fileno(), wake_r], [], [], PRELOAD_POLL)
        if not readable:
            # Idle: take in what the children recorded now rather than while a fork waits.
            if preload.load():
                _check_threads()
                gc.collect()
                gc.freeze()
            continue
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
            _reap(ctrl)
        if ctrl.fileno() in readable:
            try:
                data, fds, _, _ = socket.recv_fds(ctrl, MAX_REQUEST, 2)
            except OSError:
                data, fds = b"", []
            if not data:
                return  # the host closed the socket: nothing left to fork for
            if preload.load():
                _check_threads()
                gc.collect()
                gc.freeze()
            _fork(ctrl, data, fds, runner, host, (wake_r, wake_w), preload.path)


def _check_threads() -> None:
    threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if threads:
        # Their locks may be held at the fork; the child does not get the threads.
        log.warning(
            "threads started while importing the runner; forked runners do not have them",
            extra={"threads": ",".join(threads)},
        )


def _modules_path() -> str | None:
    state = os.environ.get("AGENTENGINE_STATE_DIR", "").strip()
    return os.path.join(state, MODULES_FILE) if state else None


class _Preload:
    """The modules children recorded (MODULES_FILE), imported into the zygote."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._seen: int | None = None

    def load(self) -> bool:
        """Imports the listed modules not imported yet, if the list changed; True if any were."""
        if self.path is None:
            return False
        try:
            st = os.stat(self.path)
            if st.st_mtime_ns == self._seen:
                return False
            self._seen = st.st_mtime_ns
            with open(self.path, encoding="utf-8") as f:
                names = f.read().split()
        except OSError:
            return False
        before = len(sys.modules)
        for name in names:
            if name in sys.modules or name.startswith("__"):
                continue
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - a stale or odd entry must not stop the zygote
                pass
        added = len(sys.modules) - before
        if added:
            log.debug("zygote preloaded modules", extra={"modules": added})
        return added > 0


def _record_modules(path: str) -> None:
    """In a child: writes its imported modules for the zygote's preload (see _Preload)."""
    last = 0
    for delay in RECORD_AFTER:
        time.sleep(delay)
        names = sorted(n for n in list(sys.modules) if not n.startswith("__"))
        if len(names) <= last:
            continue
        last = len(names)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n".join(names) + "\n")
            os.replace(tmp, path)
        except OSError:
            log.debug("cannot record the runner's modules", exc_info=True, extra={"path": path})


def _fork(
    ctrl: socket.socket,
    data: bytes,
    fds: list[int],
    runner: Runner,
    host: int,
    wake: tuple[int, int],
    modules: str | None,
) -> None:
    req: dict[str, Any] = {}
    try:
        req = json.loads(data)
        if len(fds) != 2:
            raise ValueError(f"a fork request carries 2 file descriptors, not {len(fds)}")
        pid = os.fork()
    except Exception as exc:
        for fd in fds:
            os.close(fd)
        _send(ctrl, {"id": req.get("id", 0), "error": f"{type(exc).__name__}: {exc}"})
        return
    if pid == 0:
        _child(ctrl, req, fds, runner, host, wake, modules)  # never returns
    for fd in fds:
        os.close(fd)
    try:
        os.setpgid(pid, pid)  # also done by the child: whichever runs first
    except OSError:
        pass
    _send(ctrl, {"id": req.get("id", 0), "pid": pid})


def _child(
    ctrl: socket.socket,
    req: dict[str, Any],
    fds: list[int],
    runner: Runner,
    host: int,
    wake: tuple[int, int],
    modules: str | None,
) -> None:
    code: int = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ctrl.close()
        for fd in wake:
            os.close(fd)
        os.setpgid(0, 0)
        out, err = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        env = {k: v for k, _, v in (e.partition("=") for e in req.get("env", []))}
        env[ENV_WATCH_PID] = str(host)
        env.pop(ENV_FD, None)
        os.environ.clear()
        os.environ.update(env)
        if req.get("dir"):
            os.chdir(req["dir"])
        from .server import serve

        if modules:
            threading.Thread(target=_record_modules, args=(modules,), name="agentengine-modules", daemon=True).start()
        serve(runner)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        log.error("forked runner failed", exc_info=True)
    finally:
        os._exit(code)


def _reap(ctrl: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(ctrl, {"exit": pid, "status": _describe(status)})


def _describe(status: int) -> str:
    # The words of Go's os.ProcessState.String, which the host's logs use elsewhere.
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"signal: {_SIGNAL_WORDS.get(name, name)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


_SIGNAL_WORDS = {"SIGKILL": "killed", "SIGTERM": "terminated", "SIGSEGV": "segmentation fault", "SIGABRT": "aborted"}


def _send(ctrl: socket.socket, msg: dict[str, Any]) -> None:
    try:
        ctrl.sendall(json.dumps(msg).encode())
    except OSError:
        pass  # the host is gone; the next recv ends the loop
