"""`python -m agentengine_runner module[:attr]`: the recommended way to start a runner.

The handshake checks and the stdout capture happen before the user module is imported, so
import-time prints and library banners cannot corrupt the go-plugin handshake line.
attr (default "runner") may be a Runner instance, a Runner subclass or a zero-argument
factory returning a Runner.
"""

from __future__ import annotations

import importlib
import sys

from . import zygote
from .hclog import get_logger
from .runner import Runner
from .server import prepare, serve


def load_runner(spec: str) -> Runner:
    module_name, _, attr = spec.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in (attr or "runner").split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, Runner):
        obj = obj()
    elif not isinstance(obj, Runner) and callable(obj):
        obj = obj()
    if not isinstance(obj, Runner):
        raise TypeError(f"{spec} is not a Runner (got {type(obj).__name__})")
    return obj


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: python -m agentengine_runner module[:attr]\n")
        raise SystemExit(2)
    fd = zygote.fd_from_env()
    if fd is not None:
        # The host pre-forks this runner's processes from here (see zygote).
        spec = args[0]
        zygote.run(fd, lambda: load_runner(spec), spec)
        return
    prepare()
    try:
        runner = load_runner(args[0])
    except Exception:
        # One structured line the host can show as the reason the runner did not start.
        exc = sys.exc_info()[1]
        get_logger().error(f"cannot load runner {args[0]}: {type(exc).__name__}: {exc}", exc_info=True, extra={"spec": args[0]})
        raise SystemExit(1) from None
    serve(runner)


if __name__ == "__main__":
    main()
