#!/usr/bin/python3
"""Cost versus throughput of an `orrery plan` result, with the Pareto front and the target.

  /usr/bin/python3 scripts/plot_pareto.py out/plan.h5 -o pareto.png [--label gpu]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="pareto.png")
    ap.add_argument("--label", help="comma-separated parameters naming the points on the front (default: those that vary)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    rows, sweep, _ = pc.load(args.file)
    rows = [r for r in rows if r["ok"] and r["params"].get("plan.throughput")]
    if not rows:
        pc.fail("no priced, successful point: is this the output of `orrery plan`?")
    metric = sweep.get("plan_metric", "throughput").replace("_per_s", "/s")
    target = float(sweep["plan_target"]) if "plan_target" in sweep else None
    cost = lambda r: float(r["params"]["plan.cost"])  # noqa: E731
    rate = lambda r: float(r["params"]["plan.throughput"])  # noqa: E731
    keys = args.label.split(",") if args.label else pc.varying_keys(rows)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    meets = [r for r in rows if r["params"].get("plan.meets_target") == "yes"]
    short = [r for r in rows if r["params"].get("plan.meets_target") != "yes"]
    ax.scatter([cost(r) for r in short], [rate(r) for r in short], color="#bbbbbb", label="below target")
    ax.scatter([cost(r) for r in meets], [rate(r) for r in meets], color="#4c72b0", label="meets target")
    front = sorted((r for r in rows if r["params"].get("plan.pareto") == "yes"), key=cost)
    if front:
        xs, ys = [], []
        for r in front:  # a staircase: throughput only rises with cost along the front
            if xs:
                xs.append(cost(r))
                ys.append(ys[-1])
            xs.append(cost(r))
            ys.append(rate(r))
        ax.plot(xs, ys, color="#dd8452", lw=1.5, label="Pareto front")
        for r in front:
            text = ", ".join(f"{pc.friendly(k)}={r['params'].get(k, '')}" for k in keys)
            ax.annotate(text, (cost(r), rate(r)), fontsize=6, xytext=(4, -10), textcoords="offset points")
    if target is not None:
        ax.axhline(target, color="#c44e52", ls="--", lw=1, label=f"target {target:g} {metric}")
    if meets:
        best = min(meets, key=lambda r: (cost(r), -rate(r)))
        ax.scatter([cost(best)], [rate(best)], s=160, facecolors="none", edgecolors="#c44e52",
                   linewidths=2, label="cheapest meeting the target", zorder=3)
    ax.set_xlabel("cost")
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(args.title or "Capacity plan: cost versus throughput")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
