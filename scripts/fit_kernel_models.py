#!/usr/bin/python3
"""Fits the GPU kernel models' shared coefficients (models/kernel_model.h) to measured kernel
latencies, and checks them leave one GPU out.

    /usr/bin/python3 scripts/fit_kernel_models.py fit        # writes models/kernel/coefficients.yaml
    /usr/bin/python3 scripts/fit_kernel_models.py evaluate   # the leave-one-GPU-out table
    /usr/bin/python3 scripts/fit_kernel_models.py evaluate --update-doc docs/validation.md

Both read ../shared/data/gpu-kernels in place (about 285,000 PyTorch 2.1 FP32 kernel latencies
on P100, P4, T4, V100 and A100 from the NeuSight training set; its README) and price rows with
Orrery's own C++ models through the orrery extension (build it first: scripts/build). The
models are the C++ ones: this script only chooses their coefficients.

Fitting: the latency of an eager PyTorch op overlaps the host's dispatch of the op with the
kernel, so a measured latency is modelled as (host^k + kernel^k)^(1/k), host being the
machine's floor (the 1st percentile of that op's latencies on that machine: a property of the
host and framework, which Orrery prices with its host-overhead model, not of the GPU). The
coefficients minimise a robust (soft-L1) loss on log(predicted/measured), each GPU and each op
file weighted alike, group by group: streaming kernels, row kernels, GEMMs, convolutions.
Kernels longer than 10 ms are left out of the fit (clocks drift over long runs on the 70-75 W
and passively cooled cards; docs/cost-models.md) but not out of the evaluation, and so are
streaming kernels shorter than twice their floor (mostly host time).

Tensor Core paths have no rows here: the `tensor` and `attention` sections and the launch floor
come from scripts/fit_tensor_kernels.py (measured Tensor Core kernels) and are kept as the
coefficients file has them.
"""

import argparse
import datetime
import gzip
import math
import os
import re
import sys

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_block  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data", "gpu-kernels")

ELEMENTWISE = ["add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu", "tanh"]
# Op class -> data files, in table order.
CLASSES = [("GEMM: linear", ["linear"]), ("GEMM: bmm", ["bmm"]), ("convolution", ["conv"]),
           ("softmax", ["softmax"]), ("layer norm", ["ln"]), ("elementwise", ELEMENTWISE)]
# Built-in spec names of the data's GPUs -> table column (the A100 80GB ran the convolutions).
GPU_OF = {"P100-PCIe": "P100", "P4": "P4", "T4": "T4", "V100-PCIe-32GB": "V100",
          "A100-PCIe-40GB": "A100", "A100-PCIe-80GB": "A100"}
GPUS = ["P100", "P4", "T4", "V100", "A100"]

# (section, key, initial value, lower, upper) of each coefficient, by fitting group.
GROUPS = {
    "stream": [("stream", "hbm_eff", 0.85, 0.4, 1.0),
               ("stream", "gddr_eff", 0.75, 0.4, 1.0), ("stream", "flop_eff", 0.5, 0.05, 1.0),
               ("evaluation", "overlap_k", 3.0, 1.0, 20.0)],
    "rows": [("rows", "softmax_extra_pass", 0.4, 0.0, 4.0), ("rows", "ln_extra_pass", 0.4, 0.0, 4.0),
             ("rows", "rows_per_sm", 2.0, 0.02, 64.0), ("rows", "rows_in_flight_per_sm", 16.0, 1.0, 512.0),
             ("evaluation", "overlap_k_rows", 3.0, 1.0, 20.0)],
    "gemm": [("gemm", "eta0", 0.85, 0.3, 1.0), ("gemm", "edge", 1.0, 0.01, 20.0),
             ("gemm", "regs", 25000.0, 4096.0, 200000.0), ("gemm", "tile_cycles", 1000.0, 1.0, 10000.0),
             ("gemm", "mem_eff", 0.8, 0.2, 1.0), ("gemm", "l2_reread", 0.3, 0.0, 4.0),
             ("power", "pj_per_flop_16nm", 25.0, 5.0, 80.0),
             ("evaluation", "overlap_k_gemm", 3.0, 1.0, 20.0)],
    "conv": [("conv", "eff", 0.8, 0.2, 1.0), ("conv", "winograd_ratio", 3.0, 1.0, 4.0),
             ("conv", "winograd_passes", 2.0, 0.0, 20.0), ("conv", "fixed_seconds", 2e-6, 0.0, 1e-5),
             ("evaluation", "overlap_k_conv", 3.0, 1.0, 20.0)],
}
# Which files each group is fitted on.
GROUP_FILES = {"stream": ELEMENTWISE, "rows": ["softmax", "ln"], "gemm": ["linear", "bmm"],
               "conv": ["conv"]}
