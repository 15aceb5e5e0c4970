"""`python -m agentengine_adapters doctor`: can this project run here, and if not, how to
fix it. Prints one JSON object {"ok", "checks": [{"name", "ok", "detail", "fix"}]} on
stdout and exits 0 when every check passed, else 1. Runs outside go-plugin (no cookie).

Whatever the project prints while it is imported goes to stderr, so stdout stays one JSON
document.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata as metadata
import json
import os
import shlex
import sys
import traceback
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import pins
from .config import FRAMEWORKS, Settings
from .hooks import HOOK_NAMES, SIGNATURE, find_hook, signature_problem
from .loader import (
    EntryPointError,
    agent_candidates,
    get_attr,
    import_module,
    kind_of,
    parse_entry,
    prepare_sys_path,
)

MIN_PYTHON = (3, 11)
# Import names of the runner's requirements whose import name differs from the distribution's.
RUNTIME_IMPORTS = {"protobuf": "google.protobuf"}


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def in_environment() -> bool:
    """True when this interpreter is the project's own environment, where a fix may
    install: the host says so (AGENTENGINE_DOCTOR_PROJECT_ENV, set by `agentengine
    doctor`); run by hand, any virtualenv or conda environment counts."""
    told = os.environ.get("AGENTENGINE_DOCTOR_PROJECT_ENV")
    if told is not None:
        return told == "1"
    return sys.prefix != sys.base_prefix or (Path(sys.prefix) / "conda-meta").is_dir()


def setup_command(project_dir: Path) -> str:
    return f"agentengine setup {shlex.quote(str(project_dir))}"


def install_fix(project_dir: Path, *requirements: str) -> str:
    """The command that installs requirements into this project's environment: its own
    pip in a virtualenv, else `agentengine setup` (which creates one). Never a pip of an
    interpreter outside the project."""
    if not in_environment():
        return setup_command(project_dir)
    return f"{shlex.quote(sys.executable)} -m pip install " + " ".join(shlex.quote(r) for r in requirements)


def check_python(project_dir: Path) -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] >= MIN_PYTHON
    return Check(
        "python",
        ok,
        f"Python {version} at {sys.executable}",
        "" if ok else f"install Python 3.11 or newer, then run `{setup_command(project_dir)}` (it creates .venv)",
    )


def check_runtime(project_dir: Path) -> Check:
    problems, found = [], []
    wanted = pins.runtime()
    for dist, spec in wanted.items():
        module = RUNTIME_IMPORTS.get(dist, dist.replace("-", "_"))
        try:
            importlib.import_module(module)
            have = metadata.version(dist)
        except Exception as exc:  # ImportError, PackageNotFoundError, broken wheels
            problems.append(f"{dist}: not importable ({type(exc).__name__}: {exc})")
            continue
        found.append(f"{dist}=={have}")
        if spec and not pins.satisfies(have, spec):
            problems.append(f"{dist} is {have}; the runner needs {dist}{spec}")
    if problems:
        return Check("runtime", False, "; ".join(problems), install_fix(project_dir, *(d + s for d, s in wanted.items())))
    return Check("runtime", True, ", ".join(found))


def check_framework(framework: str, project_dir: Path) -> Check:
    if framework not in FRAMEWORKS:
        return Check(
            "framework",
            False,
            f"unsupported framework {framework!r}",
            f"set `framework:` to one of {', '.join(FRAMEWORKS)} in agentengine.yaml",
        )
    missing, found, notes = [], [], []
    for dist, module in pins.FRAMEWORK_PACKAGES[framework]:
        try:
            importlib.import_module(module)
            have = metadata.version(dist)
        except Exception as exc:
            missing.append((dist, f"{type(exc).__name__}: {exc}"))
            continue
        found.append(f"{dist}=={have}")
        want = pins.FRAMEWORK.get(dist)
        if want and have != want:
            notes.append(f"{dist} {have} differs from the tested {want}")
    if missing:
        detail = "; ".join(f"{d} not importable ({why})" for d, why in missing)
        return Check("framework", False, detail, install_fix(project_dir, *(d for d, _ in missing)))
    return Check("framework", True, ", ".join(found) + (f" ({'; '.join(notes)})" if notes else ""))


def check_checkpointer(settings: Settings) -> Check:
    if settings.framework == "adk":
        return Check("checkpointer", True, "not used: ADK sessions are rebuilt from the host's store each turn")
    try:
        importlib.import_module("agentengine_adapters.checkpoint")
    except Exception as exc:
        return Check(
            "checkpointer",
            False,
            f"the bridge's checkpointer does not load ({type(exc).__name__}: {exc})",
            "check the framework check above: the checkpointer needs only langgraph",
        )
    return Check("checkpointer", True, "checkpoints are kept by the agentengine host, in its session store")


def check_entry(settings: Settings) -> tuple[Check, ModuleType | None, str]:
    prepare_sys_path(settings.project_dir)
    spec = parse_entry(settings.entry_point, settings.agent_variable, settings.project_dir)
    where = str(spec.file) if spec.file else spec.module
    try:
        module = import_module(spec)
    except EntryPointError as exc:
        files = sorted(p.name for p in settings.project_dir.glob("*.py"))[:5]
        example = f"{files[0]}:{spec.attr}" if files else f"agent.py:{spec.attr}"
        return Check(
            "entry_module",
            False,
            str(exc),
            f"set `entry_point: {example}` in {settings.project_dir / 'agentengine.yaml'}"
            + (f" (Python files here: {', '.join(files)})" if files else ""),
        ), None, spec.attr
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] != spec.module.split(".")[0]:
            local = local_package_check(exc, where, settings.project_dir)
            if local is not None:
                return local, None, spec.attr
            return Check("entry_module", False, f"{where}: {type(exc).__name__}: {exc}{project_frame(exc, settings.project_dir)}",
                         missing_package_fix(settings.project_dir)), None, spec.attr
        return Check(
            "entry_module",
            False,
            f"{type(exc).__name__}: {exc}",
            f"set `entry_point:` in {settings.project_dir / 'agentengine.yaml'} to an importable "
            "module or file (e.g. agent.py:graph)",
        ), None, spec.attr
    except ImportError as exc:
        # Raised inside an installed package (e.g. google-adk's LiteLlm without litellm):
        # the fix is a package for the project's environment, never an edit of the library.
        return Check("entry_module", False, f"{where}: {type(exc).__name__}: {exc}{project_frame(exc, settings.project_dir)}",
                     setup_command(settings.project_dir)), None, spec.attr
    except BaseException as exc:  # noqa: BLE001 - the user's import may raise anything
        at = project_frame(exc, settings.project_dir)
        check = (
            f"cd {shlex.quote(str(settings.project_dir))} && "
            f"{shlex.quote(sys.executable)} -c {shlex.quote('import ' + spec.module)}"
        )
        return Check(
            "entry_module",
            False,
            f"{type(exc).__name__}: {exc}{at}",
            f"fix the error{at}, then check with: {check}",
        ), None, spec.attr
    return Check("entry_module", True, f"imported {module.__name__} from {where}"), module, spec.attr


def project_frame(exc: BaseException, project_dir: Path) -> str:
    """" at file:line" of the innermost traceback frame in the project's own code, so a
    message never points into an installed library."""
    root = str(project_dir.resolve())
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.abspath(frame.filename)
        if path.startswith(root + os.sep) and f"{os.sep}site-packages{os.sep}" not in path and f"{os.sep}." not in path[len(root):]:
            return f" at {os.path.relpath(path, root)}:{frame.lineno}"
    return ""


def local_package(name: str, project_dir: Path) -> Path | None:
    """The folder holding a package or module `name` of the user's own: in the project
    (one level down) or in one of its parent directories. None when there is none, so
    the missing module is one to install."""
    root = project_dir.resolve()

    def holds(base: Path) -> bool:
        return (base / name).is_dir() or (base / f"{name}.py").is_file()

    try:
        subdirs = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith((".", "_")) and d.name not in ("venv", "node_modules"))
    except OSError:
        subdirs = []
    for base in [*subdirs, *list(root.parents)[:4]]:
        if holds(base):
            return base
    return None


def local_package_check(exc: ModuleNotFoundError, where: str, project_dir: Path) -> Check | None:
    """The check for a missing module that is a folder of the user's, not a PyPI
    package: pip cannot install it; the project's path must include its folder."""
    top = (exc.name or "").split(".")[0]
    base = local_package(top, project_dir)
    if base is None:
        return None
    rel = os.path.relpath(base, project_dir.resolve())
    return Check(
        "entry_module",
        False,
        f"{where}: {type(exc).__name__}: {exc}{project_frame(exc, project_dir)}; `{top}` is not a PyPI package but a "
        f"folder of yours in {base}, which is not on the runner's path (the project directory, its src/, "
        "and PYTHONPATH from .env or agentengine.yaml's `env:`)",
        f"add its folder to the path in {project_dir / 'agentengine.yaml'}: `env: {{PYTHONPATH: {rel}}}` "
        f"(relative to the project), or move `{top}` into the project",
    )


