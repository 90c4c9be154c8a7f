#!/usr/bin/python3
"""Ground truth for Orrery's validation loop: real PyTorch training iterations, timed.

For each model of scripts/ground_truth_models.py, runs warm-up iterations then many timed ones
(zero_grad(set_to_none=True), forward, loss, backward, SGD-with-momentum step), with fixed
thread counts (torch.set_num_threads; 1 by default), and writes the median iteration time and
its spread to a CSV whose '#' header lines describe the machine (CPU, cores, torch, BLAS,
threads, load average), so results can be compared later.

Modes:
  single    one process.
  gloo      WORLD processes (default 2) training with DistributedDataParallel over the gloo
            backend on loopback (127.0.0.1, GLOO_SOCKET_IFNAME=lo): each rank has the model's
            batch (weak scaling, as DDP), DDP's defaults (25 MiB buckets, first bucket 1 MiB,
            buffers broadcast each step), one torch thread per process. With --device cuda:
            NCCL, one GPU per rank.
  profiler  not a ground truth: the sum of the op times torch.profiler reports for one step
            (the "TF-Profiler" column of Table 2 of Tianshu: Towards Accurate Measuring,
            Modeling and Simulation of Deep Neural Networks, Huang, Xu, Guan, EMSS 2024),
            for the
            ablation of docs/validation.md.

Usage (wrap timing runs in the machine's measurement lock when the machine is shared):
  flock /tmp/orrery-measure.lock /usr/bin/python3 scripts/ground_truth.py \
      --models mlp,lstm --modes single,gloo -o results/validation/measured.csv
"""

