#!/usr/bin/python3
"""What DistributedDataParallel over gloo costs a CPU training step beyond its copies and its
all-reduce, measured on a synthetic chain (not on the models the loop predicts).

Orrery's data-parallel prediction (docs/validation.md) carries DDP's bucket copies as ops
(scripts/validate_ddp.py) and gloo's ring all-reduce as flows over the loopback link measured
by scripts/validate_comm.py. What a step under DDP costs besides, measured here, is the
reducer's bookkeeping (an autograd hook per parameter, bucket state, the futures of the
all-reduce) and above all the synchronisation: the training thread blocks until gloo's threads
finish the collective, gives up its core, and must be scheduled again; with two ranks on two
cores beside gloo's threads that costs time in every step, whether or not the collective had
work to do.

The chain of scripts/validate_overheads.py (K tiny residual blocks, two parameter tensors
each) is trained K = N and K = M blocks, by one process alone and by two DDP ranks over gloo
on loopback (DDP's defaults, as scripts/ground_truth.py runs the models), in interleaved
rounds, wall-clock medians. For each K

    gap(K) = DDP step - lone step - the all-reduce as Orrery models it

(the chain's gradients fit one bucket; Orrery's two-rank ring takes two steps of the path
latency plus the bucket over the loopback bandwidth, both directions sharing it), and with
P(K) = 2K parameter tensors

    per parameter = (gap(M) - gap(N)) / (P(M) - P(N))
    per step      = gap(N) - P(N) x per parameter

The chain blocks its training thread on one collective per step (the all-reduce at the end
of backward; it has no buffers to broadcast), so "per step" is the cost of one blocking
collective. Output: a small CSV; scripts/validate adds the two to the data-parallel scenarios'
host overheads (per step once per blocking collective of the model's DDP step, ddp_waits; per
parameter as the optimizer's per-op overhead, one update op per parameter tensor in the
graphs). Run with Debian's interpreter, in the measurement lock:

    flock /tmp/orrery-measure.lock /usr/bin/python3 scripts/validate_ddp_overheads.py \
        --comm results/validation/comm.csv -o ddp_overheads.csv
"""

import argparse
import csv
import datetime
import os
import statistics
import sys
from types import SimpleNamespace

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ground_truth  # noqa: E402  (the loop's training step, DDP runner, machine header)
import ground_truth_models  # noqa: E402
import validate_comm  # noqa: E402  (the loopback link fit)
import validate_overheads  # noqa: E402  (the chain)

N_BLOCKS, M_BLOCKS = validate_overheads.N_BLOCKS, validate_overheads.M_BLOCKS


# The chains as models of the loop's registry, so ground_truth's single and DDP runners train
# them exactly as they train the real models. Registered at import: spawned DDP ranks import
# this file again and find them too.
def _register(blocks):
    name = "ddp_chain%d" % blocks
    if name not in ground_truth_models.MODELS:
        @ground_truth_models.model(name, validate_overheads.BATCH,
                                   "validate_ddp_overheads chain of %d blocks" % blocks)
        def build(batch, blocks=blocks):
            return validate_overheads.chain(blocks, batch)
    return name


CHAINS = {k: _register(k) for k in (N_BLOCKS, M_BLOCKS)}


def parameters(blocks):
    """(parameter tensors, fp32 bytes of their gradients: one DDP bucket) of the chain."""
    model, _, _ = validate_overheads.chain(blocks)
    params = list(model.parameters())
    return len(params), sum(p.numel() * 4 for p in params)


def modelled_allreduce(nbytes, latency, bandwidth):
    """Orrery's two-rank ring for one bucket: reduce-scatter then all-gather, one step each;
    a step moves half the bucket each way at once over a link whose directions share the
    bandwidth (cpu-host's duplex_overhead), so each takes latency + bucket / bandwidth."""
    return 2 * (latency + nbytes / bandwidth)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--comm", required=True, help="comm.csv of scripts/validate_comm.py")
    ap.add_argument("--reps", type=int, default=300, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians used)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("-o", "--output", required=True, help="CSV to write")
    args = ap.parse_args(argv)
    run_args = SimpleNamespace(threads=args.threads, device="cpu", warmup=args.warmup,
                               reps=args.reps, max_seconds=args.max_seconds, world=2)
    torch.set_num_threads(args.threads)
    latency, bandwidth = validate_comm.fit(comm_points(args.comm))

    alone = {k: [] for k in CHAINS}
    ddp = {k: [] for k in CHAINS}
    for _ in range(args.rounds):
        for k, name in CHAINS.items():
            alone[k].append(ground_truth.run_single(name, None, run_args)["median_s"])
            ddp[k].append(ground_truth.run_gloo(name, None, run_args)["median_s"])
    gap = {}
    for k in CHAINS:
        gap[k] = (statistics.median(ddp[k]) - statistics.median(alone[k]) -
                  modelled_allreduce(parameters(k)[1], latency, bandwidth))
    pn, pm = parameters(N_BLOCKS)[0], parameters(M_BLOCKS)[0]
    per_param = (gap[M_BLOCKS] - gap[N_BLOCKS]) / (pm - pn)
    per_step = gap[N_BLOCKS] - pn * per_param

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)) or ".", exist_ok=True)
    with open(args.output, "w") as f:
        f.write("# Orrery DDP-over-gloo overheads beyond copies and all-reduce "
                "(scripts/validate_ddp_overheads.py)\n# cpu: %s; torch %s; threads %d; date %s; "
                "loopback %.3g GB/s, %.1f us\n" % (
                    ground_truth.cpu_model(), torch.__version__, args.threads, now,
                    bandwidth / 1e9, latency * 1e6))
        f.write("# chains of %d and %d blocks (%d and %d parameter tensors), batch %d; %d steps "
                "x %d rounds, wall-clock medians; seconds\n" % (
                    N_BLOCKS, M_BLOCKS, pn, pm, validate_overheads.BATCH, args.reps,
                    args.rounds))
        f.write("quantity,value\n")
        for k in CHAINS:
            f.write("alone_%d,%.6e\n" % (k, statistics.median(alone[k])))
            f.write("ddp_%d,%.6e\n" % (k, statistics.median(ddp[k])))
            f.write("gap_%d,%.6e\n" % (k, gap[k]))
        f.write("per_param,%.6e\n" % per_param)
        f.write("per_step,%.6e\n" % per_step)
    for k in CHAINS:
        print("chain %2d: alone %7.3f ms  DDP %7.3f ms  gap beyond the all-reduce %7.3f ms" % (
            k, statistics.median(alone[k]) * 1e3, statistics.median(ddp[k]) * 1e3,
            gap[k] * 1e3))
    print("DDP per step %.1f us, per parameter tensor %.2f us" % (per_step * 1e6,
                                                                 per_param * 1e6))
    return 0


def comm_points(path):
    """[(bytes, send/recv seconds)] of a comm.csv, sorted by size."""
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return sorted((int(r["bytes"]), float(r["p2p_s"])) for r in csv.DictReader(lines))


if __name__ == "__main__":
    sys.exit(main())
