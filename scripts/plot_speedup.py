#!/usr/bin/python3
"""Speedup versus normalized resource, one panel per workload (Fig. 11 of the PAI study).

  /usr/bin/python3 scripts/plot_speedup.py out/studies/pai-hw-*.h5 -o speedup.png
  /usr/bin/python3 scripts/plot_speedup.py out/studies/pai-table3-grid.h5 --by arch -o grid.png

One panel per file, or per value of --by (a named axis) within a file.

For a one_at_a_time sweep each swept key is varied alone around the base point: x is the key's
value over its base value, y the base iteration time over the point's. For a grid sweep, each key
is varied with the others at their baseline (--baseline KEY=VALUE, default the smallest value).
"""
import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402


def series_one_at_a_time(rows, baseline):
    base = [r for r in rows if r["params"].get("sweep.varied") == "base"]
    if not base:
        return {}
    base = base[0]
    out = {}
    for key in sorted({r["params"]["sweep.varied"] for r in rows} - {"base"}):
        ref_text = baseline.get(key) or base["params"].get(key, "")
        ref = pc.quantity(ref_text)
        if not ref:
            pc.fail(f"no base value for {key}: set it in the scenario or pass --baseline {key}=VALUE")
        pts = [(1.0, 1.0)]
        for r in rows:
            if r["params"].get("sweep.varied") == key and r["ok"]:
                pts.append((pc.quantity(r["params"][key]) / ref,
                            base["iteration_time_s"] / r["iteration_time_s"]))
        out[key] = sorted(set(pts))
    return out


def series_grid(rows, keys, baseline):
    ref = {}
    for k in keys:
        values = sorted({pc.quantity(r["params"][k]) for r in rows if pc.quantity(r["params"].get(k, "")) is not None})
        ref[k] = pc.quantity(baseline[k]) if k in baseline else values[0]
    def at_ref(r, except_key):
        return all(abs(pc.quantity(r["params"][k]) - ref[k]) <= 1e-9 * ref[k] for k in keys if k != except_key)
    base = [r for r in rows if at_ref(r, None) and r["ok"]]
    if not base:
        pc.fail("no point has every key at its baseline; pass --baseline KEY=VALUE")
    t0 = base[0]["iteration_time_s"]
    return {k: sorted((pc.quantity(r["params"][k]) / ref[k], t0 / r["iteration_time_s"])
                      for r in rows if r["ok"] and at_ref(r, k)) for k in keys}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE.h5")
    ap.add_argument("-o", "--output", default="speedup.png")
    ap.add_argument("--by", help="parameter whose values get one panel each (default: a named axis)")
    ap.add_argument("--baseline", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE", help="keep only these points")
    ap.add_argument("--cols", type=int, default=4, help="panels per row")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    baseline = dict(b.split("=", 1) for b in args.baseline)

    panels = []  # (title, rows, one_at_a_time, resource keys)
    fabrics = set()  # the NIC's fabric kinds: one legend names the NIC bandwidth for all panels
    for path in args.files:
        all_rows, sweep, attrs = pc.load(path)
        rows = pc.filter_rows(all_rows, args.where)
        if not rows:
            pc.fail(f"{path}: no point to plot")
        fabrics.add(pc.fabric_kind(rows, attrs))
        name = rows[0]["name"].rsplit("/", 1)[0]
        varying = pc.varying_keys(rows)
        named = [k for k in sweep.get("named_axes", "").split("\n") if k in varying]
        by = args.by or (named[0] if named else None)
        one_at_a_time = any("sweep.varied" in r["params"] for r in rows)
        # The swept resources: axis keys (not derived ones) whose values are quantities.
        axis_keys = sweep.get("axis_keys", "").split("\n") if "axis_keys" in sweep else varying
        keys = [k for k in varying if k != by and k in axis_keys
                and all(pc.quantity(r["params"].get(k, "")) is not None for r in rows)]
        if not by:
            panels.append((name, rows, one_at_a_time, keys))
            continue
        first = {}
        for r in rows:
            first.setdefault(r["params"].get(by, ""), r["index"])
        for g in sorted(first, key=first.get):
            panels.append((f"{name}: {g}" if len(args.files) > 1 else g,
                           [r for r in rows if r["params"].get(by, "") == g], one_at_a_time, keys))

    fabric = fabrics.pop() if len(fabrics) == 1 else None
    cols = max(1, min(len(panels), args.cols))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.2 * nrows), squeeze=False, sharey=True)
    for ax, (title, rows, one_at_a_time, keys) in zip(axes.flat, panels):
        series = series_one_at_a_time(rows, baseline) if one_at_a_time else series_grid(rows, keys, baseline)
        for key, pts in series.items():
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", label=pc.friendly(key, fabric))
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("normalized resource")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("speedup")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), frameon=False)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