FIT_ORDER = ["stream", "rows", "gemm", "conv"]

MAX_FIT_ROWS = 1500     # per (GPU, file): enough to pin a dozen coefficients, and fast
# Streaming kernels are fitted on rows at least this many times their machine's floor: below it
# the latency is mostly host time and says little about the achieved bandwidth, which is what
# a training step's large activations need.
MIN_OVER_FLOOR = {"stream": 2.0}
LONG_KERNEL_S = 10e-3   # longer measured kernels are left out of the fit (see above)

def load_extension():
    for cand in [os.environ.get("ORRERY_PYTHON_DIR"), os.path.join(ROOT, "build", "python")]:
        if cand and os.path.isdir(os.path.join(cand, "orrery")):
            sys.path.insert(0, cand)
            break
    try:
        from orrery import _orrery  # noqa: E402
    except ImportError as e:
        sys.exit("%s: the orrery extension is not built (scripts/build): %s"
                 % (os.path.basename(sys.argv[0]), e))
    return _orrery


def to_yaml(values, sources):
    out = ["# GPU kernel-model coefficients (models/kernel_coefficients.h documents each one).",
           "# Written by scripts/fit_kernel_models.py fit; do not edit by hand.", "sources:"]
    out += ['  - "%s"' % s.replace('"', "'") for s in sources]
    section = None
    for (sec, key) in sorted(values, key=lambda sk: ORDER.index(sk)):
        if sec != section:
            out.append(sec + ":")
            section = sec
        out.append("  %s: %.6g" % (key, values[(sec, key)]))
    return "\n".join(out) + "\n"


ORDER = [("gemm", "eta0"), ("gemm", "edge"), ("gemm", "regs"), ("gemm", "tile_cycles"),
         ("gemm", "mem_eff"), ("gemm", "l2_reread")] + [
            ("tensor", k) for k in ("eta16", "eta8", "eta4", "edge", "regs", "tile_cycles", "mem_eff",
                                    "unaligned_eff", "pj_per_flop_16nm", "bits_exponent",
                                    "power_window_s")] + [
            ("attention", k) for k in ("eta", "d_edge", "exp_share", "block_cycles", "bwd_eta",
                                       "mem_eff")] + [("launch", "seconds"),
         ("power", "pj_per_flop_16nm"), ("conv", "eff"), ("conv", "winograd_ratio"),
         ("conv", "winograd_passes"), ("conv", "fixed_seconds"), ("stream", "hbm_eff"), ("stream", "gddr_eff"),
         ("stream", "flop_eff"), ("rows", "softmax_extra_pass"), ("rows", "ln_extra_pass"),
         ("rows", "rows_per_sm"), ("rows", "rows_in_flight_per_sm"), ("evaluation", "overlap_k"), ("evaluation", "overlap_k_rows"),
         ("evaluation", "overlap_k_gemm"), ("evaluation", "overlap_k_conv")]


class Data:
    """Every data file as rows priced by the extension, with numpy columns beside."""

    def __init__(self, ext, data_dir):
        self.files = {}
        for f in [f for _, files in CLASSES for f in files]:
            path = os.path.join(data_dir, f + ".csv.gz")
            if not os.path.exists(path):
                sys.exit("fit_kernel_models: %s is missing (the shared kernel data)" % path)
            with gzip.open(path, "rt") as fh:
                text = fh.read()
            rows = ext.KernelRows(text, path)
            header = text.split("\n", 1)[0].split(",")
            col = header.index("latency_ms")
            lat = []
            for line in text.splitlines()[1:]:
                if line:
                    # latency_ms is the second column and never quoted.
                    lat.append(float(line.split(",", col + 1)[col]))
            gpu = np.array([GPU_OF.get(d, d) for d in rows.devices()])
            lat = np.array(lat) * 1e-3
            floor = np.zeros_like(lat)
            for g in GPUS:
                sel = gpu == g
                if sel.any():
                    floor[sel] = np.percentile(lat[sel], 1)
            self.files[f] = {"rows": rows, "gpu": gpu, "lat": lat, "floor": floor,
                             "specs": sorted(set(rows.devices()))}

    def spec_names(self, gpus):
        return sorted({s for f in self.files.values() for s in f["specs"] if GPU_OF.get(s) in gpus})


