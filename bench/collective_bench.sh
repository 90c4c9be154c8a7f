#!/bin/bash
# `orrery bench collective` benchmark (issue 18): each collective swept over nccl-tests' 31 sizes,
# 8 B to 8 GiB by factors of 2, on 16 GPUs (two DGX H100), in analytical and in flow mode. The
# targets: under 2 s a sweep in analytical mode, under 30 s in flow mode, for the whole command
# (process start, platform build, planning, the replay and printing).
#
#   bench/collective_bench.sh [BUILD_DIR] [REPEATS]      (defaults: build, 3; best of REPEATS)
#
# Prints one line per collective and mode: wall seconds (best of REPEATS), and the simulated
# activities and replay time the command reports.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
orrery=$build/orrery
[ -x "$orrery" ] || { echo "no $orrery: build first (scripts/build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

printf '%-15s %-11s %9s  %s\n' collective mode "wall (s)" "the command's own report"
for coll in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  for mode in analytical flow; do
    best=""
    for _ in $(seq "$repeats"); do
      t0=$(now)
      "$orrery" bench collective "$coll" --platform dgx-h100 --nodes 2 -b 8B -e 8GiB \
        --mode "$mode" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
      t=$(echo "$(now) - $t0" | bc -l)
      if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
    done
    # All-gather and reduce-scatter start at one element per rank (64 B on 16 ranks), as
    # nccl-tests rounds its sizes: 28 sizes there.
    rows=$(grep -cv '^#' "$tmp/log")
    printf '%-15s %-11s %9.3f  %s\n' "$coll" "$mode" "$best" \
      "$(grep '^# simulated' "$tmp/log" | sed 's/^# //')"
  done
done
