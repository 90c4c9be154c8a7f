#!/usr/bin/python3
"""Time, energy and cost of a training campaign per system and scale.

  orrery sweep scenarios/studies/campaign-405b.yaml -j 2
  /usr/bin/python3 scripts/plot_campaign.py out/studies/campaign-405b.h5 \\
      -o docs/images/campaign-405b.png --table

Reads a sweep whose points ran a campaign (the scenario's `campaign` section, so every point has
campaign.* figures) over two named axes: the system (--system, default "system": one line each)
and the GPU count (--gpus, default "gpus": the x axis, labels read as numbers). Three panels:
expected days to the target (failures, checkpoints and restarts included; the failure-free
days dashed beside it, and the goodput written at each point), the facility's energy in GWh,
and the cost in millions (GPU-hours, spares included, plus energy). --table prints the figures
as a Markdown table.
"""
import argparse

import matplotlib
import matplotlib.ticker
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402

COLORS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE.h5")
    ap.add_argument("-o", "--output", default="campaign.png")
    ap.add_argument("--system", default="system", help="named axis of the systems (lines)")
    ap.add_argument("--gpus", default="gpus", help="named axis of the GPU counts (x axis)")
    ap.add_argument("--table", action="store_true", help="print the figures as a Markdown table")
    args = ap.parse_args()

    rows, sweep, attrs = pc.load(args.file)
    scenario = yaml.safe_load(attrs.get("scenario", "")) or {}
    pc.require_named_axes(args.file, sweep, (args.system, args.gpus))
    pc.require_all_ran(args.file, rows)
    if not rows or "campaign.wall_days" not in rows[0]["params"]:
        pc.fail(f"{args.file}: its points have no campaign.* figures (no campaign section)")
    systems = pc.axis_labels(rows, args.system)
    value = {}  # (system, gpus) -> figures
    for r in rows:
        p = r["params"]
        try:
            gpus = int(float(p[args.gpus]))
        except ValueError:
            pc.fail(f"{args.file}: {args.gpus} label \"{p[args.gpus]}\" is not a GPU count")
        f = {k[len("campaign."):]: float(v) for k, v in p.items() if k.startswith("campaign.")}
        f["step_s"] = float(r["iteration_time_s"])
        value[(p[args.system], gpus)] = f

    panels = [
        ("wall_days", "days to the target (dashed: without failures)"),
        ("energy_mwh", "energy, GWh (facility)"),
        ("cost", "cost, millions (GPU-hours + energy)"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    for ax, (key, title) in zip(axes, panels):
        for j, s in enumerate(systems):
            xs = sorted(g for (sys_, g) in value if sys_ == s)
            scale = {"energy_mwh": 1e-3, "cost": 1e-6}.get(key, 1)
            ys = [value[(s, g)][key] * scale for g in xs]
            color = COLORS[j % len(COLORS)]
            ax.plot(xs, ys, "o-", color=color, label=s)
            if key == "wall_days":
                ax.plot(xs, [value[(s, g)]["work_days"] for g in xs], "--", color=color,
                        alpha=0.6, linewidth=1)
                for x, y, g in zip(xs, ys, xs):
                    ax.annotate(f"{100 * value[(s, g)]['goodput']:.1f}%", (x, y),
                                xytext=(4, 4), textcoords="offset points", fontsize=7,
                                color=color)
        ax.set_xscale("log", base=2)
        if key == "wall_days":
            # Days fall about as 1 / GPUs: a log axis, labelled in plain numbers.
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: f"{v:g}" if str(int(v))[0] in "25" else ""))
        else:
            ax.set_ylim(bottom=0, top=1.15 * max(ln.get_ydata().max() for ln in ax.lines))
        gpu_counts = sorted({g for (_, g) in value})
        ax.set_xticks(gpu_counts)
        ax.set_xticklabels([f"{g:,}" for g in gpu_counts], fontsize=8)
        ax.set_xlabel("GPUs", fontsize=9)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    campaign = scenario.get("campaign", {})
    fig.suptitle(f"{scenario.get('description', '')}\nreliability {campaign.get('reliability', '')}"
                 f", goodput at each point; prices per GPU-hour as the scenario gives them",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=130)
    print(args.output)

    if args.table:
        print("| system | GPUs | step | days without failures | expected days | goodput | "
              "interruptions | checkpoint every | GWh | MW | cost (M) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in systems:
            for g in sorted(g for (sys_, g) in value if sys_ == s):
                f = value[(s, g)]
                print(f"| {s} | {g:,} | {f['step_s']:.2f} s | {f['work_days']:.1f} | "
                      f"{f['wall_days']:.1f} | {100 * f['goodput']:.1f}% | "
                      f"{f['interruptions']:.0f} | {f['interval_min']:.1f} min | "
                      f"{f['energy_mwh'] / 1000:.2f} | {f['power_mw']:.1f} | "
                      f"{f['cost'] / 1e6:.1f} |")


if __name__ == "__main__":
    main()
