#!/usr/bin/python3
"""Draws the per-op timeline of one run of an Orrery HDF5 results file as a Gantt chart.

One row per (device, stream), ops coloured by phase (forward, backward, optimizer, comm, io).

Usage: scripts/plot_timeline.py RESULTS.h5 -o timeline.png [--run 0] [--devices 4]
       [--title TEXT]
Run it with Debian's /usr/bin/python3 (python3-h5py, python3-matplotlib).
"""
import argparse
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PHASE_COLOURS = {
    "forward": "#4c72b0",
    "backward": "#55a868",
    "optimizer": "#c44e52",
    "comm": "#dd8452",
    "io": "#8172b2",
    "": "#999999",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--run", type=int, default=0)
    parser.add_argument("--devices", type=int, default=4,
                        help="show the first N devices that ran ops (default 4)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    with h5py.File(args.results, "r") as f:
        group = f.get(f"runs_detail/{args.run}")
        if group is None or "timeline" not in group:
            sys.exit(f"{args.results}: run {args.run} has no timeline "
                     "(run without --no-timeline / output.timeline: false)")
        rows = group["timeline"][:]
        name = group.attrs.get("name", "")

    def text(v):
        return v.decode() if isinstance(v, bytes) else v

    devices = []
    for r in rows:
        d = text(r["device"])
        if d not in devices:
            devices.append(d)
    shown = devices[: args.devices]
    lanes = sorted({(text(r["device"]), text(r["stream"])) for r in rows
                    if text(r["device"]) in shown},
                   key=lambda k: (shown.index(k[0]), k[1]))
    lane_of = {k: i for i, k in enumerate(lanes)}

    fig, ax = plt.subplots(figsize=(11, 0.45 * len(lanes) + 1.5))
    for r in rows:
        key = (text(r["device"]), text(r["stream"]))
        if key not in lane_of:
            continue
        start, end = r["start"] * 1e3, r["end"] * 1e3
        ax.barh(lane_of[key], max(end - start, 1e-4), left=start, height=0.8,
                color=PHASE_COLOURS.get(text(r["phase"]), "#999999"), edgecolor="none")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"{d} {s}" for d, s in lanes], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(args.title or f"{name}: one training step")
    # Ops without a phase (kernel launches on the host thread, CPU-side work) are grey.
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PHASE_COLOURS.values()]
    ax.legend(handles, [p or "host launches, other" for p in PHASE_COLOURS], loc="lower right",
              fontsize=8, ncol=6)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
