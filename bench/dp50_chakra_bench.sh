#!/usr/bin/env bash
# dp50 the way users run traces: `orrery run` on Chakra traces and a SimGrid XML platform that
# dp50_bench writes (--write), against the built-in path (dp50_bench itself) on the same
# platform and workload. Prints, per size, both wall times (the best of REPEAT runs each, 3 by
# default: a shared machine's noise only ever adds time), their ratio, the peak memory of
# `orrery run` and both simulated iteration times (they must agree).
#
# Usage: bench/dp50_chakra_bench.sh [--analytical] [gpus...]   (default: 64 256 1024)
# BUILD=dir selects the build directory (default: build); REPEAT=n the runs per measurement.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
mode=()
if [[ ${1:-} == --analytical ]]; then
  mode=(--analytical)
  shift
fi
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(64 256 1024)
for bin in "$build/dp50_bench" "$build/orrery"; do
  [[ -x $bin ]] || { echo "missing $bin: build first (cmake --build build)" >&2; exit 2; }
done
repeat=${REPEAT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "dp50 ${mode[*]:-flow mode}: built-in replay vs orrery run on Chakra traces (best of $repeat)"
printf '%6s %12s %12s %7s %12s %14s %14s\n' GPUs "built-in s" "chakra s" ratio "chakra MiB" \
  "built-in iter" "chakra iter"
for n in "${sizes[@]}"; do
  "$build/dp50_bench" ${mode[@]+"${mode[@]}"} --write "$work" "$n"
  b_wall=
  for ((k = 0; k < repeat; k++)); do
    read -r _ wall _ b_iter _ _ < <("$build/dp50_bench" ${mode[@]+"${mode[@]}"} "$n" | tail -1)
    b_wall=$(awk -v a="$wall" -v b="${b_wall:-$wall}" 'BEGIN { print (a < b ? a : b) }')
  done
  dir="$work/dp50-$n"
  c_wall=
  for ((k = 0; k < repeat; k++)); do
    rm -f "$work/out-$n.h5"
    /usr/bin/time -f '%e %M' -o "$work/time" "$build/orrery" run "$dir/scenario.yaml" \
      --no-timeline -o "$work/out-$n.h5" > "$work/run.txt"
    read -r wall c_kib < "$work/time"
    c_wall=$(awk -v a="$wall" -v b="${c_wall:-$wall}" 'BEGIN { print (a < b ? a : b) }')
  done
  c_iter=$(sed -n 's/^Iteration time *\([0-9.]*\) ms.*/\1/p' "$work/run.txt" | head -1)
  ratio=$(awk -v a="$c_wall" -v b="$b_wall" 'BEGIN { printf "%.2f", a / b }')
  printf '%6d %12.3f %12.3f %7s %12.1f %11s ms %11s ms\n' "$n" "$b_wall" "$c_wall" "$ratio" \
    "$(awk -v k="$c_kib" 'BEGIN { print k / 1024 }')" "$b_iter" "${c_iter:-?}"
done
