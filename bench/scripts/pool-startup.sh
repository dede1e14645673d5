#!/usr/bin/env bash
# How long `kvtier serve` takes to start with pools of the sizes given, and what memory the pool then
# holds, against a same-run baseline: `fallocate` of a file of the pool file's length on the same
# filesystem (what committing that memory costs with no engine). Each size runs --runs times, the sides
# alternating (their order reversed every other run), the pool file deleted in between.
#
# Two times per engine run: until it serves (its "kvtier serving" line, printed once its socket accepts
# clients) and until its pool file is wholly allocated (the file's allocated blocks, stat(1), reach its
# length: with pool.allocate-first the engine serves first and allocates the rest in the background).
# Then the engine's own count, pool_pages_allocated read with `kvtier stat --json`, and its memory: the
# pool file's allocated bytes over the page payload (the trailer blocks' and the metadata's overhead) and
# the engine's RSS (VmRSS, and the part of it that is shared memory, RssShmem).
#
# Usage: bench/scripts/pool-startup.sh [--dir /dev/shm] [--sizes 1GiB,8GiB,16GiB] [--runs 3] [--page-size 256KiB]
#          [--base DIR] [--set KEY=VALUE ...]
#   --base DIR   also run the kvtier of another tree (a build of main, say) as side "base", alternating
#   --set        a setting for this tree's engine only (pool.allocate-first=16GiB measures the old start)
# Prints one line per run: size, side, ms until serving, ms until allocated, the pool file's allocated
# bytes, allocated/payload, RSS and RssShmem in KiB, and pool_pages_allocated/pages. Needs a JDK 25 (as
# ./kvtier does), fallocate (util-linux) and free space for the largest size on --dir.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
dir=/dev/shm
sizes=1GiB,8GiB,16GiB
runs=3
page=256KiB
base=
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --page-size) page=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    *) echo "pool-startup: unknown argument $1 (known: --dir, --sizes, --runs, --page-size, --base, --set)" >&2; exit 2 ;;
  esac
done
command -v fallocate >/dev/null || { echo "pool-startup: fallocate not found (apt-get install -y util-linux)" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base/kvtier" ] || { echo "pool-startup: --base $base has no kvtier script" >&2; exit 2; }

now_ms() { date +%s%3N; }
allocated_bytes() { echo $(( $(stat -c '%b * %B' "$1") )); }
to_bytes() {
  local n=${1%%[KMG]iB}
  case "$1" in *KiB) echo $(( n << 10 )) ;; *MiB) echo $(( n << 20 )) ;; *GiB) echo $(( n << 30 )) ;; *) echo "$1" ;; esac
}
pool="$dir/kvtier-startup-$$"
sock="/tmp/kvtier-startup-$$.sock"
cleanup() { [ -n "${engine:-}" ] && kill "$engine" 2>/dev/null; rm -f "$pool" "$pool".* "$sock" "$dir/kvtier-startup-baseline-$$"; }
trap cleanup EXIT

# Build (or find) the jars once, off the clock.
"$root/kvtier" --version >/dev/null
[ -z "$base" ] || "$base/kvtier" --version >/dev/null

# One engine start: from the command to its "kvtier serving" line, then to its pool file wholly allocated.
run_engine() {
  local side=$1 tree=$2 size=$3; shift 3
  local out start serve full length allocated rss shmem gauge
  out=$(mktemp)
  start=$(now_ms)
  "$tree/kvtier" serve --set pool.path="$pool" --set pool.size="$size" --set pool.page-size="$page" \
    --set ipc.socket-path="$sock" "$@" > "$out" 2>&1 &
  engine=$!
  until grep -q "^kvtier serving" "$out"; do
    if ! kill -0 "$engine" 2>/dev/null; then echo "pool-startup: kvtier serve exited:" >&2; cat "$out" >&2; exit 1; fi
    sleep 0.01
  done
  serve=$(( $(now_ms) - start ))
  length=$(stat -c %s "$pool")
  until [ "$(allocated_bytes "$pool")" -ge "$length" ]; do
    if ! kill -0 "$engine" 2>/dev/null; then echo "pool-startup: kvtier serve exited:" >&2; cat "$out" >&2; exit 1; fi
    if grep -q "allocating the pool's blocks in the background stopped" "$out"; then break; fi
    sleep 0.01
  done
  full=$(( $(now_ms) - start ))
  allocated=$(allocated_bytes "$pool")
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$engine/status")
  shmem=$(awk '/^RssShmem/ {print $2}' "/proc/$engine/status")
  gauge=$("$tree/kvtier" stat --json --pool "$pool" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("%s/%s" % (s["counters"].get("pool_pages_allocated", "-"), s["pages"]))' || echo "-")
  echo "$size $side $serve $full $allocated $(python3 -c "print('%.4f' % ($allocated / $(to_bytes "$size")))") $rss $shmem $gauge"
  kill "$engine"; wait "$engine" 2>/dev/null || true; engine=
  rm -f "$out" "$pool" "$pool".*
  last_length=$length
}

run_fallocate() {
  local size=$1 length=$2 base_file start ms allocated
  base_file="$dir/kvtier-startup-baseline-$$"
  start=$(now_ms)
  fallocate -l "$length" "$base_file"
  ms=$(( $(now_ms) - start ))
  allocated=$(allocated_bytes "$base_file")
  echo "$size fallocate $ms $ms $allocated $(python3 -c "print('%.4f' % ($allocated / $(to_bytes "$size")))") - - -"
  rm -f "$base_file"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(git -C "$root" rev-parse --short HEAD 2>/dev/null)${base:+ base $(git -C "$base" rev-parse --short HEAD 2>/dev/null)} dir=$dir page=$page ${extra[*]:-} load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# size side serve_ms allocated_ms allocated_bytes allocated/payload rss_kib rss_shmem_kib pool_pages_allocated/pages"
IFS=, read -ra list <<< "$sizes"
for size in "${list[@]}"; do
  for run in $(seq 1 "$runs"); do
    sides=(kvtier fallocate)
    [ -z "$base" ] || sides=(base kvtier fallocate)
    if [ $(( run % 2 )) -eq 0 ]; then
      reversed=(); for (( i=${#sides[@]}-1; i>=0; i-- )); do reversed+=("${sides[$i]}"); done; sides=("${reversed[@]}")
    fi
    last_length=
    pending_fallocate=
    for side in "${sides[@]}"; do
      case "$side" in
        kvtier) run_engine kvtier "$root" "$size" "${extra[@]}" ;;
        base) run_engine base "$base" "$size" ;;
        # The baseline allocates the pool file's length, known once an engine ran: first in a run, it runs last.
        fallocate) if [ -n "$last_length" ]; then run_fallocate "$size" "$last_length"; else pending_fallocate=1; fi ;;
      esac
    done
    [ -z "$pending_fallocate" ] || run_fallocate "$size" "$last_length"
  done
done