def missing_package_fix(project_dir: Path) -> str:
    requirements = project_dir / "requirements.txt"
    if not in_environment() or not requirements.exists():
        return setup_command(project_dir)
    return install_fix(project_dir, "-r", str(requirements))


def check_variable(settings: Settings, module: ModuleType | None, attr: str) -> Check:
    if module is None:
        return Check("agent_variable", False, "not checked: the entry module did not import", "fix entry_module first")
    try:
        obj = get_attr(module, attr)
    except EntryPointError as exc:
        candidates = agent_candidates(module)
        fix = (
            f"set `agent_variable: {candidates[0]}` in agentengine.yaml"
            if candidates
            else f"assign the agent in {module.__file__}: {attr} = builder.compile()"
        )
        return Check("agent_variable", False, str(exc), fix)
    if settings.framework == "adk":
        return check_adk_variable(module, attr, obj)
    kind = kind_of(obj)
    allowed = {"graph", "builder", "factory"} if settings.framework in ("langgraph", "deepagents") else {"graph", "builder", "runnable", "factory"}
    if settings.framework == "langgraph":
        allowed.add("runnable")
    if kind not in allowed:
        return Check(
            "agent_variable",
            False,
            f"{attr} is a {type(obj).__name__} ({kind}), not a LangGraph graph or LangChain Runnable",
            f"assign a compiled graph to {attr} in {module.__file__} (e.g. {attr} = create_agent(...))",
        )
    return Check("agent_variable", True, f"{attr}: {type(obj).__module__}.{type(obj).__name__} ({kind})")


