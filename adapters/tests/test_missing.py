"""An optional dependency known to be missing is remembered (missing.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentengine_adapters.missing import remember_missing

PACKAGE = "ae_missing_fixture"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "needs_optional.py").write_text("RUNS = []\nimport ae_not_installed_dep.sub  # noqa\n")
    (root / "broken.py").write_text("import ae_missing_fixture.nowhere\n")
    (root / "present.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def test_a_module_missing_only_its_optional_dependency_fails_at_once_afterwards(package: Path) -> None:
    name = PACKAGE + ".needs_optional"
    remember_missing(name, "ae_not_installed_dep")
    assert sys.modules[name] is None
    # The module's code does not run again: importing it fails before it is read.
    (package / "needs_optional.py").write_text("raise AssertionError('ran again')\n")
    with pytest.raises(ImportError):
        __import__(name)


def test_other_failures_and_present_modules_are_left_alone(package: Path) -> None:
    broken = PACKAGE + ".broken"
    remember_missing(broken, "ae_not_installed_dep")  # missing something else: not remembered
    assert broken not in sys.modules
    present = PACKAGE + ".present"
    remember_missing(present, "ae_not_installed_dep")
    assert sys.modules[present].VALUE == 1
