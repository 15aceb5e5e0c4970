"""What the runner needs in a project's environment, and the framework versions the
adapters are tested with.

The runner's requirements are pluginsdk/python/runner-requirements.txt (embedded in the
binary and extracted next to this package); setup installs them with the project's own
requirements, and the doctor checks the installed versions against them. The framework
versions are the pins of pluginsdk/python/constraints.txt (a test keeps them equal); the
doctor only mentions a difference, it never asks for them."""

from __future__ import annotations

import re
from pathlib import Path

# Used when runner-requirements.txt is not next to this package (a copy of the adapters
# on its own); a test keeps it equal to the file.
RUNTIME = {
    "protobuf": ">=4.25,<8",
}

RUNNER_REQUIREMENTS = Path(__file__).resolve().parents[2] / "pluginsdk" / "python" / "runner-requirements.txt"

# Framework packages per AGENTENGINE_FRAMEWORK: (distribution, import name).
FRAMEWORK_PACKAGES = {
    "langgraph": [("langgraph", "langgraph"), ("langchain-core", "langchain_core")],
    "langchain": [("langchain", "langchain"), ("langchain-core", "langchain_core"), ("langgraph", "langgraph")],
    "deepagents": [("deepagents", "deepagents"), ("langchain", "langchain"), ("langgraph", "langgraph")],
    "adk": [("google-adk", "google.adk"), ("google-genai", "google.genai")],
}

FRAMEWORK = {
    "langgraph": "1.2.22",
    "langchain": "1.4.7",
    "langchain-core": "1.7.2",
    "langchain-openai": "1.7.3",
    "deepagents": "0.7.32",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "aiosqlite": "0.22.1",
    "google-adk": "2.13.0",
    "google-genai": "2.34.0",
}

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*([<>=!~][^;#]*)?")


def runtime(path: Path = RUNNER_REQUIREMENTS) -> dict[str, str]:
    """The runner's requirements as {distribution: specifier}."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return dict(RUNTIME)
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _REQUIREMENT.match(line.split("#", 1)[0])
        if m:
            out[m.group(1).lower()] = (m.group(2) or "").replace(" ", "")
    return out or dict(RUNTIME)


def _version(v: str) -> tuple[int, ...]:
    """The release part of a version ("7.36.2" -> (7, 36, 2); "1.62.0rc1" -> (1, 62, 0))."""
    parts = []
    for piece in v.split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def satisfies(version: str, spec: str) -> bool:
    """Whether version meets a specifier set of >=, >, <=, <, ==, != clauses. The runner's
    requirements use no other operators; anything else is not held against a version."""
    have = _version(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = re.match(r"(>=|<=|==|!=|>|<)\s*(\S+)", clause)
        if not m:
            continue
        op, want = m.group(1), _version(m.group(2))
        c = _cmp(have, want)
        ok = {">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0, "==": c == 0, "!=": c != 0}[op]
        if not ok:
            return False
    return True
