#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each): bash fuzz/run.sh [SECONDS]
# cargo-fuzz needs nightly features; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for t in decode_record json_line reference checkpoint score; do
  echo "== $t for ${secs}s"
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time="$secs" -rss_limit_mb=2048
done
