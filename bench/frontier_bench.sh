#!/bin/bash
# Frontier-scale benchmark (issue 43): each figure as a ratio to `dp50_bench 4096` measured in the
# same run, so that a busy machine cancels out. Llama 3.1 405B on 16,384 H100
# (scenarios/bench/llama31-405b-16384xh100.yaml; target at most 1.5x), dp50's Chakra traces on 32
# DGX H100 with NCCL's plans as flows (target at most 1x), and data-parallel ResNet-50 on DGX
# A100 fat trees at 256, 1,024 and 4,096 GPUs (scenarios/bench/resnet50-1024.yaml; the growth
# exponent of time over GPUs, target at most 1.2). FRONTIER_BIG=1 adds Llama 3.1 405B on 65,536
# H100 (target 6x and under 2 GiB; again with a results file) and 131,072 H100 (target under
# 60 s), and ResNet-50 on 16,384 A100.
#
#   bench/frontier_bench.sh [BUILD_DIR]        (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
orrery=$build/orrery
[ -x "$orrery" ] && [ -x "$build/dp50_bench" ] || { echo "build first (scripts/build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dp50() { /usr/bin/time -f '%e' -o "$tmp/t" "$build/dp50_bench" 4096 >/dev/null 2>&1; cat "$tmp/t"; }

# run LABEL ARGS...: the whole command's wall time and peak memory, its activities.
run() {
  local label=$1
  shift
  /usr/bin/time -f '%e %M' -o "$tmp/t" "$orrery" run "$@" --no-timeline >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; exit 1; }
  read -r wall kib <"$tmp/t"
  printf '%s %s %s %s\n' "$label" "$wall" "$((kib / 1024))" \
    "$(awk '/^Simulated/ {print $2}' "$tmp/log")"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
base=$(dp50)
results=()
results+=("$(run 'Llama 3.1 405B, 16,384 H100' scenarios/bench/llama31-405b-16384xh100.yaml)")
big=${FRONTIER_BIG:-0}
if [ "$big" = 1 ]; then
  # DP 512 and 1,024: the global batch grows with them (16 micro-batches per replica).
  results+=("$(run 'Llama 3.1 405B, 65,536 H100' scenarios/bench/llama31-405b-16384xh100.yaml \
    --set platform.servers=8192 --set workload.global_batch=8192)")
  # The same with a results file: every link's usage bins and tables on top (item 3's memory).
  results+=("$(run 'the same, results file' scenarios/bench/llama31-405b-16384xh100.yaml \
    --set platform.servers=8192 --set workload.global_batch=8192 -o "$tmp/65k.h5")")
  results+=("$(run 'Llama 3.1 405B, 131,072 H100' scenarios/bench/llama31-405b-16384xh100.yaml \
    --set platform.servers=16384 --set workload.global_batch=16384)")
fi
# dp50's traces (as dp50_bench writes them) on 32 DGX H100, NCCL's algorithms and protocols.
"$build/dp50_bench" --write "$tmp" 256 >/dev/null
cat >"$tmp/dp50-256/h100.yaml" <<'EOF2'
name: dp50-traces-32xdgx-h100
platform: {preset: dgx-h100, servers: 32}
workload: {type: chakra, files: [traces/dp50], collectives: {mode: flow, protocol: auto}}
EOF2
results+=("$(run 'dp50 traces, 32 DGX H100' "$tmp/dp50-256/h100.yaml")")
sizes=(256 1024 4096)
[ "$big" = 1 ] && sizes+=(16384)
for g in "${sizes[@]}"; do
  results+=("$(run "ResNet-50, $g A100" scenarios/bench/resnet50-1024.yaml \
    --set platform.servers=$((g / 8)) --no-size-limit)")
done
after=$(dp50)
ref=$(echo "($base + $after) / 2" | bc -l)
printf 'dp50_bench 4096: %.2f s before, %.2f s after (ratios against their mean)\n' "$base" "$after"
printf '%-30s %9s %7s %9s %12s\n' case wall ratio "peak MiB" activities
for r in "${results[@]}"; do
  label=${r% * * *}
  read -r wall mib acts <<<"${r##"$label" }"
  printf '%-30s %8.2fs %6.2fx %9s %12s\n' "$label" "$wall" "$(echo "$wall / $ref" | bc -l)" "$mib" "$acts"
done
# ResNet-50's growth: log(time ratio) / log(GPU ratio), from 256 GPUs and between neighbours.
wall_of() { printf '%s\n' "${results[@]}" | awk -v g="ResNet-50, $1 " 'index($0, g) == 1 {print $(NF-2)}'; }
prev=256
for g in "${sizes[@]:1}"; do
  printf 'ResNet-50 growth exponent, 256 to %s GPUs: %.2f (from %s: %.2f)\n' "$g" \
    "$(echo "l($(wall_of "$g") / $(wall_of 256)) / l($g / 256)" | bc -l)" "$prev" \
    "$(echo "l($(wall_of "$g") / $(wall_of "$prev")) / l($g / $prev)" | bc -l)"
  prev=$g
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
