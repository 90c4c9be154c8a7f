#!/bin/bash
# Plan-search benchmark (issue 19): `orrery plan` over every valid TP x PP x micro-batch x ZeRO x
# recomputation x schedule plan of LLaMA-2 70B on 256 H100s
# (scenarios/studies/llama2-70b-plan-search.yaml, 1,014 plans; those that do not fit 80 GB are
# recorded without simulating them). Target: under 2 minutes with -j 2 on a 2-core machine.
#
#   bench/plan_bench.sh [BUILD_DIR] [JOBS]        (defaults: build, 2)
#
# Prints the whole command's wall time, peak memory and the plan counts. Other work on the
# machine slows the run down: repeat, and read the best.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${2:-2}
orrery=$build/orrery
[ -x "$orrery" ] || { echo "no $orrery: build first (scripts/build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/time -f '%e %M' -o "$tmp/time" "$orrery" plan scenarios/studies/llama2-70b-plan-search.yaml \
  -j "$jobs" -o "$tmp/plan.h5" --fresh >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
read -r wall kib <"$tmp/time"
printf 'LLaMA-2 70B on 256 H100, plan search, -j %s: wall %6.1f s  peak %5d MiB\n' "$jobs" "$wall" \
  "$((kib / 1024))"
grep -E '^Sweep|^Plan search|^ +[0-9]+ simulated' "$tmp/log" | sed 's/^/  /'
grep -A2 '^Best' "$tmp/log" | tail -1 | sed 's/^/  best: /'
