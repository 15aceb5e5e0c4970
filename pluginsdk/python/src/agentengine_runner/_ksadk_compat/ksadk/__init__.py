"""agentengine's stand-in for KsADK, used only where the `ksadk` package is not installed.

It provides `ksadk.runtime_context` (the current run's context), which shared tools import.
Any other `ksadk.*` import fails with a message naming the fix: the real package.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

# agentengine_runner.context tells this package from the real one by this marker.
AGENTENGINE_STANDIN = True

_PROVIDED = frozenset({"ksadk.runtime_context"})


def _needs_ksadk(what: str) -> str:
    return (
        f"{what}: agentengine provides only ksadk.runtime_context; this project needs the "
        "ksadk package (add ksadk to its requirements, or `pip install ksadk` into its "
        "environment)"
    )


class _NeedsKsadk:
    """Last on sys.meta_path: reached only for a ksadk submodule nothing else found."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname.startswith("ksadk.") and fullname not in _PROVIDED:
            # name="ksadk" (what is really missing), not fullname: `from ksadk import x`
            # swallows a ModuleNotFoundError named after x and says only "cannot import".
            raise ModuleNotFoundError(_needs_ksadk(f"No module named {fullname!r}"), name="ksadk")
        return None


def __getattr__(name: str) -> object:
    raise AttributeError(_needs_ksadk(f"module 'ksadk' has no attribute {name!r}"))


if not any(isinstance(f, _NeedsKsadk) for f in sys.meta_path):
    sys.meta_path.append(_NeedsKsadk())
