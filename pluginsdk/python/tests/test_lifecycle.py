"""The go-plugin process contract: handshake, health, stdio, shutdown, signals, parent watch."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

import grpc
import pytest
from client import Host
from conftest import DEMO, Plugin, plugin_env, read_line, start_plugin, stop

from agentengine_runner._proto.grpc_health.v1 import health_pb2
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb

SERVING = health_pb2.HealthCheckResponse.SERVING


def test_handshake_line(plugin: Plugin) -> None:
    assert re.fullmatch(r"1\|1\|unix\|[^|]+\.sock\|grpc\n", plugin.handshake), plugin.handshake
    assert os.path.dirname(plugin.address) == plugin.socket_dir
    assert len(plugin.address) < 104


def test_health_describe_and_summarize(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            assert await host.check("plugin") == SERVING
            d = await host.runner.Describe(pb.DescribeRequest())
            assert (d.protocol_version, d.framework, d.agent_name) == ("1", "langgraph", "demo")
            caps = d.capabilities
            assert (caps.resume, caps.summarize) == (
                True,
                True,  # derived: DemoRunner overrides summarize
            )
            s = await host.runner.Summarize(
                pb.SummarizeRequest(history_json=b'[{"role":"user"},{"role":"model"}]')
            )
            assert s.summary == "2 messages"

    asyncio.run(main())


def test_call_dispatches_to_the_runner(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            r = await host.runner.Call(pb.CallRequest(method="demo.echo", json=b'{"a":[1,"x"]}'))
            assert json.loads(r.json) == {"echo": {"a": [1, "x"]}}
            r = await host.runner.Call(pb.CallRequest(method="demo.echo"))
            assert json.loads(r.json) == {"echo": None}
            for method, raw, code, msg in [
                ("demo.nothing", b"{}", grpc.StatusCode.UNIMPLEMENTED, "demo.nothing"),
                ("demo.refuse", b"{}", grpc.StatusCode.FAILED_PRECONDITION, "the demo lacks what this needs"),
                ("demo.raise", b"{}", grpc.StatusCode.UNKNOWN, "ValueError: boom"),
                ("demo.echo", b"{not json", grpc.StatusCode.INVALID_ARGUMENT, "not JSON"),
            ]:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await host.runner.Call(pb.CallRequest(method=method, json=raw))
                assert err.value.code() == code and msg in (err.value.details() or ""), err.value

    asyncio.run(main())


def test_print_reaches_stdio_not_stdout(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            events = await host.events("print")
            assert events[0].text_delta.text == "printed"
            assert await read_stdio_line(host) == b"hello from user code\n"
            await host.shutdown()

    asyncio.run(main())
    assert plugin.wait(5) == 0
    assert plugin.proc.stdout is not None
    assert plugin.proc.stdout.read() == b"", "only the handshake may reach the real stdout"


def test_import_time_print_does_not_break_handshake(socket_dir: str) -> None:
    p = start_plugin(socket_dir, "noisy_runner")
    try:
        assert p.handshake.startswith("1|1|unix|")

        async def main() -> bytes:
            async with Host(p.target) as host:
                return await read_stdio_line(host)

        assert asyncio.run(main()) == b"banner printed while importing user code\n"
    finally:
        stop(p)


async def read_stdio_line(host: Host) -> bytes:
    # print() writes the text and the newline separately: they may arrive as two chunks.
    got = b""
    async with asyncio.timeout(5):
        async for chunk in host.stream_stdio():
            assert chunk.channel == 1  # STDOUT
            got += chunk.data
            if got.endswith(b"\n"):
                break
    return got


def test_shutdown_exits_and_cleans_socket(plugin: Plugin) -> None:
    async def main() -> float:
        async with Host(plugin.target) as host:
            assert await host.check() == SERVING
            t0 = time.monotonic()
            await host.shutdown()
            return t0

    t0 = asyncio.run(main())
    assert plugin.wait(3) == 0
    elapsed = time.monotonic() - t0
    print(f"Shutdown to exit: {elapsed * 1e3:.0f} ms")
    assert elapsed < 1.5, f"exit took {elapsed:.2f}s"
    assert not os.path.exists(plugin.address)


def test_shutdown_cancels_inflight_runs(plugin: Plugin) -> None:
    marker = os.path.join(plugin.socket_dir, "cancelled")

    async def main() -> None:
        async with Host(plugin.target) as host:
            call = host.run("sleep", payload={"marker": marker})
            first = await call.read()
            assert first.text_delta.text == "sleeping"
            await host.shutdown()
            # The stream ends with an error status (the server stopped), not with EOF.
            with pytest.raises(grpc.RpcError):
                while await call.read() is not grpc.aio.EOF:
                    pass

    asyncio.run(main())
    assert plugin.wait(3) == 0
    assert os.path.exists(marker), "the run task was not cancelled on shutdown"
    assert open(marker).read().split()[1] == "CancelledError"


def test_no_cookie_exits_1_with_message(socket_dir: str) -> None:
    env = plugin_env(socket_dir)
    del env["AGENTENGINE_RUNNER"]
    r = subprocess.run(
        [sys.executable, "-m", "agentengine_runner", DEMO], env=env, capture_output=True, timeout=30
    )
    assert r.returncode == 1
    assert r.stdout == b""
    assert b"not meant to be executed directly" in r.stderr
    assert b"AGENTENGINE_RUNNER" in r.stderr


def test_wrong_protocol_version_exits_1(socket_dir: str) -> None:
    env = plugin_env(socket_dir, PLUGIN_PROTOCOL_VERSIONS="2,3")
    r = subprocess.run(
        [sys.executable, "-m", "agentengine_runner", DEMO], env=env, capture_output=True, timeout=30
    )
    assert r.returncode == 1
    assert r.stdout == b""
    assert b"incompatible runner protocol" in r.stderr


def test_sigint_ignored_sigterm_exits(plugin: Plugin) -> None:
    plugin.proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert plugin.proc.poll() is None, "SIGINT must be ignored"

    async def check() -> int:
        async with Host(plugin.target) as host:
            return await host.check()

    assert asyncio.run(check()) == SERVING
    plugin.proc.send_signal(signal.SIGTERM)
    assert plugin.wait(3) == 0


def test_exits_when_parent_dies(socket_dir: str) -> None:
    # parent.py starts the runner, reports its pid and handshake, then just sleeps; we
    # SIGKILL it (as if the host crashed) and the orphaned runner must exit on its own.
    parent_src = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'agentengine_runner', {DEMO!r}],"
        " stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)\n"
        "line = p.stdout.readline().decode()\n"
        "print(p.pid, line, end='', flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_src],
        env=plugin_env(socket_dir),
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        pid_s, handshake = read_line(parent.stdout, 30).decode().split(" ", 1)
        pid, address = int(pid_s), handshake.split("|")[3]

        async def check() -> int:
            async with Host(f"unix:{address}") as host:
                return await host.check()

        assert asyncio.run(check()) == SERVING
        parent.kill()
        parent.wait()
        t0 = time.monotonic()
        while alive(pid) and time.monotonic() - t0 < 5:
            time.sleep(0.05)
        assert not alive(pid), "runner survived its parent"
        print(f"runner exited {time.monotonic() - t0:.2f} s after its parent was killed")
        # ~1 s poll interval plus a short graceful stop
        assert time.monotonic() - t0 < 3
    finally:
        if parent.poll() is None:
            parent.kill()
        if parent.stdout:
            parent.stdout.close()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")  # a zombie has exited; only its reaping is pending
    except FileNotFoundError:
        return False


def test_stderr_is_hclog_json(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            await host.events("raise")  # error log with a traceback field
            await host.shutdown()

    asyncio.run(main())
    plugin.wait(3)
    lines = plugin.stderr().splitlines()
    assert lines, "expected log lines"
    for line in lines:
        entry = json.loads(line)
        assert set(entry) >= {"@level", "@message", "@timestamp"}, entry
        assert all(isinstance(v, str) for v in entry.values()), entry
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)", entry["@timestamp"]
        ), entry["@timestamp"]
    errors = [json.loads(line) for line in lines if json.loads(line)["@level"] == "error"]
    assert errors and "Traceback" in errors[0]["error"] and "boom" in errors[0]["error"]


@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        (
            "no_such_module",
            {},
            "cannot load runner no_such_module: ModuleNotFoundError: No module named 'no_such_module'",
        ),
        (DEMO, {"PLUGIN_UNIX_SOCKET_DIR": "/nonexistent-dir"}, "runner cannot serve"),
    ],
)
def test_startup_failure_is_one_hclog_error_and_exit_1(
    socket_dir: str, spec: str, extra: dict[str, str], message: str
) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "agentengine_runner", spec],
        env=plugin_env(socket_dir, **extra),
        capture_output=True,
        timeout=30,
    )
    assert r.returncode == 1
    assert r.stdout == b""
    entries = [json.loads(line) for line in r.stderr.decode().splitlines() if line.startswith("{")]
    assert [e["@message"] for e in entries if e["@level"] == "error"] == [message]