import argparse
import datetime
import gc
import multiprocessing
import os
import platform
import socket
import statistics
import sys
import time

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("ground_truth.py: needs python3-torch (run with /usr/bin/python3)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ground_truth_models  # noqa: E402  (the validation models, shared with the exporter)

COLUMNS = ["model", "mode", "world", "batch", "threads", "warmup", "reps", "median_s", "p10_s",
           "p90_s", "iqr_s", "min_s", "mean_s", "stdev_s", "cpu_median_s", "forward_cpu_s",
           "backward_cpu_s", "optimizer_cpu_s", "rank_medians_s", "load1_start",
           "load1_end", "date_utc"]

LEARNING_RATE, MOMENTUM = 0.01, 0.9


# --- Machine description --------------------------------------------------------------------

def cpu_model():
    """The CPU's model name from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load1():
    """The 1-minute load average (other jobs on a shared machine disturb timings)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


def blas_info():
    """The BLAS/oneDNN torch was built with, from torch.__config__.show()."""
    cfg = torch.__config__.show()
    for part in cfg.replace(",", "\n").splitlines():
        if "BLAS_INFO" in part:
            return part.strip()
    return "unknown"


def machine_header(args):
    """'#' lines describing the machine and the run."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        "# Orrery validation ground truth: measured PyTorch training iterations "
        "(scripts/ground_truth.py)",
        "# cpu: %s; logical cpus: %d; kernel: %s" % (cpu_model(), os.cpu_count(),
                                                     platform.release()),
        "# torch: %s; python: %s; %s; mkldnn: %s" % (
            torch.__version__, platform.python_version(), blas_info(),
            torch.backends.mkldnn.is_available()),
        "# threads per process: %d (torch.set_num_threads); optimizer: SGD lr=%g momentum=%g; "
        "zero_grad(set_to_none=True)" % (args.threads, LEARNING_RATE, MOMENTUM),
        "# date: %s; command: /usr/bin/python3 %s" % (now, " ".join(sys.argv)),
        "# times in seconds per iteration (wall clock); p10/p90/iqr over the timed iterations; "
        "cpu_median_s: median CPU time of the calling thread (single mode); load1 = 1-minute "
        "load average before/after",
    ]


# --- Timing ---------------------------------------------------------------------------------

def make_step(model, inputs, loss_fn, phases=None):
    """One training iteration as a closure. With a dict `phases`, the calling thread's CPU
    time of each phase is appended to phases["forward"] (forward and loss), ["backward"] and
    ["optimizer"] (step and zero_grad): a diagnostic for docs/validation.md, not used by the
    prediction."""
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(*inputs))
        loss.backward()
        opt.step()

    def timed_step():
        c0 = time.thread_time()
        opt.zero_grad(set_to_none=True)
        c1 = time.thread_time()
        loss = loss_fn(model(*inputs))
        c2 = time.thread_time()
        loss.backward()
        c3 = time.thread_time()
        opt.step()
        c4 = time.thread_time()
        phases["forward"].append(c2 - c1)
        phases["backward"].append(c3 - c2)
        phases["optimizer"].append(c4 - c3 + c1 - c0)
    return step if phases is None else timed_step


def cuda_synced(step):
    """The step, waiting for the GPU at its end (CUDA runs asynchronously)."""
    def synced():
        step()
        torch.cuda.synchronize()
    return synced


def time_steps(step, warmup, reps, max_seconds, sync=None):
    """Runs `warmup` untimed steps, then timed ones until `reps` are done or `max_seconds`
    passed (at least 5). `sync()` (a barrier) runs before the timed loop when given. Returns
    the wall times and the calling thread's CPU times of the steps: with one torch thread a
    CPU step runs entirely in the calling thread, so its CPU time leaves out what other
    processes of a shared machine took from it."""
    for _ in range(warmup):
        step()
    gc.collect()
    if sync:
        sync()
    times, cpu, start = [], [], time.perf_counter()
    while len(times) < reps and (len(times) < 5 or time.perf_counter() - start < max_seconds):
        c0, t0 = time.thread_time(), time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return times, cpu


def quantile(sorted_xs, q):
    """Linear-interpolated quantile of sorted values."""
    pos = q * (len(sorted_xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def summary(times, cpu=None):
    """Median and spread of iteration times (and the median of their CPU times); the raw
    times are kept under "samples" (wall) and "cpu_samples"."""
    s = sorted(times)
    return {"median_s": statistics.median(s), "p10_s": quantile(s, 0.1),
            "p90_s": quantile(s, 0.9), "iqr_s": quantile(s, 0.75) - quantile(s, 0.25),
            "min_s": s[0], "mean_s": statistics.fmean(s),
            "stdev_s": statistics.pstdev(s) if len(s) > 1 else 0.0, "reps": len(s),
            "cpu_median_s": statistics.median(cpu) if cpu else float("nan"),
            "samples": list(times), "cpu_samples": list(cpu or [])}


def run_single(name, batch, args):
    """Times one process training `name`."""
    torch.set_num_threads(args.threads)
    model, inputs, loss_fn = ground_truth_models.build(name, batch)
    model, inputs, loss_fn = ground_truth_models.to_device(model, inputs, loss_fn, args.device)
    model.train()
    phases = {"forward": [], "backward": [], "optimizer": []}
    step = make_step(model, inputs, loss_fn, phases)
    if args.device.startswith("cuda"):
        step = cuda_synced(step)  # phase CPU times then only describe the host side
    out = summary(*time_steps(step, args.warmup, args.reps, args.max_seconds))
    for k, v in phases.items():
        out[k + "_cpu_s"] = statistics.median(v[args.warmup:])
    return out


def gloo_worker(rank, world, port, name, batch, args, queue):
    """One rank of DDP training over gloo on loopback; puts its iteration times on `queue`."""
    try:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        torch.set_num_threads(args.threads)
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        cuda = args.device.startswith("cuda")
        # gloo on CPUs; NCCL between GPUs, one GPU per rank.
        dist.init_process_group("nccl" if cuda else "gloo",
                                init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world)
        dev = "cuda:%d" % rank if cuda else "cpu"
        model, inputs, loss_fn = ground_truth_models.build(name, batch, seed=0)
        model, inputs, loss_fn = ground_truth_models.to_device(model, inputs, loss_fn, dev)
        model.train()
        # DDP's defaults: bucket_cap_mb=25 (first bucket 1 MiB), broadcast_buffers=True.
        ddp = DistributedDataParallel(model, device_ids=[rank] if cuda else None)
        step = make_step(ddp, inputs, loss_fn)
        times, _ = time_steps(cuda_synced(step) if cuda else step, args.warmup, args.reps,
                              args.max_seconds, sync=dist.barrier)
        dist.barrier()
        dist.destroy_process_group()
        queue.put((rank, times, None))
    except Exception as e:  # reported by the parent
        queue.put((rank, None, repr(e)))


def free_port():
    """A free TCP port on loopback for the rendezvous."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_gloo(name, batch, args):
    """Times `args.world` DDP processes over gloo; the iteration time is the per-iteration
    maximum over ranks (the collective makes every rank wait for the slowest)."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.SimpleQueue()
    port = free_port()
    procs = [ctx.Process(target=gloo_worker, args=(r, args.world, port, name, batch, args, queue))
             for r in range(args.world)]
    for p in procs:
        p.start()
    results = {}
    for _ in procs:
        rank, times, err = queue.get()
        if err:
            raise RuntimeError("gloo rank %d failed: %s" % (rank, err))
        results[rank] = times
    for p in procs:
        p.join()
    n = min(len(t) for t in results.values())
    per_iter = [max(results[r][i] for r in results) for i in range(n)]
    out = summary(per_iter)
    out["rank_medians_s"] = ";".join("%.6e" % statistics.median(results[r])
                                     for r in sorted(results))
    return out


def run_profiler_sum(name, batch, args):
    """Sum of the top-level ATen op times torch.profiler reports for one step (median over
    `args.reps` profiled steps). Top level: ATen events without an ATen ancestor, i.e. the ops
    Python, the autograd engine and the optimizer call, as a framework profiler lists them."""
    from torch.profiler import ProfilerActivity, profile
    torch.set_num_threads(args.threads)
    model, inputs, loss_fn = ground_truth_models.build(name, batch)
    model, inputs, loss_fn = ground_truth_models.to_device(model, inputs, loss_fn, args.device)
    model.train()
    step = make_step(model, inputs, loss_fn)
    for _ in range(args.warmup):
        step()
    sums = []
    for _ in range(max(3, min(args.reps, 10))):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step()
        total = 0.0
        for ev in prof.events():
            if not ev.name.startswith("aten::"):
                continue
            parent, nested = ev.cpu_parent, False
            while parent is not None:
                if parent.name.startswith("aten::"):
                    nested = True
                    break
                parent = parent.cpu_parent
            if not nested:
                total += ev.cpu_time_total * 1e-6  # microseconds
        sums.append(total)
    return summary(sums)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(ground_truth_models.MODELS),
                    help="comma-separated models of ground_truth_models.py (default: all)")
    ap.add_argument("--modes", default="single,gloo", help="single, gloo, profiler")
    ap.add_argument("--batch", type=int, help="override every model's default batch")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (gloo mode then runs DDP "
                    "over NCCL, one GPU per rank)")
    ap.add_argument("--world", type=int, default=2, help="processes in gloo mode")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=60, help="timed iterations (at most)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="stop timing a model after this long (at least 5 iterations)")
    ap.add_argument("-o", "--output", required=True, help="CSV to write")
    ap.add_argument("--samples", help="also write every timed iteration here (CSV: model, mode, "
                    "iteration, wall_s, cpu_s)")
    args = ap.parse_args(argv)
    runners = {"single": run_single, "gloo": run_gloo, "profiler": run_profiler_sum}
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in runners:
            ap.error("unknown mode %r" % m)
    names = [n for n in args.models.split(",") if n]
    for n in names:
        if n not in ground_truth_models.MODELS:
            ap.error("unknown model %r (known: %s)" % (n, ", ".join(ground_truth_models.MODELS)))

    rows = []
    for name in names:
        batch = args.batch or ground_truth_models.MODELS[name][1]
        for mode in modes:
            start_load = load1()
            res = runners[mode](name, batch, args)
            row = {"model": name, "mode": mode, "world": args.world if mode == "gloo" else 1,
                   "batch": batch, "threads": args.threads, "warmup": args.warmup,
                   "rank_medians_s": "", "forward_cpu_s": float("nan"),
                   "backward_cpu_s": float("nan"), "optimizer_cpu_s": float("nan"),
                   "load1_start": start_load, "load1_end": load1(),
                   "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                       "%Y-%m-%dT%H:%M:%SZ")}
            row.update(res)
            rows.append(row)
            print("%-12s %-8s median %9.3f ms  p10 %9.3f  p90 %9.3f  (%d reps, load %.2f)"
                  % (name, mode, row["median_s"] * 1e3, row["p10_s"] * 1e3, row["p90_s"] * 1e3,
                     row["reps"], row["load1_end"]), flush=True)

    os.makedirs(os.path.dirname(os.path.abspath(args.output)) or ".", exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(machine_header(args)) + "\n")
        f.write(",".join(COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(("%.6e" % r[c]) if isinstance(r[c], float) and c.endswith("_s")
                             else str(r[c]) for c in COLUMNS) + "\n")
    os.replace(tmp, args.output)
    if args.samples:
        with open(args.samples, "w") as f:
            f.write("model,mode,iteration,wall_s,cpu_s\n")
            for r in rows:
                cpu = r["cpu_samples"] or [float("nan")] * len(r["samples"])
                for i, (w, c) in enumerate(zip(r["samples"], cpu)):
                    f.write("%s,%s,%d,%.6e,%.6e\n" % (r["model"], r["mode"], i, w, c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
