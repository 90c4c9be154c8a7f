#!/usr/bin/python3
"""Systems and precisions at equal GPU count: throughput, step time and cost per token.

  orrery sweep scenarios/studies/fp8-blackwell.yaml -j 1
  /usr/bin/python3 scripts/plot_precision_study.py out/studies/fp8-blackwell.h5 \\
      -o docs/images/fp8-blackwell.png --table

Reads a sweep of language-model points (type: llm) with two named axes: the system (--system,
default "system": one bar each, in the order of the file, the first the baseline of the
speedups) and the model (--model, default "model": one group of bars each). Three panels:
tokens/s per GPU (llm.tokens_per_s / llm.gpus), time per training step (the iteration time)
and dollars per million tokens,

  $/Mtok = price x GPUs x step_s / 3600 / (tokens per step / 1e6)

with tokens per step = tokens/s x step time (global batch x sequence length). The price is
per GPU-hour of the system's GPU, the part of its label before the first "-" (H100-FP8 ->
H100); --price GPU=USD sets it (repeatable). The defaults are illustrative on-demand rates,
not quotes: H100 $2.69 and B200 $5.98 (RunPod, as listed in deploybase.ai's "B200 vs H200
vs H100" comparison), GB200 $4.54 (Spheron's $9.08 per two-GPU GB200 Superchip, 17 March
2026, halved). --table prints the numbers as a Markdown table: step time, tokens/s per GPU,
MFU (against the GPU's dense peak in the precision its GEMMs run in), the speedup over the baseline
system of the same model, $ per step and $ per million tokens.
"""
import argparse

import matplotlib
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402

DEFAULT_PRICES = {"H100": 2.69, "B200": 5.98, "GB200": 4.54}  # $ per GPU-hour

PANELS = [
    ("tokens_per_gpu", "tokens/s per GPU", "{:,.0f}"),
    ("step_s", "time per step (s)", "{:.2f}"),
    ("usd_per_mtok", "\\$ per million tokens", "\\${:.3f}"),  # \$: not mathtext
]


def gpu_of(system):
    return system.split("-", 1)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE.h5")
    ap.add_argument("-o", "--output", default="precision-study.png")
    ap.add_argument("--system", default="system", help="named axis of the systems (bars)")
    ap.add_argument("--model", default="model", help="named axis of the models (groups)")
    ap.add_argument("--price", action="append", default=[], metavar="GPU=USD",
                    help="$ per GPU-hour of a GPU (the label's part before '-'); repeatable")
    ap.add_argument("--table", action="store_true", help="print the numbers as a Markdown table")
    args = ap.parse_args()

    prices = dict(DEFAULT_PRICES)
    for item in args.price:
        gpu, sep, usd = item.partition("=")
        try:
            prices[gpu] = float(usd)
        except ValueError:
            sep = ""
        if not sep or not gpu:
            pc.fail(f"--price {item}: expected GPU=USD, e.g. --price H100=2.69")

    rows, sweep, attrs = pc.load(args.file)
    scenario = yaml.safe_load(attrs.get("scenario", "")) or {}
    pc.require_named_axes(args.file, sweep, (args.system, args.model))
    pc.require_all_ran(args.file, rows)
    if not rows or "llm.tokens_per_s" not in rows[0]["params"]:
        pc.fail(f"{args.file}: its points have no llm.* figures (not a language-model sweep)")

    systems, models = pc.axis_labels(rows, args.system), pc.axis_labels(rows, args.model)
    missing = sorted({gpu_of(s) for s in systems} - set(prices))
    if missing:
        pc.fail(f"no price for {', '.join(missing)}: pass --price GPU=USD")

    value = {}  # (model, system) -> figures
    for r in rows:
        p = r["params"]
        step = float(r["iteration_time_s"])
        tokens_per_s = float(p["llm.tokens_per_s"])
        gpus = int(float(p["llm.gpus"]))
        tokens = tokens_per_s * step
        price = prices[gpu_of(p[args.system])]
        usd_step = price * gpus * step / 3600
        value[(p[args.model], p[args.system])] = {
            "step_s": step, "tokens_per_gpu": tokens_per_s / gpus, "gpus": gpus,
            "tokens": tokens, "mfu": float(p["llm.mfu"]), "price": price,
            "usd_step": usd_step, "usd_per_mtok": usd_step / (tokens / 1e6),
        }

    fig, axes = plt.subplots(1, len(PANELS), figsize=(5.0 * len(PANELS), 4.8))
    colors = ["#9e9e9e", "#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974"]
    width = 0.8 / len(systems)
    for ax, (key, title, fmt) in zip(axes, PANELS):
        for j, system in enumerate(systems):
            xs = [i + (j - (len(systems) - 1) / 2) * width for i in range(len(models))]
            ys = [value[(m, system)][key] if (m, system) in value else float("nan")
                  for m in models]
            bars = ax.bar(xs, ys, width * 0.92, color=colors[j % len(colors)], label=system)
            for bar, y in zip(bars, ys):
                ax.annotate(fmt.format(y), (bar.get_x() + bar.get_width() / 2, y),
                            xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom", fontsize=7, rotation=90 if key != "step_s" else 0)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, fontsize=9)
        ax.set_title(title, fontsize=10)
        ax.margins(y=0.18)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8, loc="upper left")
    gpus = sorted({v["gpus"] for v in value.values()})
    price_text = ", ".join(f"{g} \\${prices[g]:.2f}"
                           for g in dict.fromkeys(map(gpu_of, systems)))
    fig.suptitle(f"{scenario.get('description', '')}\n{'/'.join(map(str, gpus))} GPUs per "
                 f"system; \\$ per GPU-hour: {price_text}", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=130)
    print(args.output)

    if args.table:
        base = systems[0]
        print(f"| {args.model} | {args.system} | time/step | tokens/s/GPU | MFU | "
              f"speedup vs {base} | $/GPU-h | $/step | $/M tokens |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for m in models:
            for s in systems:
                v = value.get((m, s))
                if not v:
                    continue
                ref = value.get((m, base))
                speedup = f"{ref['step_s'] / v['step_s']:.2f}x" if ref else "-"
                print(f"| {m} | {s} | {v['step_s']:.3f} s | {v['tokens_per_gpu']:,.0f} | "
                      f"{100 * v['mfu']:.1f}% | {speedup} | {v['price']:.2f} | "
                      f"{v['usd_step']:.4f} | {v['usd_per_mtok']:.4f} |")


if __name__ == "__main__":
    main()
