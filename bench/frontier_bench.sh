#!/bin/bash
# Frontier-scale benchmark (issue 43): each figure as a ratio to `dp50_bench 4096` measured in the
# same run, so that a busy machine cancels out. Llama 3.1 405B on 16,384 H100
# (scenarios/bench/llama31-405b-16384xh100.yaml; targets: at most 1.5x, and at most 6x with
# under 2 GiB on 65,536 GPUs with FRONTIER_BIG=1), and data-parallel ResNet-50 on DGX A100 fat
# trees at 256, 1,024 and 4,096 GPUs (scenarios/bench/resnet50-1024.yaml; the growth exponent of
# time over GPUs, target at most 1.2).
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
if [ "${FRONTIER_BIG:-0}" = 1 ]; then
  results+=("$(run 'Llama 3.1 405B, 65,536 H100' scenarios/bench/llama31-405b-16384xh100.yaml \
    --set platform.servers=8192 --set workload.global_batch=8192)")
fi
for g in 256 1024 4096; do
  results+=("$(run "ResNet-50, $g A100" scenarios/bench/resnet50-1024.yaml \
    --set platform.servers=$((g / 8)))")
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
# ResNet-50's growth from 256 to 4,096 GPUs: log(time ratio) / log(16).
w256=$(printf '%s\n' "${results[@]}" | awk '/ResNet-50, 256 / {print $(NF-2)}')
w4096=$(printf '%s\n' "${results[@]}" | awk '/ResNet-50, 4096 / {print $(NF-2)}')
printf 'ResNet-50 growth exponent, 256 to 4,096 GPUs: %.2f\n' \
  "$(echo "l($w4096 / $w256) / l(16)" | bc -l)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