K_OF_FILE = {"linear": "overlap_k_gemm", "bmm": "overlap_k_gemm", "conv": "overlap_k_conv",
             "softmax": "overlap_k_rows", "ln": "overlap_k_rows"}


def overlap_k(values, f):
    return values[("evaluation", K_OF_FILE.get(f, "overlap_k"))]


def combine(kernel, floor, k):
    """Measured eager latency: host dispatch and kernel overlapping, a smooth maximum."""
    return (floor ** k + np.maximum(kernel, 1e-9) ** k) ** (1.0 / k)


def fit_group(data, group, values, sources, train_gpus, log):
    params = GROUPS[group]
    files = GROUP_FILES[group]
    # Rows to fit on: the training GPUs', at most MAX_FIT_ROWS per (GPU, file), deterministic.
    rng = np.random.RandomState(12345)
    picks = {}
    skip = [s for s in data.spec_names(set(GPUS) - set(train_gpus))]
    for f in files:
        d = data.files[f]
        idx = []
        for g in train_gpus:
            sel = np.where((d["gpu"] == g) & (d["lat"] <= LONG_KERNEL_S) &
                           (d["lat"] >= MIN_OVER_FLOOR.get(group, 0) * d["floor"]))[0]
            if len(sel) > MAX_FIT_ROWS:
                sel = np.sort(rng.choice(sel, MAX_FIT_ROWS, replace=False))
            idx.append(sel)
        picks[f] = np.concatenate(idx)
    lo = np.array([p[3] for p in params])
    hi = np.array([p[4] for p in params])

    def unpack(z):
        return lo + (hi - lo) / (1.0 + np.exp(-z))

    def pack(v):
        u = np.clip((np.asarray(v) - lo) / (hi - lo), 1e-6, 1 - 1e-6)
        return np.log(u / (1 - u))

    def residuals(z):
        vals = dict(values)
        for (sec, key, *_), v in zip(params, unpack(z)):
            vals[(sec, key)] = v
        text = to_yaml(vals, sources)
        res = []
        for f in files:
            k = overlap_k(vals, f)
            d = data.files[f]
            pred = np.asarray(d["rows"].predict(text, skip))
            sel = picks[f]
            r = np.log(combine(pred[sel], d["floor"][sel], k) / d["lat"][sel])
            # Each (GPU, file) weighs the same whatever its row count.
            w = np.ones(len(sel))
            for g in train_gpus:
                m = d["gpu"][sel] == g
                if m.any():
                    w[m] = 1.0 / math.sqrt(m.sum())
            res.append(r * w)
        return np.concatenate(res)

    z0 = pack([values[(p[0], p[1])] for p in params])
    best = None
    # The GEMM model picks the fastest tile: a piecewise objective, so a few starts.
    starts = [z0] if group != "gemm" else [z0, z0 + 0.7, z0 - 0.7]
    for s in starts:
        r = least_squares(residuals, s, loss="soft_l1", f_scale=0.05, diff_step=1e-2,
                          max_nfev=60 * len(params))
        if best is None or r.cost < best.cost:
            best = r
    for (sec, key, *_), v in zip(params, unpack(best.x)):
        values[(sec, key)] = float(v)
    log("  %-6s cost %.4g  %s" % (group, best.cost, ", ".join(
        "%s=%.4g" % (p[1], values[(p[0], p[1])]) for p in params)))


def kept_values(path):
    """The coefficients this script does not fit (Tensor Core, attention, launch floor) and the
    source lines that describe them, from the file the fit replaces."""
    values, sources, section = {}, [], None
    with open(path) as f:
        for line in f:
            if line.startswith("  - ") and line.strip()[3:].startswith("tensor"):
                sources.append(line.strip()[3:].strip().strip('"'))
            elif re.match(r"^[a-z_]+:\s*$", line):
                section = line.strip()[:-1]
            elif line.startswith("  ") and section in ("tensor", "attention", "launch"):
                k, v = line.strip().split(":", 1)
                values[(section, k.strip())] = float(v)
    return values, sources


def fit(ext, data, train_gpus, log, kept):
    # Always from the same start (the GROUPS table), never from the shipped file, so a fit
    # reproduces whatever was shipped before; `kept` holds what another script fits.
    values = {(p[0], p[1]): p[2] for group in GROUPS.values() for p in group}
    values.update(kept)
    sources = ["fit in progress"]
    for group in FIT_ORDER:
        fit_group(data, group, values, sources, train_gpus, log)
    # The stream group's launch and overlap are shared: refit once after the others moved.
    fit_group(data, "stream", values, sources, train_gpus, log)
    for name, files in CLASSES:
        cells = []
        for g in train_gpus:
            model, _ = errors(data, values, sources, g, files)
            big, _ = errors(data, values, sources, g, files, min_over_floor=3)
            cells.append("%s %.1f/%.0f (%.1f)" % (g, quantile(model, 50), quantile(model, 90),
                                                  quantile(big, 50)))
        log("  in-sample %-13s %s" % (name, "  ".join(cells)))
    log("  (median / p90 on every row, median on rows over 3x the host floor)")
    return values


