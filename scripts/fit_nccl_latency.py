#!/usr/bin/python3
"""Fits each measured server's small-message collective floor: its launch cost and its LL step.

    /usr/bin/python3 scripts/fit_nccl_latency.py

At sizes of a few KiB a ring all-reduce over n GPUs costs a launch (the host's loop and
NCCL's setup) plus 2(n - 1) LL steps (each a store, an NVSwitch hop and the peer's poll);
the bytes add under 0.1 us. A least-squares line through the all-reduce times of 512 B to
4 KiB on 2, 4 and 8 GPUs of one server (NVIDIA AIConfigurator's nccl-tests tables,
../shared/data/tc-kernels) gives the two, per server: the preset's `server.nccl_launch` and
`server.nvlink.latency` (half a step: GPU to NVSwitch, NVSwitch to GPU). The other
collectives (all-gather and reduce-scatter: n - 1 steps; all-to-all) are left out of the fit
and checked by scripts/validate_nccl.py.
"""

import csv
import gzip
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "tc-kernels")
GPUS = [("A100", "a100-sxm", "dgx-a100"), ("H100", "h100-sxm", "dgx-h100"),
        ("B200", "b200-sxm", "dgx-b200")]
MAX_BYTES = 4096


def fit(points):
    """Least squares t = a + b x over (x, t) points; returns (a, b, rms residual)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    mt = sum(t for _, t in points) / n
    b = sum((x - mx) * (t - mt) for x, t in points) / sum((x - mx) ** 2 for x, _ in points)
    a = mt - b * mx
    rms = (sum((a + b * x - t) ** 2 for x, t in points) / n) ** 0.5
    return a, b, rms


def main():
    print("| server (preset) | points | launch (us) | LL step (us) | nvlink.latency (us) | rms (us) |")
    print("|---|---|---|---|---|---|")
    for label, gpu_file, preset in GPUS:
        path = os.path.join(DATA, "nccl_%s.csv.gz" % gpu_file)
        try:
            rows = list(csv.DictReader(gzip.open(path, "rt")))
        except OSError as e:
            sys.exit("%s: %s" % (path, e.strerror))
        points = [(2 * (int(r["gpus"]) - 1), float(r["latency_ms"]) * 1e3) for r in rows
                  if r["op"] == "all_reduce" and r["dtype"] == "fp16"
                  and int(r["bytes"]) <= MAX_BYTES]
        launch, step, rms = fit(points)
        print("| %s (`%s`) | %d | %.2f | %.3f | %.3f | %.2f |" % (
            label, preset, len(points), launch, step, step / 2, rms))


if __name__ == "__main__":
    main()