def check_adk_variable(module: ModuleType, attr: str, obj: Any) -> Check:
    try:
        from .adk_bridge import is_adk_agent
    except Exception as exc:  # google-adk missing: the framework check says how to fix it
        return Check("agent_variable", False, f"not checked: google-adk not importable ({type(exc).__name__}: {exc})", "fix framework first")
    if callable(obj) and not is_adk_agent(obj) and not isinstance(obj, type):
        return Check("agent_variable", True, f"{attr}: a factory (called once at start)")
    if not is_adk_agent(obj):
        return Check(
            "agent_variable",
            False,
            f"{attr} is a {type(obj).__name__}, not a google-adk agent (LlmAgent / BaseAgent) or App",
            f"assign the root agent in {module.__file__}: {attr} = LlmAgent(...)",
        )
    return Check("agent_variable", True, f"{attr}: {type(obj).__module__}.{type(obj).__name__}")


def check_hook(module: ModuleType | None) -> Check:
    if module is None:
        return Check("hook", False, "not checked: the entry module did not import", "fix entry_module first")
    found = find_hook(module, *HOOK_NAMES)
    if found is None:
        return Check("hook", True, "no ksadk_prepare_state / ksadk_prepare_input: the default input mapping is used")
    name, hook = found
    problem = signature_problem(hook)
    if problem:
        return Check(
            "hook",
            False,
            f"{name}: {problem}",
            f"define it in {module.__file__} as: def {name}{SIGNATURE} -> dict",
        )
    return Check("hook", True, f"{name}{SIGNATURE}")


