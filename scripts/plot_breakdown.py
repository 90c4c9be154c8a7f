#!/usr/bin/python3
"""Where the time goes, one bar per point (Fig. 7 / Fig. 12 style).

  /usr/bin/python3 scripts/plot_breakdown.py out/sweep.h5 -o breakdown.png [--percent]

Each bar stacks the mean busy time of compute, communication, input/output copies and host
launch: their sum is what an analytical model that assumes no overlap adds up (PAI's
T = Td + Tc + Tw). The black tick is the simulated iteration time: below the bar where parts
overlap (gradients all-reduced during backward), above it where devices wait (a collective
stalls on its slowest participant, flows queue on a shared link). A red diamond marks the PAI
analytical model's estimate of the same step where the file has one (/runs analytical_s).
--percent shows each part as a share of the sum instead (the paper's breakdown figures).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402

PARTS = [("compute_s", "compute", "#4c72b0"), ("comm_s", "communication", "#dd8452"),
         ("io_s", "input I/O", "#55a868"), ("host_s", "host launch", "#8172b3")]


def label_of(row, keys, sep):
    return sep.join(f"{pc.friendly(k)}={row['params'].get(k, '')}" for k in keys) or str(row["index"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="breakdown.png")
    ap.add_argument("--label", help="comma-separated parameters naming each bar (default: those that vary)")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE", help="keep only these points")
    ap.add_argument("--percent", action="store_true", help="shares of the no-overlap sum")
    ap.add_argument("--max", type=int, default=40, help="at most this many bars")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    rows = [r for r in pc.filter_rows(pc.load(args.file)[0], args.where) if r["ok"]]
    if not rows:
        pc.fail("no successful run to plot")
    rows = rows[: args.max]
    keys = args.label.split(",") if args.label else pc.varying_keys(rows)
    rotate = len(rows) * max(len(pc.friendly(k)) + 10 for k in keys or ["#"]) > 90
    labels = [label_of(r, keys, ", " if rotate else "\n") for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(rows) + 3), 4.8))
    bottom = [0.0] * len(rows)
    for col, name, color in PARTS:
        vals = []
        for i, r in enumerate(rows):
            total = sum(r[c] for c, _, _ in PARTS)
            v = r[col] * 1e3
            vals.append(100 * r[col] / total if args.percent and total > 0 else v)
        ax.bar(range(len(rows)), vals, bottom=bottom, color=color, label=name, width=0.7)
        bottom = [b + v for b, v in zip(bottom, vals)]
    if not args.percent:
        ax.scatter(range(len(rows)), [r["iteration_time_s"] * 1e3 for r in rows], marker="_", s=400,
                   color="black", linewidths=2.5, zorder=3, label="simulated iteration time")
        analytic = [(i, r["analytical_s"] * 1e3) for i, r in enumerate(rows) if r.get("analytical_s", 0) > 0]
        if analytic:
            ax.scatter([i for i, _ in analytic], [v for _, v in analytic], marker="D", s=22,
                       color="#c44e52", zorder=4, label="PAI analytical (70% of peak, no overlap)")
    ax.set_ylabel("share of the no-overlap sum (%)" if args.percent else "time (ms)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=90 if rotate else 0, fontsize=7)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(args.title or "Time breakdown (bar: sum of the parts, no overlap; tick: simulated)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
