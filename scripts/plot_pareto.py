#!/usr/bin/python3
"""Cost versus throughput of an `orrery plan` result, with the Pareto front and the target.

  /usr/bin/python3 scripts/plot_pareto.py out/plan.h5 -o pareto.png [--label gpu,servers]

Every candidate is a dot, coloured by the first parameter that varies with text values (the GPU
model, say) and filled where it meets the target. The Pareto front (no other candidate is both
cheaper and faster) is the staircase; its points are numbered in cost order, and the list beside
the plot says what each number is, so no label sits on top of another. The dashed line is the
target and the ring the cheapest candidate that meets it. Both axes are logarithmic when the
candidates span more than a factor of 20 (a cluster doubled is twice the cost and about twice
the throughput, so doublings sit at even steps).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

import plot_common as pc  # noqa: E402

COLORS = ["#4c72b0", "#dd8452", "#55a868", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974"]
MAX_LISTED = 30  # front points numbered and listed; the rest of a longer front is unnumbered


def si(v, _pos=None):
    """12000 -> '12k', 875000 -> '875k', 1.2e6 -> '1.2M'."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="pareto.png")
    ap.add_argument("--label", help="comma-separated parameters that name the front's points "
                    "(default: those that vary)")
    ap.add_argument("--linear", action="store_true", help="linear axes even for a wide range")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    rows, sweep, attrs = pc.load(args.file)
    rows = [r for r in rows if r["ok"] and r["params"].get("plan.throughput")]
    if not rows:
        pc.fail("no priced, successful point: is this the output of `orrery plan`?")
    fabric = pc.fabric_kind(rows, attrs)
    metric = sweep.get("plan_metric", "throughput").replace("_per_s", "/s")
    target = float(sweep["plan_target"]) if "plan_target" in sweep else None
    cost = lambda r: float(r["params"]["plan.cost"])  # noqa: E731
    rate = lambda r: float(r["params"]["plan.throughput"])  # noqa: E731
    keys = args.label.split(",") if args.label else pc.varying_keys(rows)
    meets = lambda r: r["params"].get("plan.meets_target") == "yes"  # noqa: E731

    # Colour by the first varying key whose values are names, not quantities.
    group_key = next((k for k in keys if any(pc.quantity(r["params"].get(k, "")) is None
                                             for r in rows)), None)
    groups = sorted({r["params"].get(group_key, "") for r in rows}) if group_key else [""]
    color = {g: COLORS[i % len(COLORS)] for i, g in enumerate(groups)}

    fig, (ax, side) = plt.subplots(1, 2, figsize=(11, 5.5), gridspec_kw={"width_ratios": [3, 1.25]})
    for g in groups:
        mine = [r for r in rows if not group_key or r["params"].get(group_key, "") == g]
        for ok in (False, True):
            pts = [r for r in mine if meets(r) == ok]
            if not pts:
                continue
            c = color[g]
            ax.scatter([cost(r) for r in pts], [rate(r) for r in pts], s=36, zorder=3,
                       facecolors=c if ok else "white", edgecolors=c, linewidths=1.4)
    front = sorted((r for r in rows if r["params"].get("plan.pareto") == "yes"),
                   key=lambda r: (cost(r), rate(r)))
    if front:
        xs, ys = [], []
        for r in front:  # a staircase: throughput only rises with cost along the front
            if xs:
                xs.append(cost(r))
                ys.append(ys[-1])
            xs.append(cost(r))
            ys.append(rate(r))
        ax.plot(xs, ys, color="#555555", lw=1, zorder=2)
        for n, r in enumerate(front[:MAX_LISTED], 1):
            ax.annotate(str(n), (cost(r), rate(r)), xytext=(-4, 5), textcoords="offset points",
                        fontsize=7, ha="right", color="#333333", zorder=4)
    if target is not None:
        ax.axhline(target, color="#c44e52", ls="--", lw=1, zorder=1)
    best = min((r for r in rows if meets(r)), key=lambda r: (cost(r), -rate(r)), default=None)
    if best is not None:
        ax.scatter([cost(best)], [rate(best)], s=220, facecolors="none", edgecolors="#c44e52",
                   linewidths=2, zorder=5)

    span = lambda vals: max(vals) / min(vals) if min(vals) > 0 else 1  # noqa: E731
    if not args.linear and span([cost(r) for r in rows]) > 20:
        ax.set_xscale("log")
    if not args.linear and span([rate(r) for r in rows]) > 20:
        ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":  # 1, 2, 5 per decade: a decade alone says too little
            axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        axis.set_major_formatter(FuncFormatter(si))
        axis.set_minor_formatter(FuncFormatter(lambda v, p: ""))
    ax.set_xlabel("cost (the plan's price units)")
    ax.set_ylabel(metric)
    ax.grid(True, which="both", alpha=0.25)
    ax.set_title(args.title or "Capacity plan: cost versus throughput", fontsize=11)

    # The legend and the numbered front, in the side panel.
    side.axis("off")
    handles = [plt.Line2D([], [], marker="o", ls="none", color=color[g], markersize=6, label=g)
               for g in groups if group_key]
    handles += [
        plt.Line2D([], [], marker="o", ls="none", markerfacecolor="#777777",
                   markeredgecolor="#777777", markersize=6, label="meets the target"),
        plt.Line2D([], [], marker="o", ls="none", markerfacecolor="white",
                   markeredgecolor="#777777", markersize=6, label="below the target"),
        plt.Line2D([], [], color="#555555", lw=1, label="Pareto front"),
    ]
    if target is not None:
        handles.append(plt.Line2D([], [], color="#c44e52", ls="--", lw=1,
                                  label=f"target {si(target)} {metric}"))
    if best is not None:
        handles.append(plt.Line2D([], [], marker="o", ls="none", markerfacecolor="none",
                                  markeredgecolor="#c44e52", markeredgewidth=2, markersize=10,
                                  label="cheapest meeting it"))
    leg = side.legend(handles=handles, loc="upper left", fontsize=8, frameon=False,
                      title=pc.friendly(group_key, fabric) if group_key else None,
                      title_fontsize=8, alignment="left")
    side.add_artist(leg)
    names = [k for k in keys if k != group_key] if group_key else keys
    header = "Pareto front (cost, %s)" % metric
    lines = [header, "#  " + ", ".join(([pc.friendly(group_key, fabric)] if group_key else []) +
                                        [pc.friendly(k, fabric) for k in names])]
    for n, r in enumerate(front[:MAX_LISTED], 1):
        vals = ([r["params"].get(group_key, "")] if group_key else []) + \
            [r["params"].get(k, "") for k in names]
        mark = "  <- cheapest" if r is best else ""
        lines.append(f"{n:<2} {', '.join(vals)}: {si(cost(r))}, {si(rate(r))}{mark}")
    if len(front) > MAX_LISTED:
        lines.append(f"... {len(front) - MAX_LISTED} more")
    side.text(0.0, 0.0, "\n".join(lines), transform=side.transAxes, fontsize=7,
              family="monospace", va="bottom", ha="left")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