def check_runner_class(settings: Settings) -> Check:
    """A project naming KsADK's runner_class answers through that class, not an agent
    object: the class must import from the entry and build on the real ksadk."""
    from .ksadk_bridge import FIELD, ksadk_installed, load_runner_class, missing_detail, missing_fix

    project_dir = settings.project_dir
    if not ksadk_installed():
        fix = missing_fix(settings)
        if in_environment():
            fix += f" (or install it now: {install_fix(project_dir, 'ksadk')})"
        return Check(FIELD, False, missing_detail(settings), fix)
    try:
        cls = load_runner_class(settings)
    except BaseException as exc:  # noqa: BLE001 - the user's import may raise anything
        at = project_frame(exc, project_dir)
        return Check(
            FIELD,
            False,
            f"{type(exc).__name__}: {exc}{at}",
            f"fix the error{at}, or set `{FIELD}:` in {project_dir / 'agentengine.yaml'} to "
            "module.Class of a subclass of ksadk's LangGraphRunner / BaseRunner",
        )
    bases = ", ".join(f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__[1:3])
    return Check(
        FIELD,
        True,
        f"{settings.runner_class} ({bases}): the project answers through its stream(); "
        f"{settings.agent_variable} is not used",
    )


def check_sdk_runner(module: ModuleType | None, attr: str) -> Check:
    """A `framework: python` project's object: a Runner of the SDK (an instance, a
    subclass or a zero-argument factory), as `python -m agentengine_runner` loads it."""
    if module is None:
        return Check("agent_variable", False, "not checked: the entry module did not import", "fix entry_module first")
    from agentengine_runner import Runner

    try:
        obj = get_attr(module, attr)
    except EntryPointError as exc:
        fix = f"define {attr} in {module.__file__}: class {attr}(Runner): ... (or write its name after ':' in entry_point)"
        return Check("agent_variable", False, str(exc), fix)
    if isinstance(obj, Runner) or (isinstance(obj, type) and issubclass(obj, Runner)) or (callable(obj) and not isinstance(obj, type)):
        return Check("agent_variable", True, f"{attr}: {getattr(obj, '__name__', type(obj).__name__)}")
    return Check(
        "agent_variable",
        False,
        f"{attr} is a {type(obj).__name__}, not an agentengine_runner.Runner",
        f"make {attr} in {module.__file__} a subclass of agentengine_runner.Runner, an instance of one, or a function returning one",
    )


def run_checks(settings: Settings) -> list[Check]:
    project_dir = settings.project_dir
    if settings.framework == "python":
        framework = Check("framework", True, "a runner on the Python runner SDK (agentengine_runner, shipped with agentengine)")
        entry, module, attr = check_entry(settings)
        return [check_python(project_dir), check_runtime(project_dir), framework, entry, check_sdk_runner(module, attr)]
    checks = [check_python(project_dir), check_runtime(project_dir), check_framework(settings.framework, project_dir), check_checkpointer(settings)]
    if settings.runner_class:
        return [*checks, check_runner_class(settings)]
    entry, module, attr = check_entry(settings)
    checks += [entry, check_variable(settings, module, attr), check_hook(module)]
    return checks


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    # fd level too: C extensions and subprocesses write to fd 1 directly.
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def report(checks: list[Check]) -> dict[str, Any]:
    return {"ok": all(c.ok for c in checks), "checks": [asdict(c) for c in checks]}


def main() -> int:
    with stdout_to_stderr():
        settings = Settings.from_env()
        os.chdir(settings.project_dir) if Path(settings.project_dir).is_dir() else None
        checks = run_checks(settings)
    out = report(checks)
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0 if out["ok"] else 1
