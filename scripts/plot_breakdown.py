#!/usr/bin/python3
"""Where the time goes, one bar per point (Fig. 7 / Fig. 12 style).

  /usr/bin/python3 scripts/plot_breakdown.py out/sweep.h5 -o breakdown.png [--percent]

Each bar stacks the mean busy time of compute, communication, input/output copies and host
launch: their sum is what an analytical model that assumes no overlap adds up (PAI's
T = Td + Tc + Tw). The black tick is the simulated iteration time: below the top of the bar
where parts overlap (gradients all-reduced during backward), above it where devices wait (a
collective stalls on its slowest participant, flows queue on a shared link). A red diamond marks
the PAI analytical model's estimate of the same step where the file has one (/runs
analytical_s).

--percent shows each part as a share of that no-overlap sum instead (the paper's breakdown
figures), so every bar is 100%; the simulated iteration time is written above each bar.
Parts that are zero in every bar are left out of the bars and the legend.
"""
import argparse
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402

PARTS = [("compute_s", "compute", "#4c72b0"), ("comm_s", "communication", "#dd8452"),
         ("io_s", "input I/O", "#55a868"), ("host_s", "host launch", "#8172b3")]
MIN_SHARE_LABEL = 6.0  # percent: smaller segments get no number written in them
MIN_SHARE_SHOWN = 0.5  # percent: a part below this in every bar is listed, not drawn
LABEL_WIDTH = 22  # characters per line of a bar's label


def label_of(row, keys, attrs, width=LABEL_WIDTH):
    """One line per varying key, "name: value", wrapped so no line is long."""
    if not keys:
        return str(row["index"])
    fabric = pc.fabric_kind([row], attrs) if "platform.server.nic.bandwidth" in keys else None
    lines = []
    for k in keys:
        lines += textwrap.wrap(f"{pc.friendly(k, fabric)}: {row['params'].get(k, '')}", width,
                               break_on_hyphens=False, break_long_words=False)
    return "\n".join(lines)


def ms(seconds):
    v = seconds * 1e3
    return f"{v:.3g} ms" if v < 1000 else f"{v / 1e3:.3g} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="breakdown.png")
    ap.add_argument("--label", help="comma-separated parameters naming each bar "
                    "(default: those that vary)")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                    help="keep only these points")
    ap.add_argument("--percent", action="store_true", help="shares of the no-overlap sum")
    ap.add_argument("--max", type=int, default=40, help="at most this many bars")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    all_rows, _, attrs = pc.load(args.file)
    rows = [r for r in pc.filter_rows(all_rows, args.where) if r["ok"]]
    if not rows:
        pc.fail("no successful run to plot")
    rows = rows[: args.max]
    keys = args.label.split(",") if args.label else pc.varying_keys(rows)
    labels = [label_of(r, keys, attrs) for r in rows]
    sums = [sum(r[c] for c, _, _ in PARTS) for r in rows]
    parts = [p for p in PARTS
             if any(s > 0 and 100 * r[p[0]] / s >= MIN_SHARE_SHOWN for r, s in zip(rows, sums))]
    hidden = [name for col, name, _ in PARTS if (col, name) not in {(c, n) for c, n, _ in parts}]
    x = range(len(rows))
    def per_bar(labels):  # inches: room for the widest label line under each bar (8 pt)
        return max(0.9, 0.062 * max(len(ln) for lb in labels for ln in lb.split("\n")) + 0.1)

    if per_bar(labels) * len(rows) > 12:  # many bars: narrower, taller labels
        labels = [label_of(r, keys, attrs, 15) for r in rows]

    fig, ax = plt.subplots(figsize=(max(7.5, per_bar(labels) * len(rows) + 3.5), 5.2))
    bottom = [0.0] * len(rows)
    for col, name, color in parts:
        if args.percent:
            vals = [100 * r[col] / s if s > 0 else 0 for r, s in zip(rows, sums)]
        else:
            vals = [r[col] * 1e3 for r in rows]
        ax.bar(x, vals, bottom=bottom, color=color, label=name, width=0.65,
               edgecolor="white", linewidth=0.5)
        if args.percent:
            for i, (b, v) in enumerate(zip(bottom, vals)):
                if v >= MIN_SHARE_LABEL:
                    ax.text(i, b + v / 2, f"{v:.0f}%", ha="center", va="center", fontsize=8,
                            color="white", fontweight="bold")
        bottom = [b + v for b, v in zip(bottom, vals)]

    if args.percent:
        for i, r in enumerate(rows):
            ax.text(i, 101.5, f"step {ms(r['iteration_time_s'])}", ha="center", va="bottom",
                    fontsize=8)
        ax.set_ylim(0, 112)
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("share of the no-overlap sum of the parts (%)")
        title = "Where the time goes: each part's share of the no-overlap sum"
    else:
        ax.scatter(x, [r["iteration_time_s"] * 1e3 for r in rows], marker="_", s=500,
                   color="black", linewidths=2.5, zorder=3, label="simulated iteration time")
        analytic = [(i, r["analytical_s"] * 1e3) for i, r in enumerate(rows)
                    if r.get("analytical_s", 0) > 0]
        if analytic:
            ax.scatter([i for i, _ in analytic], [v for _, v in analytic], marker="D", s=28,
                       color="#c44e52", edgecolors="white", linewidths=0.6, zorder=4,
                       label="PAI analytical model\n(70% of peak, no overlap)")
        ax.set_ylabel("time per iteration (ms)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        title = "Where the time goes: bars add the parts with no overlap, tick is the simulation"
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    # Legend entries top to bottom in the order the segments are stacked.
    handles, names = ax.get_legend_handles_labels()
    stacked = [(h, n) for h, n in zip(handles, names) if n in {p[1] for p in parts}][::-1]
    others = [(h, n) for h, n in zip(handles, names) if n not in {p[1] for p in parts}]
    entries = others + stacked
    if hidden:  # said in the legend, so the reader knows they were not forgotten
        note = "not drawn (under %g%% of\nevery bar): %s" % (MIN_SHARE_SHOWN, ", ".join(hidden))
        entries.append((plt.Line2D([], [], linestyle="none"), note))
    ax.legend([h for h, _ in entries], [n for _, n in entries], fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(args.title or title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
