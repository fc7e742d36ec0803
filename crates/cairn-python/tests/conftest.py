"""Shared fixtures: a fresh ledger path, and the `cairn` command line to compare against."""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "ledger.redb"


@pytest.fixture(scope="session")
def cairn_bin() -> str:
    """The `cairn` binary of this checkout (`cargo build -p cairn-cli`), or CAIRN_BIN."""
    given = os.environ.get("CAIRN_BIN")
    candidates = [pathlib.Path(given)] if given else [ROOT / "target" / d / "cairn" for d in ("ci", "debug", "release")]
    for c in candidates:
        if c.is_file():
            return str(c)
    raise RuntimeError(
        f"no cairn binary at {', '.join(map(str, candidates))}; run `cargo build -p cairn-cli` or set CAIRN_BIN"
    )
