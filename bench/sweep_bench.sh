#!/bin/bash
# Sweep benchmark (issue 7): the Table III grid of Characterizing Deep Learning Training Workloads
# on Alibaba-PAI (Wang et al., IISWC 2019) (scenarios/studies/pai-table3-grid.yaml, 288 points) with
# one process (-j 1), two children (-j 2, bound to a CPU each, and unbound) and two MPI ranks
# (mpirun -np 2, -j 1 each); then the per-point overhead of the process-per-point design from a
# sweep of trivial points (wall time per point minus the time the simulations themselves report),
# at 400 points and at 10,000.
#
#   bench/sweep_bench.sh [BUILD_DIR] [REPEATS]      (defaults: build, 3; best of REPEATS)
#
# Other work on the machine slows the runs down: repeat, and read the best.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
orrery=$build/orrery
[ -x "$orrery" ] || { echo "no $orrery: build first (scripts/build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi_flags="--oversubscribe"
[ "$(id -u)" = 0 ] && mpi_flags="$mpi_flags --allow-run-as-root"
study=scenarios/studies/pai-table3-grid.yaml

now() { date +%s.%N; }

# timed COMMAND...: runs it, prints its wall time in seconds.
timed() {
  local t0 t1
  t0=$(now)
  "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}

min() { if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi; }

# Sum of a numeric CSV column of `orrery report --csv` (the simulations' own wall time).
sum_column() {
  "$orrery" report "$1" --csv - -q |
    awk -F, -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
                         { s += $c } END { printf "%.6f", s }'
}

points=$("$orrery" sweep $study --dry-run | awk 'NR == 1 {print $2}')
echo "Table III grid: $points points ($study), best of $repeats, runs interleaved" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
t1="" t2="" tu="" tm=""
for r in $(seq "$repeats"); do
  a=$(timed "$orrery" sweep $study -q --fresh -o "$tmp/j1.h5" -j 1)
  b=$(timed "$orrery" sweep $study -q --fresh -o "$tmp/j2.h5" -j 2)
  u=$(timed "$orrery" sweep $study -q --fresh -o "$tmp/j2u.h5" -j 2 --no-bind)
  c=$(timed mpirun $mpi_flags -np 2 "$orrery" sweep $study -q --fresh -o "$tmp/mpi.h5" -j 1)
  printf '  run %d: -j 1 %6.2f s   -j 2 %6.2f s   -j 2 --no-bind %6.2f s   mpirun -np 2 %6.2f s\n' \
    "$r" "$a" "$b" "$u" "$c" >&2
  t1=$(min "$t1" "$a") t2=$(min "$t2" "$b") tu=$(min "$tu" "$u") tm=$(min "$tm" "$c")
done
sim=$(sum_column "$tmp/j1.h5" wall_s)
printf '%-34s %8.2f s\n' "best -j 1" "$t1" "best -j 2" "$t2" "best -j 2 --no-bind" "$tu" \
  "best mpirun -np 2 (-j 1 per rank)" "$tm" "simulation (sum of wall_s)" "$sim" >&2
printf 'speed-up -j 2: %.2f   -j 2 --no-bind: %.2f   mpirun -np 2: %.2f\n' "$(echo "$t1 / $t2" | bc -l)" \
  "$(echo "$t1 / $tu" | bc -l)" "$(echo "$t1 / $tm" | bc -l)" >&2

# Trivial points: one GPU, one layer; 400 distinct scenarios.
cat >"$tmp/trivial.yaml" <<'YAML'
name: trivial
platform: {preset: pcie-server, server: {gpus: 1}}
workload: {type: synthetic-dp, layers: 1, gradient_bytes: 0}
sweep:
  grid:
    workload.forward_time: [1us, 2us, 3us, 4us, 5us, 6us, 7us, 8us, 9us, 10us, 11us, 12us, 13us, 14us, 15us, 16us, 17us, 18us, 19us, 20us]
    workload.update_time: [1us, 2us, 3us, 4us, 5us, 6us, 7us, 8us, 9us, 10us, 11us, 12us, 13us, 14us, 15us, 16us, 17us, 18us, 19us, 20us]
YAML
tt=""
for r in $(seq "$repeats"); do
  tt=$(min "$tt" "$(timed "$orrery" sweep "$tmp/trivial.yaml" -q --fresh -o "$tmp/trivial.h5" -j 1)")
done
tsim=$(sum_column "$tmp/trivial.h5" wall_s)
printf 'per-point overhead: %.2f ms (wall %.2f ms per point, of which simulation %.2f ms)\n' \
  "$(echo "($tt - $tsim) / 400 * 1000" | bc -l)" "$(echo "$tt / 400 * 1000" | bc -l)" \
  "$(echo "$tsim / 400 * 1000" | bc -l)" >&2
# The same at 10,000 points (a 100 x 100 grid, once): the overhead per point must not grow with
# the sweep (issue 43: it did, from 4 ms at 400 points to 56 ms at 10,000).
values=$(seq -s ', ' 1 100 | sed 's/\([0-9][0-9]*\)/\1us/g')
cat >"$tmp/trivial10k.yaml" <<YAML
name: trivial
platform: {preset: pcie-server, server: {gpus: 1}}
workload: {type: synthetic-dp, layers: 1, gradient_bytes: 0}
sweep:
  grid:
    workload.forward_time: [$values]
    workload.update_time: [$values]
YAML
tk=$(timed "$orrery" sweep "$tmp/trivial10k.yaml" -q --fresh -o "$tmp/trivial10k.h5" -j 1)
tksim=$(sum_column "$tmp/trivial10k.h5" wall_s)
printf 'per-point overhead at 10,000 points: %.2f ms (wall %.2f s in all)\n' \
  "$(echo "($tk - $tksim) / 10000 * 1000" | bc -l)" "$tk" >&2
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
