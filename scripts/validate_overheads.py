#!/usr/bin/python3
"""Framework (host) overheads of PyTorch training on a CPU, measured with a synthetic chain.

On a CPU the thread that runs the framework also runs the ops, so whatever the framework does
between two ops (Python, module calls, autograd recording, the autograd engine, the optimizer's
Python loop, code and branch predictors gone cold since the op last ran) adds to the step time.
N/M op times (scripts/profile_ops.py) leave exactly that out. This script measures it the way
Building a Performance Model for Deep Learning Recommendation Model Training on GPUs
(Lin et al., HiPC 2022) measures its host overheads T1-T5: on a microbenchmark, not on the
models it predicts.

The microbenchmark is a chain of K tiny residual blocks (Linear 16x16, ReLU, sigmoid gate,
product, residual add; batch 4), trained with the validation loop's step (zero_grad,
forward, loss, backward, SGD with momentum). For K = N and K = M blocks (the N/M idea of
Tianshu: Towards Accurate Measuring, Modeling and Simulation of Deep Neural Networks
(Huang, Xu, Guan, EMSS 2024), eq. 1, applied to blocks), each phase is timed in the training step
(thread CPU time, median of many steps) and priced as the sum of the N/M times of its own ops
(the exporter and profile_ops.py --calls on the same chain, inputs cache-hot: the tensors are
tiny). Then per phase

    overhead per op = (step slope - ops slope) / ops per block        (slopes: per block)
    fixed overhead  = step intercept - ops intercept                  (at K = 0)

and the fixed overheads of the three phases are summed into one per-step overhead. The
optimizer's per-op overhead is per parameter tensor (one update op each, as in the graphs).
Output: a small CSV (and --set arguments for a scenario's device.host_overheads).

Run with Debian's interpreter (/usr/bin/python3), in the measurement lock on a shared machine:
    flock /tmp/orrery-measure.lock /usr/bin/python3 scripts/validate_overheads.py -o ovh.csv
"""

import argparse
import csv
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ground_truth  # noqa: E402  (the validation loop's training step and machine header)

WIDTH, BATCH = 16, 4
N_BLOCKS, M_BLOCKS = 4, 28


