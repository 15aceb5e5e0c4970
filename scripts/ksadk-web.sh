#!/usr/bin/env bash
# Puts ksadk-web (KsADK's React UI, as the ksadk wheel ships it built under
# ksadk/server/static) into a cache directory and prints that directory. The web suite's
# ksadk-web tests serve it against agentengine. Only the wheel is fetched (pip download
# --no-deps, ~9 MB), never installed; a second call finds the cache and fetches nothing.
#
# Usage: scripts/ksadk-web.sh [--offline]   (--offline: print the directory if cached, else fail)
# Environment: KSADK_WEB_CACHE (default ~/.cache/agentengine-test/ksadk-web), PYTHON (pip's).
set -euo pipefail
version=0.8.5
cache="${KSADK_WEB_CACHE:-$HOME/.cache/agentengine-test/ksadk-web}"
dir="$cache/ksadk-$version"
if [ -f "$dir/index.html" ] && [ -d "$dir/assets" ]; then echo "$dir"; exit 0; fi
if [ "${1:-}" = "--offline" ]; then
  echo "ksadk-web $version is not in $cache: run scripts/ksadk-web.sh (or bash .ci/run)" >&2
  exit 1
fi
py="${PYTHON:-python3}"
tmp="$(mktemp -d "$cache.XXXXXX" 2>/dev/null || { mkdir -p "$cache" && mktemp -d "$cache.XXXXXX"; })"
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip download --disable-pip-version-check --no-input -q --no-deps "ksadk==$version" -d "$tmp/wheel" >&2
"$py" - "$tmp/wheel" "$tmp/static" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("ksadk-*.whl"))
out = pathlib.Path(sys.argv[2])
prefix = "ksadk/server/static/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not any(n == prefix + "index.html" for n in names):
        sys.exit(f"{wheel.name} has no {prefix}index.html")
    for n in names:
        rel = pathlib.PurePosixPath(n[len(prefix):])
        if rel.is_absolute() or ".." in rel.parts:
            sys.exit(f"unsafe path in {wheel.name}: {n}")
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(z.read(n))
PY
mkdir -p "$cache"
rm -rf "$dir"
mv "$tmp/static" "$dir"
echo "$dir"
