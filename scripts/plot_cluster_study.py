#!/usr/bin/python3
"""What each candidate platform gives a whole shared cluster (a job-mix capacity study).

  orrery sweep scenarios/studies/cluster-network-upgrade.yaml -j 2
  /usr/bin/python3 scripts/plot_cluster_study.py out/studies/cluster-network-upgrade.h5 \\
      -o docs/images/cluster-network-upgrade.png --table

Reads a sweep of a job-mix scenario (docs/shared-clusters.md) with named axes: the platform
(--axis, default "network": one bar each, the first label of the file the baseline), the job
set (--sets, default "job_set": the points averaged over) and optionally a grouping axis
(--group: one colour each; by default "placement" when the sweep has it and it is not --axis,
else the one named axis left, so --axis placement colours the networks). Three panels, from the
"jobs.*" figures each point stores: the cluster's throughput (GPU-batches/s: the sum over jobs
of GPUs / mean iteration time) relative to the baseline platform under the grouping axis's first
label, on the same job set (so groups compare with each other too); the mean slowdown of jobs against their runs alone, and GPU utilization (compute-busy share of all GPUs).
Bars are means over job sets, whiskers their minimum and maximum. --table prints the same as a
Markdown table.
"""
import argparse
import statistics

import matplotlib
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402

FIGURES = [
    ("throughput", "cluster throughput vs {base}{first}\n(GPU-batches/s ratio, same job set)"),
    ("jobs.mean_slowdown", "mean job slowdown from sharing\n(iteration time / alone)"),
    ("jobs.gpu_utilization", "GPU utilization\n(compute-busy share of all GPUs)"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE.h5")
    ap.add_argument("-o", "--output", default="cluster-study.png")
    ap.add_argument("--axis", default="network", help="named axis of the platforms (bars)")
    ap.add_argument("--sets", default="job_set", help="named axis of the job sets (averaged)")
    ap.add_argument("--group", help="named axis drawn as colours (default: placement if the "
                    "sweep has it and it is not --axis, else the one named axis left)")
    ap.add_argument("--table", action="store_true", help="print the numbers as a Markdown table")
    args = ap.parse_args()

    rows, sweep, attrs = pc.load(args.file)
    scenario = yaml.safe_load(attrs.get("scenario", "")) or {}
    named = pc.require_named_axes(args.file, sweep, (args.axis, args.sets))
    rest = [a for a in named if a not in (args.axis, args.sets)]
    if args.group:
        group = args.group if args.group in rest else None
    else:
        group = "placement" if "placement" in rest else (rest[0] if len(rest) == 1 else None)
    # A named axis neither drawn nor averaged would put several points on one bar of one set.
    left = [a for a in rest if a != group]
    if left:
        pc.fail(f"{args.file}: its points also vary over the named axis "
                f"{', '.join(left)}: give it as --group (or --axis)")
    pc.require_all_ran(args.file, rows)
    if not rows or "jobs.gpu_batches_per_s" not in rows[0]["params"]:
        pc.fail(f"{args.file}: its points have no jobs.* figures (not a sweep of a jobs or "
                "job_mix scenario)")

    platforms, groups, sets = (pc.axis_labels(rows, a) for a in (args.axis, group, args.sets))
    base = platforms[0]
    value = {}  # (group, platform, set, figure) -> number
    for r in rows:
        p = r["params"]
        key = (p.get(group) if group else None, p[args.axis], p[args.sets])
        for name, _ in FIGURES[1:]:
            value[key + (name,)] = float(p[name])
        value[key + ("jobs.gpu_batches_per_s",)] = float(p["jobs.gpu_batches_per_s"])
    # One reference for every group: the baseline platform under the first group's policy, so
    # that groups compare with each other as well as platforms do.
    for (g, plat, s, name), v in list(value.items()):
        if name == "jobs.gpu_batches_per_s":
            ref = value.get((groups[0], base, s, name))
            if ref:
                value[(g, plat, s, "throughput")] = v / ref

    def stats(g, plat, name):
        vs = [value[(g, plat, s, name)] for s in sets if (g, plat, s, name) in value]
        return (statistics.mean(vs), min(vs), max(vs)) if vs else (float("nan"),) * 3

    fig, axes = plt.subplots(1, len(FIGURES), figsize=(4.6 * len(FIGURES), 4.6))
    colors = plt.cm.viridis([0.15 + 0.6 * i / max(1, len(groups) - 1) for i in range(len(groups))])
    width = 0.8 / len(groups)
    for ax, (name, title) in zip(axes, FIGURES):
        for j, g in enumerate(groups):
            xs = [i + (j - (len(groups) - 1) / 2) * width for i in range(len(platforms))]
            st = [stats(g, plat, name) for plat in platforms]
            means = [m for m, _, _ in st]
            err = [[m - lo for m, lo, _ in st], [hi - m for m, _, hi in st]]
            bars = ax.bar(xs, means, width * 0.92, color=colors[j], yerr=err, capsize=2,
                          error_kw={"lw": 0.8}, label=f"{group}: {g}" if group else None)
            for bar, m in zip(bars, means):
                text = f"{100 * m:.0f}%" if name == "jobs.gpu_utilization" else f"{m:.2f}"
                ax.annotate(text, (bar.get_x() + bar.get_width() / 2, m), xytext=(0, 2),
                            textcoords="offset points", ha="center", va="bottom", fontsize=6.5)
        ax.set_xticks(range(len(platforms)))
        ax.set_xticklabels(platforms, rotation=30, ha="right", fontsize=8)
        first = f", {group}: {groups[0]}" if group else ""
        ax.set_title(title.format(base=base, first=first), fontsize=9)
        if name == "jobs.gpu_utilization":
            ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
        if name != "jobs.gpu_utilization":
            ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        ax.grid(True, axis="y", alpha=0.3)
    if group:
        axes[0].legend(fontsize=7, loc="upper left")
    gpus = rows[0]["params"].get("jobs.gpus", "?")
    fig.suptitle(f"{scenario.get('description', '')}: mean over {len(sets)} job sets "
                 f"(whiskers: min-max), {float(gpus):.0f} GPUs", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)

    if args.table:
        cols = ["throughput vs " + base + (f" ({group}: {groups[0]})" if group else ""),
                "GPU-batches/s", "mean slowdown", "max slowdown",
                "GPU utilization", "jobs placed"]
        print("| " + (f"{group} | " if group else "") + f"{args.axis} | " + " | ".join(cols) + " |")
        print("|" + "---|" * (len(cols) + (2 if group else 1)))
        for g in groups:
            for plat in platforms:
                def mean_of(name):
                    vs = [float(r["params"][name]) for r in rows
                          if r["params"][args.axis] == plat
                          and (not group or r["params"][group] == g)]
                    return statistics.mean(vs)
                cells = [f"{stats(g, plat, 'throughput')[0]:.2f}x",
                         f"{mean_of('jobs.gpu_batches_per_s'):,.0f}",
                         f"{mean_of('jobs.mean_slowdown'):.3f}x",
                         f"{mean_of('jobs.max_slowdown'):.3f}x",
                         f"{100 * mean_of('jobs.gpu_utilization'):.1f}%",
                         f"{mean_of('jobs.placed'):.1f}"]
                print("| " + (f"{g} | " if group else "") + f"{plat} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
