#!/usr/bin/env bash
# Builds the Python package into a virtual environment with `maturin develop` (sharing the
# workspace's target/) and runs its pytest suite. The environment is target/python-venv (or
# CAIRN_VENV); the CLI the tests compare against is CAIRN_BIN, or else target/ci/cairn (the build
# of the README's test command) or target/debug/cairn.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
venv=${CAIRN_VENV:-$root/target/python-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/tests/requirements.txt"
if [ -z "${CAIRN_BIN:-}" ]; then
  for built in "$root/target/ci/cairn" "$root/target/debug/cairn"; do
    if [ -x "$built" ]; then
      export CAIRN_BIN="$built"
      break
    fi
  done
fi
if [ -z "${CAIRN_BIN:-}" ]; then
  cargo build -q -p cairn-cli
fi
(cd "$here" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target" maturin develop -q)
# The annotations and the native module's stubs are checked as an editor would check them.
"$venv/bin/python" -m mypy --ignore-missing-imports "$here/python/cairn"
"$venv/bin/python" -m pytest -q "$here/tests" "$@"
