#!/usr/bin/python3
"""Training throughput per GPU generation, normalised to the first (the GPU-upgrade study).

  orrery sweep scenarios/studies/gpu-upgrade.yaml -j 2
  /usr/bin/python3 scripts/plot_gpu_upgrade.py out/studies/gpu-upgrade.h5 \\
      -o docs/images/gpu-upgrade.png --table

Reads a sweep with three named axes: the GPU (--gpu, default "gpu"; its labels in the order of
the file give the bars' order and the first label is the baseline), the model (--model,
default "model": one group of bars each) and the GPU count (--gpus, default "gpus": one panel
each). Throughput is samples per second: the point's per-GPU batch (workload.batch as the
point's scenario sets it) x the GPUs that ran compute (from the run's device table) / the
iteration time. --table prints it as a Markdown table: samples/s, and in parentheses the
speedup over the baseline GPU of the same model and GPU count.
"""
import argparse
import math

import h5py
import matplotlib
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402


def point_batch(scenario, params, named_axes):
    """workload.batch of one point: the base scenario's, replaced by what its named labels set."""
    batch = (scenario.get("workload") or {}).get("batch")
    named = (scenario.get("sweep") or {}).get("named") or {}
    for axis in named_axes:
        label = named.get(axis, {}).get(params.get(axis, ""), {}) or {}
        if isinstance(label.get("workload"), dict) and "batch" in label["workload"]:
            batch = label["workload"]["batch"]
        if "workload.batch" in label:
            batch = label["workload.batch"]
    if batch is None:
        pc.fail(f"point {params.get('sweep.index')}: no workload.batch in its scenario")
    return float(batch)


def compute_gpus(path, rows):
    """Per row: the devices that ran compute (a CPU that only sources input copies does not)."""
    out = {}
    with h5py.File(path, "r") as f:
        for i, r in enumerate(rows):
            table = f[f"runs_detail/{i}/devices"][:]
            out[r["index"]] = sum(1 for d in table if d["busy_compute"] > 0 and b"gpu" in d["name"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE.h5")
    ap.add_argument("-o", "--output", default="gpu-upgrade.png")
    ap.add_argument("--gpu", default="gpu", help="named axis of the GPU generations (bars)")
    ap.add_argument("--model", default="model", help="named axis of the models (groups)")
    ap.add_argument("--gpus", default="gpus", help="named axis of the GPU counts (panels)")
    ap.add_argument("--table", action="store_true", help="print the numbers as a Markdown table")
    args = ap.parse_args()

    rows, sweep, attrs = pc.load(args.file)
    scenario = yaml.safe_load(attrs.get("scenario", "")) or {}
    named_axes = [a for a in sweep.get("named_axes", "").split("\n") if a]
    for axis in (args.gpu, args.model, args.gpus):
        if axis not in named_axes:
            pc.fail(f"{args.file}: no named axis \"{axis}\" (named axes: {', '.join(named_axes) or 'none'})")
    failed = [r for r in rows if not r["ok"]]
    if failed:
        pc.fail(f"{args.file}: {len(failed)} point(s) failed, e.g. #{failed[0]['index']}: "
                f"{failed[0]['params'].get('sweep.error', '')}")

    def labels(axis):  # in the order of the file, which is the order of the sweep
        seen = []
        for r in sorted(rows, key=lambda r: r["index"]):
            if r["params"][axis] not in seen:
                seen.append(r["params"][axis])
        return seen

    gpus_of = compute_gpus(args.file, rows)
    gens, models, counts = labels(args.gpu), labels(args.model), labels(args.gpus)
    tput = {}  # (count, model, gen) -> samples/s
    for r in rows:
        p = r["params"]
        samples = point_batch(scenario, p, named_axes) * gpus_of[r["index"]]
        tput[(p[args.gpus], p[args.model], p[args.gpu])] = samples / r["iteration_time_s"]
    base = gens[0]
    speedup = {k: v / tput[(k[0], k[1], base)] for k, v in tput.items() if (k[0], k[1], base) in tput}

    fig, axes = plt.subplots(1, len(counts), figsize=(5.2 * len(counts), 4.4), sharey=True,
                             squeeze=False)
    colors = plt.cm.viridis([i / max(1, len(gens) - 1) * 0.9 for i in range(len(gens))])
    width = 0.8 / len(gens)
    top = max(speedup.values())
    for ax, count in zip(axes[0], counts):
        n = gpus_of[next(r["index"] for r in rows if r["params"][args.gpus] == count)]
        for j, gen in enumerate(gens):
            xs = [m + (j - (len(gens) - 1) / 2) * width for m in range(len(models))]
            ys = [speedup.get((count, model, gen), float("nan")) for model in models]
            bars = ax.bar(xs, ys, width * 0.95, color=colors[j], label=gen)
            for bar, y in zip(bars, ys):
                if not math.isnan(y):
                    ax.annotate(f"{y:.1f}", (bar.get_x() + bar.get_width() / 2, y), xytext=(0, 2),
                                textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(models)))
        # The baseline's absolute throughput under each group, so the ratios can be read back.
        ax.set_xticklabels([f"{m}\n{base}: {tput[(count, m, base)]:,.0f} samples/s"
                            if (count, m, base) in tput else m for m in models], fontsize=8)
        ax.set_title(f"{n} GPU" + ("s, one server, data-parallel AllReduce" if n > 1 else ""),
                     fontsize=10)
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        ax.set_ylim(0, top * 1.12)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel(f"training throughput vs {base} (samples/s ratio)")
    axes[0][-1].legend(title="GPU", fontsize=8, title_fontsize=8, loc="upper left")
    fig.suptitle(scenario.get("description", ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)

    if args.table:
        head = "| GPUs | model | " + " | ".join(gens) + " |"
        print(head)
        print("|" + "---|" * (2 + len(gens)))
        for count in counts:
            for model in models:
                cells = []
                for gen in gens:
                    key = (count, model, gen)
                    cells.append(f"{tput[key]:,.0f} ({speedup[key]:.2f}x)" if key in tput else "")
                print(f"| {count} | {model} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