def quantile(v, q):
    return float(np.percentile(v, q)) if len(v) else float("nan")


def errors(data, values, sources, gpu, files, min_over_floor=0):
    text = to_yaml(values, sources)
    model, roof = [], []
    for f in files:
        k = overlap_k(values, f)
        d = data.files[f]
        sel = (d["gpu"] == gpu) & (d["lat"] >= min_over_floor * d["floor"])
        if not sel.any():
            continue
        pred = np.asarray(d["rows"].predict(text))[sel]
        lat = d["lat"][sel]
        model.append(np.abs(combine(pred, d["floor"][sel], k) / lat - 1))
        if "roof" not in d:
            d["roof"] = np.asarray(d["rows"].roofline())
        roof.append(np.abs(d["roof"][sel] / lat - 1))
    return np.concatenate(model) * 100, np.concatenate(roof) * 100


def evaluate(ext, data, log, kept):
    """Leave one GPU out: fit on four, predict every row of the fifth."""
    table = {}
    for held in GPUS:
        log("held out %s:" % held)
        train = [g for g in GPUS if g != held]
        values = fit(ext, data, train, log, kept)
        for name, files in CLASSES:
            for over in (0, 3):
                model, roof = errors(data, values, ["fold"], held, files, min_over_floor=over)
                table[(name, held, over)] = (quantile(model, 50), quantile(model, 90),
                                             quantile(roof, 50), quantile(roof, 90), len(model))
    return table


def markdown(table):
    out = []
    for over, title in ((0, "Every row:"),
                        (3, "Rows whose latency is over 3 times the machine's host floor (the "
                            "kernel, not the host, sets their time; the row count is in brackets):")):
        out += [title, "", "| op class | " + " | ".join(GPUS) + " |", "|---" * (len(GPUS) + 1) + "|"]
        for name, _ in CLASSES:
            cells = []
            for g in GPUS:
                med, p90, rmed, rp90, n = table[(name, g, over)]
                cell = "%.1f / %.0f (roofline %.0f / %.0f)" % (med, p90, rmed, rp90)
                if over:
                    cell = "%.1f / %.0f [%d]" % (med, p90, n)
                cells.append(cell)
            out.append("| %s | %s |" % (name, " | ".join(cells)))
        out.append("")
    return "\n".join(out)


BEGIN = "<!-- kernel-logo:begin (scripts/fit_kernel_models.py evaluate --update-doc) -->"
END = "<!-- kernel-logo:end -->"


def update_doc(path, text, begin=BEGIN, end=END):
    """Replaces the kernel table block of the Markdown file `path` (or another block's)."""
    doc_block.update_doc(path, text, begin, end)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["fit", "evaluate"])
    ap.add_argument("--data", default=DEFAULT_DATA, help="the shared kernel data folder")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "kernel", "coefficients.yaml"),
                    help="fit: where to write the coefficients")
    ap.add_argument("--update-doc", help="evaluate: replace the table block in this Markdown file")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))

    ext = load_extension()
    data = Data(ext, args.data)
    kept, kept_sources = kept_values(args.out)
    if args.command == "fit":
        values = fit(ext, data, GPUS, log, kept)
        sources = [
            "Fitted by scripts/fit_kernel_models.py fit on %s from the shared kernel data "
            "(NeuSight training set: Lee, Phanishayee, Mahajan, 'Forecasting GPU Performance for "
            "Deep Learning Training and Inference', ASPLOS 2025; MIT licence): PyTorch 2.1 FP32 "
            "kernels on P100-PCIe, P4, T4, V100-PCIe-32GB, A100-PCIe-40GB/80GB"
            % datetime.date.today().isoformat(),
        ] + kept_sources
        with open(args.out, "w") as f:
            f.write(to_yaml(values, sources))
        log("wrote %s" % args.out)
    else:
        table = evaluate(ext, data, log, kept)
        text = markdown(table)
        print(text, end="")
        if args.update_doc:
            update_doc(args.update_doc, text)


if __name__ == "__main__":
    main()