class Block(nn.Module):
    """x + relu(fc(x)) * sigmoid(relu(fc(x))): five forward ops of five kinds."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return x + h * torch.sigmoid(h)


def chain(blocks, batch=BATCH):
    """(model, inputs, loss_fn) of a chain of `blocks` blocks (exporter contract)."""
    torch.manual_seed(0)
    net = nn.Sequential(*[Block() for _ in range(blocks)])
    x = torch.randn(batch, WIDTH)
    return net, (x,), lambda out: out.square().mean()


def chain_n(batch=BATCH):
    """The short chain, for scripts/export_pytorch_graph.py."""
    return chain(N_BLOCKS, batch)


def chain_m(batch=BATCH):
    """The long chain, for scripts/export_pytorch_graph.py."""
    return chain(M_BLOCKS, batch)


def time_phases(blocks, warmup, reps, pollute_bytes):
    """Median thread CPU time of each phase of the training step of a `blocks` chain (the
    step of scripts/ground_truth.py). With `pollute_bytes`, a buffer that large is rewritten
    (untimed) before each phase, so each phase starts with the core's caches holding other
    data and code, as after the large ops of a real model; 0 times the chain alone (hot)."""
    torch.set_num_threads(1)
    model, inputs, loss_fn = chain(blocks)
    opt = torch.optim.SGD(model.parameters(), lr=ground_truth.LEARNING_RATE,
                          momentum=ground_truth.MOMENTUM)
    junk = torch.zeros(max(int(pollute_bytes) // 4, 1))
    clk = time.thread_time
    phases = {"forward": [], "backward": [], "optimizer": []}

    def pollute():
        if pollute_bytes > 0:
            junk.add_(1.0)
    for _ in range(warmup + reps):
        pollute()
        c0 = clk()
        opt.zero_grad(set_to_none=True)
        c1 = clk()
        pollute()
        c2 = clk()
        loss = loss_fn(model(*inputs))
        c3 = clk()
        pollute()
        c4 = clk()
        loss.backward()
        c5 = clk()
        pollute()
        c6 = clk()
        opt.step()
        c7 = clk()
        phases["forward"].append(c3 - c2)
        phases["backward"].append(c5 - c4)
        phases["optimizer"].append(c7 - c6 + c1 - c0)
    return {k: statistics.median(v[warmup:]) for k, v in phases.items()}


def priced_phases(workdir, fn, threads, repeats):
    """Sum of the N/M times of the chain's ops per phase (exported graph, profiled calls)."""
    graph = os.path.join(workdir, fn + ".model.json")
    calls = os.path.join(workdir, fn + ".calls.pt")
    rows = os.path.join(workdir, fn + ".csv")
    py = sys.executable
    subprocess.run([py, os.path.join(HERE, "export_pytorch_graph.py"),
                    os.path.abspath(__file__) + ":" + fn, "--batch", str(BATCH), "--optimizer",
                    "momentum", "-o", graph, "--calls", calls], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([py, os.path.join(HERE, "profile_ops.py"), "--calls", calls, "--clock",
                    "thread", "--threads", str(threads), "--repeats", str(repeats),
                    "--calls-rotate", "0", "--device-name", "chain", "-o", rows], check=True,
                   stdout=subprocess.DEVNULL)
    times = {}
    with open(rows) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            times[(r["op"], r["inputs"], r["output"], r["attrs"])] = float(r["time_s"])
    sys.path.insert(0, HERE)
    import profile_ops  # attrs canonical form, shape text
    out = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    count = {"forward": 0, "backward": 0, "optimizer": 0}
    with open(graph) as f:
        for op in json.load(f)["ops"]:
            key = (op["type"], ";".join(profile_ops.shape_text(s) for s in op.get("inputs", [])),
                   profile_ops.shape_text(op.get("output", [])),
                   profile_ops.attrs_text(op.get("attrs", {})))
            phase = op.get("phase", "forward")
            out[phase] += times[key]
            count[phase] += 1
    return out, count


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400, help="timed steps per chain")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved N, M timing rounds (medians of the rounds are used)")
    ap.add_argument("--repeats", type=int, default=9, help="profile_ops.py --repeats")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pollute", type=float, default=32e6, metavar="BYTES",
                    help="rewrite this many bytes before each phase (cold caches at phase "
                    "entry, as after a real model's large ops); 0: hot chain")
    ap.add_argument("-o", "--output", required=True, help="CSV to write")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory(prefix="orrery-ovh-") as work:
        bare = {}
        count = {}
        for k, fn in ((N_BLOCKS, "chain_n"), (M_BLOCKS, "chain_m")):
            bare[k], count[k] = priced_phases(work, fn, args.threads, args.repeats)
    step = {N_BLOCKS: [], M_BLOCKS: []}
    for _ in range(args.rounds):
        for k in (N_BLOCKS, M_BLOCKS):
            step[k].append(time_phases(k, args.warmup, args.reps, args.pollute))
    ctx = {k: {p: statistics.median(r[p] for r in v) for p in v[0]} for k, v in step.items()}

    blocks = M_BLOCKS - N_BLOCKS
    result = OrderedDict()
    fixed = 0.0
    for p in ("forward", "backward", "optimizer"):
        ops_per_block = (count[M_BLOCKS][p] - count[N_BLOCKS][p]) / blocks
        step_slope = (ctx[M_BLOCKS][p] - ctx[N_BLOCKS][p]) / blocks
        ops_slope = (bare[M_BLOCKS][p] - bare[N_BLOCKS][p]) / blocks
        per_op = (step_slope - ops_slope) / ops_per_block
        step_icpt = ctx[N_BLOCKS][p] - N_BLOCKS * step_slope
        ops_icpt = bare[N_BLOCKS][p] - N_BLOCKS * ops_slope
        result[p] = per_op
        result[p + "_fixed"] = step_icpt - ops_icpt
        result[p + "_ops_per_block"] = ops_per_block
        result[p + "_step_per_block"] = step_slope
        result[p + "_nm_per_block"] = ops_slope
        fixed += step_icpt - ops_icpt
    result["step"] = fixed

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)) or ".", exist_ok=True)
    with open(args.output, "w") as f:
        f.write("# Orrery host overheads of PyTorch CPU training (scripts/validate_overheads.py)"
                "\n# cpu: %s; torch %s; threads %d; date %s\n" % (
                    ground_truth.cpu_model(), torch.__version__, args.threads, now))
        f.write("# chain of %d and %d blocks (Linear %dx%d, ReLU, sigmoid gate, residual), "
                "batch %d; %d steps x %d rounds; %.0f bytes rewritten before each phase; "
                "seconds\n" % (N_BLOCKS, M_BLOCKS, WIDTH, WIDTH, BATCH, args.reps, args.rounds,
                                args.pollute))
        f.write("quantity,value\n")
        for k, v in result.items():
            f.write("%s,%.6e\n" % (k, v))
    for k in ("forward", "backward", "optimizer", "step"):
        print("%-10s %9.2f us%s" % (k, result[k] * 1e6, " per op" if k != "step" else
                                    " per step"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
