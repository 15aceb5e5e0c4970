#!/usr/bin/env python3
"""Reads `go test -json` on stdin and prints what a plain `go test` run would: one line per
package, build errors, and the full output of failing tests only. Ends with a count line
("go: N passed, M failed, K skipped"; a package that fails without a failing test, e.g. a
build error or a panic outside tests, counts as one failure).
Exit status: 0 if nothing failed, 1 otherwise (the caller also checks go test's own status)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict

PKG_LINES = ("ok ", "ok\t", "FAIL", "?", "panic", "#")


def main() -> int:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    passed = failed = skipped = 0
    pkg_with_failed_test: set[str] = set()
    failed_pkgs: set[str] = set()
    for raw in sys.stdin:
        try:
            ev = json.loads(raw)
        except ValueError:
            sys.stdout.write(raw)  # plain text, e.g. setup errors
            continue
        action = ev.get("Action")
        pkg = ev.get("Package", "")
        test = ev.get("Test")
        if action in ("build-output", "build-fail"):
            sys.stdout.write(ev.get("Output", ""))
        elif action == "output":
            line = ev.get("Output", "")
            if test:
                out[(pkg, test)].append(line)
            elif line.startswith(PKG_LINES) or "[build failed]" in line:
                sys.stdout.write(line)
            elif not line.startswith(("=== ", "PASS", "coverage:")):
                out[(pkg, "")].append(line)
        elif test and action in ("pass", "fail", "skip"):
            lines = out.pop((pkg, test), [])
            top = "/" not in test
            if action == "fail":
                sys.stdout.write("".join(lines))
                pkg_with_failed_test.add(pkg)
                failed += top
            elif action == "pass":
                passed += top
            else:
                skipped += top
        elif not test and action == "fail":
            failed_pkgs.add(pkg)
            sys.stdout.write("".join(out.pop((pkg, ""), [])))
        elif not test and action in ("pass", "skip"):
            out.pop((pkg, ""), None)
        sys.stdout.flush()
    failed += len(failed_pkgs - pkg_with_failed_test)
    print(f"go: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
