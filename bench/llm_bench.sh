#!/bin/bash
# Large-model benchmark (issue 19): one iteration of GPT-3 175B on 1,024 A100s (TP 8 x PP 16 x
# DP 8, scenarios/llm/gpt3-175b-1024xa100.yaml) with collectives as flows and analytical, and
# LLaMA-2 70B on 64 H100s (scenarios/llm/llama2-70b-64xh100.yaml, every replica in full), and
# (issue 22) Llama 3.1 405B on 8 GB200 NVL72 racks (scenarios/llm/llama3-405b-576xgb200.yaml).
# The targets for GPT-3: under 5 s analytical, under 60 s flow, under 4 GiB; for Llama 3.1 405B
# on 576 GPUs, under 5 s analytical.
#
#   bench/llm_bench.sh [BUILD_DIR]        (default build)
#
# Prints the whole command's wall time and peak memory, and the simulation's own report.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
orrery=$build/orrery
[ -x "$orrery" ] || { echo "no $orrery: build first (scripts/build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
  local label=$1
  shift
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$orrery" run "$@" -o "$tmp/out.h5" --force >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; exit 1; }
  read -r wall kib <"$tmp/time"
  printf '%-34s wall %6.2f s  peak %6.0f MiB  %s; %s\n' "$label" "$wall" "$((kib / 1024))" \
    "$(grep '^Simulated' "$tmp/log")" "$(grep '^Iteration time' "$tmp/log" | tr -s ' ')"
}

run "GPT-3 175B, 1024 GPUs, flow" scenarios/llm/gpt3-175b-1024xa100.yaml
run "GPT-3 175B, 1024 GPUs, analytical" scenarios/llm/gpt3-175b-1024xa100.yaml \
  --set strategy.collectives.mode=analytical
run "Llama 3.1 405B, 576 GB200, analytical" scenarios/llm/llama3-405b-576xgb200.yaml \
  --set strategy.collectives.mode=analytical
run "Llama 3.1 405B, 576 GB200, NVFP4, an." scenarios/llm/llama3-405b-576xgb200.yaml \
  --set strategy.collectives.mode=analytical --set strategy.precision=nvfp4
run "LLaMA-2 70B, 64 GPUs, flow" scenarios/llm/llama2-70b-64xh100.yaml
run "LLaMA-2 70B, 64 GPUs, analytical" scenarios/llm/llama2-70b-64xh100.yaml \
  --set strategy.collectives.mode=analytical
