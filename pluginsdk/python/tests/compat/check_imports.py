"""Imports every generated stub of the installed runner SDK (plus any modules named on the
command line, in order) with warnings as errors, and prints the runtime versions.

Run by run.sh inside each compatibility venv; exits non-zero on the first failure.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import pkgutil
import sys
import warnings


def stub_modules() -> list[str]:
    import agentengine_runner._proto as proto

    names = [
        m.name
        for m in pkgutil.walk_packages(proto.__path__, proto.__name__ + ".")
        if m.name.endswith(("_pb2", "_pb2_grpc"))
    ]
    if len(names) < 10:  # runner, 3 go-plugin services, health: a _pb2 and _pb2_grpc each
        raise SystemExit(f"only {len(names)} stub modules found: {names}")
    return sorted(names)


def main(argv: list[str]) -> None:
    warnings.simplefilter("error")
    before = [a for a in argv if not a.startswith("+")]
    after = [a[1:] for a in argv if a.startswith("+")]
    for name in [*before, *stub_modules(), *after, "agentengine_runner.server"]:
        importlib.import_module(name)
    import agentengine_runner

    print(
        f"ok: {len(stub_modules())} stubs from {agentengine_runner.__file__} on "
        f"grpcio {md.version('grpcio')}, protobuf {md.version('protobuf')}"
        + (f", with {', '.join(before + after)}" if before or after else "")
    )


if __name__ == "__main__":
    main(sys.argv[1:])
