#!/usr/bin/env bash
# How long `kvtier serve` takes to start with pools of the sizes given, and what memory the pool then
# holds, against a same-run baseline: `fallocate` of a file of the pool file's length on the same
# filesystem (what committing that memory costs with no engine). Each size runs --runs times, the engine
# and the baseline alternating, the pool file deleted in between.
#
# Usage: bench/scripts/pool-startup.sh [--dir /dev/shm] [--sizes 1GiB,8GiB,16GiB] [--runs 3] [--page-size 256KiB]
# Prints one line per run: size, side, milliseconds, and the pool file's allocated bytes. Needs a JDK 25
# (as ./kvtier does), fallocate (util-linux) and free space for the largest size on --dir.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
dir=/dev/shm
sizes=1GiB,8GiB,16GiB
runs=3
page=256KiB
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --page-size) page=$2; shift 2 ;;
    *) echo "pool-startup: unknown argument $1 (known: --dir, --sizes, --runs, --page-size)" >&2; exit 2 ;;
  esac
done
command -v fallocate >/dev/null || { echo "pool-startup: fallocate not found (apt-get install -y util-linux)" >&2; exit 1; }

now_ms() { date +%s%3N; }
pool="$dir/kvtier-startup-$$"
sock="/tmp/kvtier-startup-$$.sock"
cleanup() { [ -n "${engine:-}" ] && kill "$engine" 2>/dev/null; rm -f "$pool" "$pool".* "$sock" "$dir/kvtier-startup-baseline-$$"; }
trap cleanup EXIT

# Build (or find) the jar once, off the clock.
"$root/kvtier" --version >/dev/null

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(git -C "$root" rev-parse --short HEAD 2>/dev/null) dir=$dir page=$page load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# size side ms allocated_bytes"
IFS=, read -ra list <<< "$sizes"
for size in "${list[@]}"; do
  for run in $(seq 1 "$runs"); do
    # kvtier: from the command to its "kvtier serving" line.
    out=$(mktemp)
    start=$(now_ms)
    "$root/kvtier" serve --set pool.path="$pool" --set pool.size="$size" --set pool.page-size="$page" \
      --set ipc.socket-path="$sock" > "$out" 2>&1 &
    engine=$!
    until grep -q "^kvtier serving" "$out"; do
      if ! kill -0 "$engine" 2>/dev/null; then echo "pool-startup: kvtier serve exited:" >&2; cat "$out" >&2; exit 1; fi
      sleep 0.01
    done
    ms=$(( $(now_ms) - start ))
    allocated=$(( $(stat -c '%b * %B' "$pool") ))
    length=$(stat -c %s "$pool")
    echo "$size kvtier $ms $allocated"
    kill "$engine"; wait "$engine" 2>/dev/null || true; engine=
    rm -f "$out" "$pool" "$pool".*
    # The baseline: the same length allocated with no engine.
    base="$dir/kvtier-startup-baseline-$$"
    start=$(now_ms)
    fallocate -l "$length" "$base"
    ms=$(( $(now_ms) - start ))
    echo "$size fallocate $ms $(( $(stat -c '%b * %B' "$base") ))"
    rm -f "$base"
  done
done
