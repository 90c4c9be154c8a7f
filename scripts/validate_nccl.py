#!/usr/bin/python3
"""Checks `orrery bench collective` against measured nccl-tests results on one server.

    /usr/bin/python3 scripts/validate_nccl.py                       # the tables
    /usr/bin/python3 scripts/validate_nccl.py --update-doc docs/collectives.md

The measurements are NVIDIA AIConfigurator's nccl-tests runs (../shared/data/tc-kernels,
nccl_<gpu>.csv.gz, Apache-2.0): all-reduce, all-gather, reduce-scatter and all-to-all in fp16
on 2, 4 and 8 GPUs of one A100, H100 or B200 server, 512 B to 1 GiB. Each is predicted by
`orrery bench collective` on the matching preset (dgx-a100, dgx-h100, dgx-b200) with the same
sizes, NCCL's choice of algorithm and protocol modelled; nothing here is fitted.

Error = predicted bus bandwidth / measured - 1 = measured time / predicted time - 1: + is too
fast, as every table of docs/collectives.md and `bench collective --compare` give it.

Needs the built binary (scripts/build) and the shared data; about a minute on 2 cores.
"""

import csv
import gzip
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_runs  # noqa: E402

BEGIN = "<!-- nccl-validation:begin (scripts/validate_nccl.py --update-doc) -->"
END = "<!-- nccl-validation:end -->"
DATA = os.path.join(published_runs.ROOT, "..", "shared", "data", "tc-kernels")

GPUS = [("A100", "a100-sxm", "dgx-a100"), ("H100", "h100-sxm", "dgx-h100"),
        ("B200", "b200-sxm", "dgx-b200")]
OPS = ["all_reduce", "all_gather", "reduce_scatter", "alltoall"]
BANDS = [("below 1 MiB", 0, 1 << 20), ("1 to 128 MiB", 1 << 20, 128 << 20),
         ("128 MiB and above", 128 << 20, 1 << 62)]


def measured(gpu_file):
    """{(op, gpus): {bytes: seconds}} of a GPU's fp16 rows."""
    path = os.path.join(DATA, "nccl_%s.csv.gz" % gpu_file)
    try:
        rows = list(csv.DictReader(gzip.open(path, "rt")))
    except OSError as e:
        sys.exit("%s: %s" % (path, e.strerror))
    out = {}
    for r in rows:
        if r["dtype"] != "fp16":
            continue
        out.setdefault((r["op"], int(r["gpus"])), {})[int(r["bytes"])] = \
            float(r["latency_ms"]) * 1e-3
    return out


def predicted(orrery, preset, op, gpus, sizes):
    """{bytes: seconds} that bench collective prints for these sizes."""
    args = [orrery, "bench", "collective", op, "--platform", preset, "--gpus", str(gpus),
            "-b", str(min(sizes)), "-e", str(max(sizes)), "-f", "2", "-d", "half"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: bench collective failed:\n%s" % (" ".join(args[1:]), out.stderr))
    times = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if line.startswith("#") or len(fields) < 6:
            continue
        times[int(fields[0])] = float(fields[5]) * 1e-6
    return times


def simulate(orrery, row, tmp):
    """Errors of one GPU's (op, gpus) series: [(bytes, error)]."""
    label, _, preset, op, gpus, meas = row
    pred = predicted(orrery, preset, op, gpus, sorted(meas))
    return [(b, meas[b] / pred[b] - 1) for b in sorted(meas) if b in pred]


def rows():
    out = []
    for label, gpu_file, preset in GPUS:
        data = measured(gpu_file)
        for op in OPS:
            for gpus in (2, 4, 8):
                if (op, gpus) in data:
                    out.append((label, gpu_file, preset, op, gpus, data[(op, gpus)]))
    return out


def cell(errors):
    if not errors:
        return "-"
    return "%+.0f%% (%.0f%%)" % (100 * statistics.median(errors),
                                 100 * statistics.median(abs(e) for e in errors))


def table(results):
    def errors(gpu=None, op=None, band=None):
        return [e for row, series in results for b, e in series
                if (gpu is None or row[0] == gpu) and (op is None or row[3] == op)
                and (band is None or band[1] <= b < band[2])]

    lines = ["Median signed error (and median |error|) of the predicted bus bandwidth, + too "
             "fast, per size band over 2, 4 and 8 GPUs:", "",
             "| GPU (preset) | collective | " + " | ".join(b[0] for b in BANDS) + " | all |",
             "|---|---|" + "---|" * (len(BANDS) + 1)]
    for label, _, preset in GPUS:
        for op in OPS + [None]:
            lines.append("| %s | %s | %s | %s |" % (
                "%s (`%s`)" % (label, preset) if op == OPS[0] else "",
                op.replace("_", "-") if op else "every collective",
                " | ".join(cell(errors(label, op, band)) for band in BANDS),
                cell(errors(label, op))))
    lines.append("| every GPU | every collective | %s | %s |" % (
        " | ".join(cell(errors(band=band)) for band in BANDS), cell(errors())))
    n = sum(len(series) for _, series in results)
    lines += ["", "%d measured sizes in all." % n]
    return "\n".join(lines) + "\n"


def main():
    published_runs.main(
        __doc__.split("\n\n")[0], rows(), simulate, table, BEGIN, END,
        lambda row, series: "  %-4s %-14s %d GPUs: median error %+.0f%%" % (
            row[0], row[3], row[4], 100 * statistics.median(e for _, e in series)))


if __name__ == "__main__":
    main()
