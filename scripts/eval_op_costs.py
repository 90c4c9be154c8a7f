#!/usr/bin/python3
"""Prices every row of the measured GPU kernel data with `orrery cost --csv` and prints, per op
class and GPU, the median and 90th-percentile absolute error of the predictions, as a Markdown
table (docs/validation.md, "Op costs against measured kernels").

    /usr/bin/python3 scripts/eval_op_costs.py [--orrery build/orrery] [--data DIR] [--ops linear,bmm]

The data is ../shared/data/gpu-kernels (about 285,000 PyTorch kernel latencies on P100, P4, T4,
V100 and A100; its README says where they come from). It is read in place and never copied
into the repository.
"""

import argparse
import csv
import gzip
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Op class -> the data files it is measured by.
CLASSES = [
    ("GEMM: linear", ["linear"]),
    ("GEMM: bmm", ["bmm"]),
    ("convolution", ["conv"]),
    ("softmax", ["softmax"]),
    ("layer norm", ["ln"]),
    ("elementwise", ["add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu",
                     "tanh"]),
]

# The data's device names, as table columns (the A100 80GB ran the convolutions).
GPUS = [("P100", ["Tesla P100-PCIE-16GB"]), ("P4", ["Tesla P4"]), ("T4", ["Tesla T4"]),
        ("V100", ["Tesla V100-PCIE-32GB"]),
        ("A100", ["NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"])]


def find_orrery(explicit):
    for cand in [explicit, os.environ.get("ORRERY_BIN"), os.path.join(ROOT, "build", "orrery")]:
        if cand and os.access(cand, os.X_OK):
            return cand
    sys.exit("eval_op_costs: no orrery binary (build it, or pass --orrery PATH)")


def quantile(sorted_values, q):
    """The q-quantile of sorted values, by the nearest rank below (as orrery cost prints it)."""
    return sorted_values[int(q * (len(sorted_values) - 1))]


def errors_by_device(orrery, data_dir, op, tmp):
    """{device name: [|predicted - measured| / measured]} for one data file."""
    src = os.path.join(data_dir, op + ".csv.gz")
    plain = os.path.join(tmp, op + ".csv")
    priced = os.path.join(tmp, op + ".priced.csv")
    with gzip.open(src, "rt", newline="") as f, open(plain, "w", newline="") as out:
        out.write(f.read())
    subprocess.run([orrery, "cost", "--csv", plain, "-o", priced], check=True,
                   stderr=subprocess.DEVNULL)
    errors = {}
    with open(priced, newline="") as f:
        for row in csv.DictReader(f):
            measured = float(row["latency_ms"])
            if measured <= 0:
                continue
            err = abs(float(row["predicted_ms"]) - measured) / measured
            errors.setdefault(row["device"], []).append(err)
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--orrery", help="the orrery binary (default: $ORRERY_BIN, build/orrery)")
    ap.add_argument("--data", default=os.path.join(ROOT, os.pardir, "shared", "data",
                                                   "gpu-kernels"),
                    help="the measured kernel data (default: ../shared/data/gpu-kernels)")
    ap.add_argument("--ops", help="only these data files, comma-separated (e.g. linear,bmm)")
    args = ap.parse_args()
    orrery = find_orrery(args.orrery)
    if not os.path.isdir(args.data):
        sys.exit("eval_op_costs: no kernel data at %s (--data DIR)" % args.data)
    only = set(args.ops.split(",")) if args.ops else None

    print("| op class | rows | " + " | ".join(g for g, _ in GPUS) + " |")
    print("|---|---|" + "---|" * len(GPUS))
    with tempfile.TemporaryDirectory() as tmp:
        for label, ops in CLASSES:
            ops = [op for op in ops if only is None or op in only]
            if not ops:
                continue
            by_device = {}
            for op in ops:
                for dev, errs in errors_by_device(orrery, args.data, op, tmp).items():
                    by_device.setdefault(dev, []).extend(errs)
            cells, rows = [], 0
            for _, names in GPUS:
                errs = sorted(e for n in names for e in by_device.get(n, []))
                rows += len(errs)
                cells.append("%.0f%% / %.0f%%" % (100 * quantile(errs, 0.5),
                                                  100 * quantile(errs, 0.9)) if errs else "-")
            print("| %s | %d | %s |" % (label, rows, " | ".join(cells)))
    print("\nEach cell: median / 90th-percentile |predicted - measured| / measured.")


if __name__ == "__main__":
    main()
