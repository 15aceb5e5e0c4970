"""Optional dependencies known to be missing, remembered as Python remembers them.

A framework that imports an optional module inside a function, and catches the
ImportError when its dependency is not installed, pays for a whole import attempt at
every call: a failed import is not cached, so the module's code runs again up to the
import that fails. google-adk 2.x does this with its A2A agent in `build_node`, which
runs for the nodes of every turn: without a2a-sdk that was about 0.5 ms of an offline
ADK turn's 3.1 ms, and several milliseconds more when the module's bytecode cache is
stale. A module set to None in sys.modules makes every later import of it raise
ImportError at once; that is what the framework gets anyway, sooner.
"""

from __future__ import annotations

import importlib
import sys


def remember_missing(module: str, dependency: str) -> None:
    """Imports module; if that fails only because dependency (a top-level package) is not
    installed, later imports of module fail at once. Any other outcome is left as is."""
    if module in sys.modules:
        return
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == dependency:
            sys.modules[module] = None  # type: ignore[assignment]
    except Exception:  # noqa: BLE001 - some other fault: the framework will meet it itself
        pass
