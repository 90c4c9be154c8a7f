#!/usr/bin/python3
"""Speedup of jobs moved from one architecture to others, as a CDF (Fig. 9 of
Characterizing Deep Learning Training Workloads on Alibaba-PAI (Wang et al., IISWC 2019)).

  /usr/bin/python3 scripts/plot_speedup_cdf.py out/studies/pai-ps-to-allreduce.h5 -o fig9.png

A job is a point's parameters other than the architecture axis (--axis, default `arch`); its
speedup under architecture X is its iteration time under the baseline (--baseline, default
`ps-worker`) over its iteration time under X. One curve per other architecture: the share of
jobs whose speedup is at most x. With --gpus ARCH=N for every architecture, dashed curves add
the speedup of the job's throughput (samples/s: iteration speedup x N_arch / N_baseline), the
paper's projection that also counts the cNodes an architecture saves. Points that failed are
left out, with a note. --table prints the speedups too.

  ... -o fig9.png --gpus ps-worker=16,allreduce-local=8,allreduce-cluster=16
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import plot_common as pc  # noqa: E402


def speedups(rows, axis, baseline):
    """{architecture: [(job, speedup)]} for every job that has the baseline and the architecture."""
    jobs = {}
    for r in rows:
        arch = r["params"].get(axis)
        if arch is None:
            pc.fail(f"the points have no parameter '{axis}' (use --axis)")
        job = tuple(sorted((k, v) for k, v in r["params"].items()
                           if k != axis and not k.startswith(pc.NOT_CHOSEN)))
        jobs.setdefault(job, {})[arch] = r["iteration_time_s"]
    out = {}
    for job, times in sorted(jobs.items()):
        if baseline not in times:
            continue
        for arch, t in sorted(times.items()):
            if arch != baseline and t > 0:
                out.setdefault(arch, []).append((", ".join(f"{k}={v}" for k, v in job), times[baseline] / t))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="speedup_cdf.png")
    ap.add_argument("--axis", default="arch", help="the parameter naming the architecture (default arch)")
    ap.add_argument("--baseline", default="ps-worker", help="the architecture jobs move from")
    ap.add_argument("--table", action="store_true", help="also print each job's speedups")
    ap.add_argument("--gpus", action="append", default=[], metavar="ARCH=N[,ARCH=N...]",
                    help="GPUs a job uses under ARCH, for throughput curves (give every "
                         "architecture: repeat the option or list them, comma-separated)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    all_rows = pc.load(args.file)[0]
    rows = [r for r in all_rows if r["ok"]]
    if len(rows) < len(all_rows):
        print(f"note: {len(all_rows) - len(rows)} failed point(s) left out")
    curves = speedups(rows, args.axis, args.baseline)
    if not curves:
        pc.fail(f"no job has both '{args.axis}={args.baseline}' and another architecture")
    gpus = {}
    for g in [item.strip() for given in args.gpus for item in given.split(",") if item.strip()]:
        arch, _, n = g.partition("=")
        if not n.isdigit() or int(n) < 1:
            pc.fail(f"--gpus {g}: expected ARCH=N with N a positive integer")
        gpus[arch] = int(n)
    if gpus:
        missing = [a for a in [args.baseline, *curves] if a not in gpus]
        if missing:
            pc.fail("--gpus: no GPU count for " + ", ".join(missing))
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for n, (arch, pairs) in enumerate(curves.items()):
        color = f"C{n}"
        series = [("iteration time", [s for _, s in pairs], "-")]
        if gpus:
            scale = gpus[arch] / gpus[args.baseline]
            series.append(("throughput", [s * scale for _, s in pairs], "--"))
        for what, values, style in series:
            xs = sorted(values)
            ys = [(i + 1) / len(xs) for i in range(len(xs))]
            ax.step(xs, ys, where="post", linestyle=style, linewidth=2, color=color,
                    label=f"{arch}, {what} ({len(xs)} jobs)")
            faster = sum(1 for x in xs if x > 1) / len(xs)
            print(f"{args.baseline} -> {arch} ({what}): {len(xs)} jobs, {100 * faster:.0f}% faster, "
                  f"median speedup {xs[len(xs) // 2]:.2f}x, range {xs[0]:.2f}x to {xs[-1]:.2f}x")
        if args.table:
            for job, s in sorted(pairs, key=lambda p: p[1]):
                print(f"  {s:8.2f}x  {job}")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel(f"speedup over {args.baseline}")
    ax.set_ylabel("CDF of jobs")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(args.title or f"Jobs mapped from {args.baseline} (Fig. 9 style)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
