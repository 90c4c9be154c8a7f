#!/usr/bin/python3
"""Measures op times for Orrery's profile database with the N/M method.

Tianshu: Towards Accurate Measuring, Modeling and Simulation of Deep Neural Networks
(Huang, Xu, Guan, EMSS 2024), section 3.1, eq. 1, times a graph of N chained copies of an op
and a graph of M copies; the fixed cost of launching a graph (session start,
Python call, device synchronisation) cancels in the difference, so

    T_op = (T_M - T_N) / (M - N).

This script does that for each op type Orrery knows (workloads/op_counts.h) over a grid of shapes,
on the CPU or on a CUDA GPU (the same code; pass --device cuda where one exists), and writes one
CSV row per (op, shape) in the contribution format of docs/cost-models.md. `orrery profile
import rows.csv -o db.h5` compiles such files into the HDF5 store the cost model reads.

Shapes in a row follow workloads/op_counts.h's conventions, so a row matches the ModelOp a model
generator would emit for the same op.

Run it with Debian's interpreter (/usr/bin/python3) and python3-torch:
    /usr/bin/python3 scripts/profile_ops.py --grid small --threads 1 -o out.csv
"""

import argparse
import datetime
import math
import os
import platform
import queue
import random
import statistics
import sys
import threading
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - reported to the user, not a test failure
    sys.exit("profile_ops.py: python3-torch is not installed (apt-get install python3-torch)")

import aten_calls_file  # noqa: E402  (needs torch; beside this script)

COLUMNS = ["op", "dtype", "device", "inputs", "output", "attrs", "time_s", "n", "m", "t_n_s",
           "t_m_s", "samples", "stdev_s", "source"]

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

# Attributes equal to these defaults are left out of a row's key, as Orrery does when matching
# (models/profile_db.h), so "groups=1" and no groups attribute mean the same op.
DEFAULT_ATTRS = {"groups": 1, "stride_h": 1, "stride_w": 1, "dilation_h": 1, "dilation_w": 1,
                 "pad_h": 0, "pad_w": 0}


def shape_text(shape):
    return "x".join(str(int(d)) for d in shape) if len(shape) else ""


def attrs_text(attrs):
    keep = {k: v for k, v in attrs.items() if DEFAULT_ATTRS.get(k) != v}
    return ";".join(f"{k}={int(v)}" for k, v in sorted(keep.items()))


class Case:
    """One op at one shape: `run()` executes a single copy of the op."""

    def __init__(self, op, inputs, output, attrs, run, dtype="fp32"):
        self.op, self.inputs, self.output, self.attrs, self.run = op, inputs, output, attrs, run
        self.dtype = dtype


def rand(shape, dev, dtype=torch.float32):
    return torch.randn(*shape, device=dev, dtype=dtype)


# --- op builders: each returns a Case whose inputs/output follow workloads/op_counts.h -----------

def matmul(dev, dt, m, k, n):
    a, b = rand((m, k), dev, dt), rand((k, n), dev, dt)
    return Case("matmul", [(m, k), (k, n)], (m, n), {}, lambda: torch.mm(a, b))


def bmm(dev, dt, bs, m, k, n):
    a, b = rand((bs, m, k), dev, dt), rand((bs, k, n), dev, dt)
    return Case("bmm", [(bs, m, k), (bs, k, n)], (bs, m, n), {}, lambda: torch.bmm(a, b))


def conv_shapes(n, c, hw, k, r, stride, pad):
    p = (hw + 2 * pad - r) // stride + 1
    attrs = {"stride_h": stride, "stride_w": stride, "pad_h": pad, "pad_w": pad}
    return (n, c, hw, hw), (k, c, r, r), (n, k, p, p), attrs


def conv2d(dev, dt, n, c, hw, k, r, stride=1, pad=1):
    xs, ws, ys, attrs = conv_shapes(n, c, hw, k, r, stride, pad)
    x, w = rand(xs, dev, dt), rand(ws, dev, dt)
    return Case("conv2d", [xs, ws], ys, attrs,
                lambda: F.conv2d(x, w, stride=stride, padding=pad))


def conv2d_bwd_data(dev, dt, n, c, hw, k, r, stride=1, pad=1):
    xs, ws, ys, attrs = conv_shapes(n, c, hw, k, r, stride, pad)
    x, w, dy = rand(xs, dev, dt), rand(ws, dev, dt), rand(ys, dev, dt)
    mask = [True, False, False]
    return Case("conv2d_bwd_data", [ys, ws], xs, attrs, lambda: torch.ops.aten.convolution_backward(
        dy, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask))


def conv2d_bwd_filter(dev, dt, n, c, hw, k, r, stride=1, pad=1):
    xs, ws, ys, attrs = conv_shapes(n, c, hw, k, r, stride, pad)
    x, w, dy = rand(xs, dev, dt), rand(ws, dev, dt), rand(ys, dev, dt)
    mask = [False, True, False]
    return Case("conv2d_bwd_filter", [xs, ys], ws, attrs,
                lambda: torch.ops.aten.convolution_backward(
                    dy, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask))


def unary(name, fn):
    def build(dev, dt, rows, cols):
        x = rand((rows, cols), dev, dt)
        return Case(name, [(rows, cols)], (rows, cols), {}, lambda: fn(x))
    return build


def binary(name, fn):
    def build(dev, dt, rows, cols):
        x, y = rand((rows, cols), dev, dt), rand((rows, cols), dev, dt)
        return Case(name, [(rows, cols), (rows, cols)], (rows, cols), {}, lambda: fn(x, y))
    return build


def relu_bwd(dev, dt, rows, cols):
    dy, y = rand((rows, cols), dev, dt), torch.relu(rand((rows, cols), dev, dt))
    return Case("relu_bwd", [(rows, cols), (rows, cols)], (rows, cols), {},
                lambda: torch.ops.aten.threshold_backward(dy, y, 0))


def layernorm(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    w, b = torch.ones(cols, device=dev, dtype=dt), torch.zeros(cols, device=dev, dtype=dt)
    return Case("layernorm", [(rows, cols)], (rows, cols), {},
                lambda: F.layer_norm(x, (cols,), w, b))


def batchnorm(dev, dt, n, c, hw):
    x = rand((n, c, hw, hw), dev, dt)
    rm, rv = torch.zeros(c, device=dev, dtype=dt), torch.ones(c, device=dev, dtype=dt)
    return Case("batchnorm", [(n, c, hw, hw)], (n, c, hw, hw), {},
                lambda: F.batch_norm(x, rm, rv, training=True))


def pool(name, fn):
    def build(dev, dt, n, c, hw):
        x = rand((n, c, hw, hw), dev, dt)
        attrs = {"kernel_h": 2, "kernel_w": 2, "stride_h": 2, "stride_w": 2}
        return Case(name, [(n, c, hw, hw)], (n, c, hw // 2, hw // 2), attrs, lambda: fn(x, 2, 2))
    return build


def softmax(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    return Case("softmax", [(rows, cols)], (rows, cols), {}, lambda: torch.softmax(x, -1))


def reduce_sum(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    return Case("reduce", [(rows, cols)], (rows,), {}, lambda: x.sum(-1))


def cross_entropy(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    t = torch.randint(0, cols, (rows,), device=dev)
    return Case("cross_entropy", [(rows, cols)], (1,), {}, lambda: F.cross_entropy(x, t))


def embedding_fwd(dev, dt, rows, dim, batch, bag):
    table = rand((rows, dim), dev, dt)
    idx = torch.randint(0, rows, (batch, bag), device=dev)
    return Case("embedding_fwd", [(rows, dim), (batch, bag)], (batch, dim), {},
                lambda: F.embedding_bag(idx, table, mode="sum"))


def embedding_bwd(dev, dt, rows, dim, batch, bag):
    # Scatter-add of the pooled gradient into the looked-up rows of the table (the sparse
    # update of DLRM's fused backward, DLRM performance model section III-B1).
    table = rand((rows, dim), dev, dt)
    idx = torch.randint(0, rows, (batch * bag,), device=dev)
    dy = rand((batch, dim), dev, dt)
    return Case("embedding_bwd", [(batch, dim), (batch, bag)], (rows, dim), {},
                lambda: table.index_add_(0, idx, dy.repeat_interleave(bag, 0)))


def concat(dev, dt, rows, cols):
    a, b = rand((rows, cols), dev, dt), rand((rows, cols), dev, dt)
    return Case("concat", [(rows, cols), (rows, cols)], (rows, 2 * cols), {},
                lambda: torch.cat([a, b], 1))


def transpose(dev, dt, bs, m, n):
    x = rand((bs, m, n), dev, dt)
    return Case("transpose", [(bs, m, n)], (bs, n, m), {},
                lambda: x.transpose(1, 2).contiguous())


def memcpy(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    return Case("memcpy", [(rows, cols)], (rows, cols), {}, lambda: x.clone())


def cast_fp16(dev, dt, rows, cols):
    x = rand((rows, cols), dev, torch.float32)
    return Case("cast", [(rows, cols)], (rows, cols), {"src_bytes": 4},
                lambda: x.to(torch.float16), dtype="fp16")


def sgd_update(dev, dt, n):
    p, g = rand((n,), dev, torch.float32), rand((n,), dev, torch.float32)
    return Case("sgd_update", [(n,)], (n,), {}, lambda: p.add_(g, alpha=-1e-3))


def dropout(dev, dt, rows, cols):
    x = rand((rows, cols), dev, dt)
    return Case("dropout", [(rows, cols)], (rows, cols), {},
                lambda: F.dropout(x, 0.1, training=True))


ROWS = [64, 128, 256, 512]  # rows of a [rows, 1024] tensor for the element-wise family

# Each grid maps an op builder to the argument tuples it is timed at. Along each family one
# dimension varies (powers of two), so Orrery can interpolate between rows in log space.
GRIDS = {
    "tiny": [
        (matmul, [(32, 64, 64), (64, 64, 64)]),
        (unary("relu", torch.relu), [(16, 256), (32, 256)]),
        (binary("add", torch.add), [(16, 256)]),
    ],
    "small": [
        (matmul, [(m, 256, 256) for m in (32, 64, 128, 256, 512)]),
        (bmm, [(8, m, 64, 64) for m in (32, 64, 128, 256)]),
        (conv2d, [(n, 32, 32, 32, 3) for n in (1, 2, 4, 8)]),
        (conv2d_bwd_data, [(n, 32, 32, 32, 3) for n in (1, 2, 4)]),
        (conv2d_bwd_filter, [(n, 32, 32, 32, 3) for n in (1, 2, 4)]),
        (binary("add", torch.add), [(r, 1024) for r in ROWS]),
        (binary("mul", torch.mul), [(r, 1024) for r in ROWS]),
        (unary("relu", torch.relu), [(r, 1024) for r in ROWS]),
        (relu_bwd, [(r, 1024) for r in ROWS]),
        (unary("sigmoid", torch.sigmoid), [(r, 1024) for r in ROWS]),
        (unary("tanh", torch.tanh), [(r, 1024) for r in ROWS]),
        (unary("gelu", F.gelu), [(r, 1024) for r in ROWS]),
        (dropout, [(r, 1024) for r in ROWS]),
        (softmax, [(r, 1024) for r in ROWS]),
        (layernorm, [(r, 1024) for r in ROWS]),
        (reduce_sum, [(r, 1024) for r in ROWS]),
        (cross_entropy, [(r, 1024) for r in (64, 256)]),
        (batchnorm, [(n, 32, 32) for n in (2, 4, 8)]),
        (pool("maxpool", F.max_pool2d), [(n, 32, 32) for n in (2, 4, 8)]),
        (pool("avgpool", F.avg_pool2d), [(n, 32, 32) for n in (2, 4, 8)]),
        (embedding_fwd, [(100000, 64, b, 16) for b in (64, 256, 1024)]),
        (embedding_bwd, [(100000, 64, b, 16) for b in (64, 256, 1024)]),
        (concat, [(r, 512) for r in ROWS]),
        (transpose, [(8, m, 256) for m in (64, 128, 256)]),
        (memcpy, [(r, 1024) for r in ROWS]),
        (cast_fp16, [(r, 1024) for r in ROWS]),
        (sgd_update, [(n,) for n in (65536, 262144, 1048576)]),
    ],
}

ROWS_FULL = [16, 32, 64, 128, 256, 512, 1024, 2048]


def _full_grid():
    """The grid of the shipped CPU database: the small grid's families with more points along
    each varying dimension, plus a second varying dimension for GEMMs and convolutions."""
    conv_pts = ([(n, 32, 32, 32, 3) for n in (1, 2, 4, 8, 16)]
                + [(4, c, 32, c, 3) for c in (16, 64)]
                + [(4, 32, hw, 32, 3) for hw in (16, 64)])
    grid = [
        (matmul, [(m, 256, 256) for m in (16, 32, 64, 128, 256, 512, 1024)]
         + [(128, k, 256) for k in (64, 128, 512, 1024)]
         + [(128, 256, n) for n in (64, 128, 512, 1024)]),
        (bmm, [(8, m, 64, 64) for m in (16, 32, 64, 128, 256, 512)]
         + [(b, 128, 64, 64) for b in (2, 4, 16, 32)]),
        (conv2d, conv_pts + [(4, 64, 32, 64, 1, 1, 0)]),
        (conv2d_bwd_data, conv_pts),
        (conv2d_bwd_filter, conv_pts),
        (batchnorm, [(n, 32, 32) for n in (1, 2, 4, 8, 16)]),
        (pool("maxpool", F.max_pool2d), [(n, 32, 32) for n in (1, 2, 4, 8, 16)]),
        (pool("avgpool", F.avg_pool2d), [(n, 32, 32) for n in (1, 2, 4, 8, 16)]),
        (embedding_fwd, [(100000, 64, b, 16) for b in (32, 64, 128, 256, 512, 1024, 2048)]
         + [(100000, 64, 256, l) for l in (1, 4, 64)]),
        (embedding_bwd, [(100000, 64, b, 16) for b in (32, 64, 128, 256, 512, 1024, 2048)]),
        (transpose, [(8, m, 256) for m in (16, 32, 64, 128, 256, 512)]),
        (sgd_update, [(n,) for n in (16384, 65536, 262144, 1048576, 4194304)]),
        (cross_entropy, [(r, 1024) for r in (16, 64, 256, 1024)]),
    ]
    rows_family = [binary("add", torch.add), binary("mul", torch.mul),
                   unary("relu", torch.relu), relu_bwd, unary("sigmoid", torch.sigmoid),
                   unary("tanh", torch.tanh), unary("gelu", F.gelu), dropout, softmax,
                   layernorm, reduce_sum, memcpy, cast_fp16]
    grid += [(build, [(r, 1024) for r in ROWS_FULL]) for build in rows_family]
    grid.append((concat, [(r, 512) for r in ROWS_FULL]))
    return grid


GRIDS["full"] = _full_grid()


# --- random grid (learned estimator training data) -------------------------------------------
#
# Tianshu trains its estimator on random shapes (Tianshu section 4.3: "each
# dimension ... randomly generated", other parameters taken from real models). `--random-grid
# COUNT --seed S` draws COUNT distinct shapes per op from the distributions below. The draws
# depend only on (seed, op family), so a grid is reproducible whatever --ops selects; the
# times of course are not.

RANDOM_OPS = ["add", "mul", "relu", "matmul", "conv2d", "conv2d_bwd_data", "conv2d_bwd_filter"]
ELEMENTWISE_MAX_DIM = 2048
ELEMENTWISE_MAX_NUMEL = 1 << 21  # 8 MB per fp32 tensor keeps one op under ~10 ms on one core
MATMUL_MAX_DIM = 1024            # the paper's range of every dimension, [1, 1024]
CONV_MAX_FLOPS = 2e8             # forward FLOPs cap: keeps the CPU profiling within minutes


def log_uniform_int(rng, lo, hi):
    """An integer in [lo, hi], uniform in log space (shapes span decades; a uniform draw would
    almost never give small ones)."""
    return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))


def random_elementwise(rng):
    while True:
        r = log_uniform_int(rng, 1, ELEMENTWISE_MAX_DIM)
        c = log_uniform_int(rng, 1, ELEMENTWISE_MAX_DIM)
        if r * c <= ELEMENTWISE_MAX_NUMEL:
            return (r, c)


def random_matmul(rng):
    return tuple(log_uniform_int(rng, 1, MATMUL_MAX_DIM) for _ in range(3))


def random_conv(rng):
    """(n, c, h, w, k, r, s, stride, pad). Images and kernels are square and stride and padding
    the same along both axes, as in nearly every CNN layer: a few thousand samples cover five
    sizes far better than seven. Kernels are 1..7, stride 1 or 2, padding 0 or 1."""
    while True:
        n = log_uniform_int(rng, 1, 32)
        c = log_uniform_int(rng, 1, 256)
        k = log_uniform_int(rng, 1, 256)
        h = log_uniform_int(rng, 1, 64)
        r = rng.randint(1, 7)
        stride, pad = rng.choice((1, 2)), rng.choice((0, 1))
        p = (h + 2 * pad - r) // stride + 1
        if p < 1 or 2.0 * n * k * p * p * c * r * r > CONV_MAX_FLOPS:
            continue
        return (n, c, h, h, k, r, r, stride, pad)


def conv_shapes_rect(n, c, h, w, k, r, s, stride, pad):
    p = (h + 2 * pad - r) // stride + 1
    q = (w + 2 * pad - s) // stride + 1
    attrs = {"stride_h": stride, "stride_w": stride, "pad_h": pad, "pad_w": pad}
    return (n, c, h, w), (k, c, r, s), (n, k, p, q), attrs


def conv_case(op, dev, dt, args):
    xs, ws, ys, attrs = conv_shapes_rect(*args)
    stride, pad = args[7], args[8]
    x, wt = rand(xs, dev, dt), rand(ws, dev, dt)
    if op == "conv2d":
        return Case(op, [xs, ws], ys, attrs,
                    lambda: F.conv2d(x, wt, stride=stride, padding=pad))
    dy = rand(ys, dev, dt)
    mask = [op == "conv2d_bwd_data", op == "conv2d_bwd_filter", False]
    inputs, output = ([ys, ws], xs) if op == "conv2d_bwd_data" else ([xs, ys], ws)
    return Case(op, inputs, output, attrs, lambda: torch.ops.aten.convolution_backward(
        dy, x, wt, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask))


# op -> (family whose draws it shares, shape sampler, Case builder)
RANDOM_FAMILIES = {
    "add": ("add", random_elementwise, lambda dev, dt, a: binary("add", torch.add)(dev, dt, *a)),
    "mul": ("mul", random_elementwise, lambda dev, dt, a: binary("mul", torch.mul)(dev, dt, *a)),
    "relu": ("relu", random_elementwise,
             lambda dev, dt, a: unary("relu", torch.relu)(dev, dt, *a)),
    "matmul": ("matmul", random_matmul, lambda dev, dt, a: matmul(dev, dt, *a)),
    "conv2d": ("conv", random_conv, lambda dev, dt, a: conv_case("conv2d", dev, dt, a)),
    "conv2d_bwd_data": ("conv", random_conv,
                        lambda dev, dt, a: conv_case("conv2d_bwd_data", dev, dt, a)),
    "conv2d_bwd_filter": ("conv", random_conv,
                          lambda dev, dt, a: conv_case("conv2d_bwd_filter", dev, dt, a)),
}


def random_grid_args(op, count, seed):
    """The `count` distinct argument tuples of `op` in the grid of `seed` (deterministic: a
    string seed is hashed with SHA-512 by `random`, whatever PYTHONHASHSEED says)."""
    family, sample, _ = RANDOM_FAMILIES[op]
    rng = random.Random(f"orrery-random-grid:{seed}:{family}")
    seen, out = set(), []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > 100 * count:
            raise ValueError(f"random grid for {op}: only {len(out)} distinct shapes")
        a = sample(rng)
        if a not in seen:
            seen.add(a)
            out.append(a)
    return out


def adaptive_copies(case, dev, target_s, n_min=2, m_min=6, m_max=400):
    """N and M for one shape: M copies take about `target_s` (so the difference T_M - T_N
    stands well above timer resolution and noise for microsecond ops), N = M / 5."""
    case.run()  # warm caches and lazily built kernels before timing the probe
    probe = graph_time(case, 3, dev) / 3
    m = int(target_s / probe) if probe > 0 else m_max
    m = max(m_min, min(m_max, m))
    return max(n_min, m // 5), m


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


# The clock of graph_time. Wall time (perf_counter) is what a GPU needs. On a CPU running torch
# with one thread the op runs in the calling thread, and its thread CPU time leaves out the
# time other processes of a shared machine take from it (`--clock thread`).
CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}
clock = time.perf_counter


def graph_time(case, copies, dev):
    """Time of one 'graph' of `copies` sequential copies of the op, synchronised at the end
    (the chained-copies graph of Tianshu's Fig. 2; eager execution runs them in order)."""
    LOCK.wait()
    sync(dev)
    t0 = clock()
    for _ in range(copies):
        case.run()
    sync(dev)
    return clock() - t0


def measure(case, dev, n, m, repeats, warmup):
    for _ in range(warmup):
        graph_time(case, n, dev)
    t_n, t_m = [], []
    for _ in range(repeats):  # interleaved, so a slow drift hits both sides alike
        t_n.append(graph_time(case, n, dev))
        t_m.append(graph_time(case, m, dev))
    # The fastest of the repeats: on a shared machine interference only ever adds time, so the
    # minimum is the least disturbed estimate of each graph (timeit's convention).
    best_n, best_m = min(t_n), min(t_m)
    per_op = [(b - a) / (m - n) for a, b in zip(t_n, t_m)]
    spread = statistics.pstdev(per_op) if len(per_op) > 1 else 0.0
    return (best_m - best_n) / (m - n), best_n, best_m, spread


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return "unknown"


def default_device_name(dev, threads):
    if dev.type == "cuda":
        raw = torch.cuda.get_device_name(dev)
    else:
        raw = "cpu-" + cpu_model()
    clean = "".join(c.lower() if c.isalnum() else "-" for c in raw.replace("(R)", ""))
    clean = "-".join(p for p in clean.split("-") if p)
    return f"{clean}-{threads}t" if dev.type == "cpu" else clean


def cases(args, dev, dt, keep):
    """(case, N, M) for every shape to time, in order; a case's tensors exist only while it is
    being timed."""
    if args.random_grid is None:
        for build, arg_list in GRIDS[args.grid]:
            for build_args in arg_list:
                case = build(dev, dt, *build_args)
                if keep is None or case.op in keep:
                    yield case, args.n, args.m
        return
    for op in RANDOM_OPS:
        if keep is not None and op not in keep:
            continue
        build = RANDOM_FAMILIES[op][2]
        for build_args in random_grid_args(op, args.random_grid, args.seed):
            case = build(dev, dt, build_args)
            n, m = adaptive_copies(case, dev, args.target_time)
            yield case, n, m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", help="torch device: cpu, cuda, cuda:1 ...")
    ap.add_argument("--device-name", help="device name written in the rows (an Orrery device "
                    "spec name such as V100-SXM2 for GPUs; default derived from the hardware)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (fixed)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="small")
    ap.add_argument("--ops", help="comma-separated op types to keep (default: all in the grid)")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    ap.add_argument("--n", type=int, default=2, help="copies in the short graph (N)")
    ap.add_argument("--m", type=int, default=10, help="copies in the long graph (M > N)")
    ap.add_argument("--repeats", type=int, default=5, help="timed (N, M) pairs per shape")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--random-grid", type=int, metavar="COUNT",
                    help="instead of --grid: COUNT random shapes per op of " + ",".join(RANDOM_OPS)
                    + " (learned-estimator training data); N and M adapt per shape")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --random-grid shapes")
    ap.add_argument("--target-time", type=float, default=0.002, metavar="SECONDS",
                    help="--random-grid: M copies of an op take about this long")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall: elapsed time; thread: CPU time of the calling thread (CPU device "
                    "with --threads 1 only; unaffected by other processes on a shared machine)")
    ap.add_argument("--calls", action="append", metavar="FILE",
                    help="time the exact ATen calls of model graphs saved by "
                    "export_pytorch_graph.py --calls (repeatable) instead of a grid")
    ap.add_argument("--calls-target", type=float, default=0.005, metavar="SECONDS",
                    help="--calls: M copies of an op take about this long")
    ap.add_argument("--calls-stat", choices=["median", "min"], default="median",
                    help="--calls: statistic of the repeated T_N and T_M graphs")
    ap.add_argument("--calls-rotate", default="reuse", metavar="reuse|BYTES",
                    help="--calls: 'reuse' (default) rotates each input over copies as far "
                    "apart as its reuse distance in the step; BYTES rotates every op over copies "
                    "totalling that many bytes; 0 keeps the same tensors (cache-hot)")
    ap.add_argument("--calls-context", choices=["auto", "traffic", "rotate"], default="auto",
                    help="--calls: 'traffic' times each call after replaying the step's foreign "
                    "memory traffic behind every input (its reuse distance), with the op's code "
                    "warm; 'rotate' is Tianshu's N/M over rotating copies (--calls-rotate); "
                    "'auto' (default): traffic for ops with an input at least "
                    "--calls-traffic-min bytes away, rotate for the others")
    ap.add_argument("--calls-traffic-min", type=float, default=32 * 2**20, metavar="BYTES",
                    help="--calls-context auto: reuse distance from which an op is timed in "
                    "replayed traffic (default 32 MiB: below it, foreign traffic and rotation "
                    "time ResNet-18's largest convolution alike here)")
    ap.add_argument("--ranks", type=int, default=1,
                    help="--calls: time every call in this many processes at once, in lock "
                    "step (data-parallel ranks on one machine); rows hold their mean")
    ap.add_argument("--ranks-combine", choices=["slowest", "mean"], default="slowest",
                    help="--ranks: rows of the rank with the largest op sum (default: the one "
                    "data-parallel ranks wait for) or each call's mean over ranks")
    ap.add_argument("--calls-samples", type=int, default=9,
                    help="--calls-context traffic: timed calls per op (their median or minimum)")
    ap.add_argument("--calls-max-sweep", type=float, default=512e6, metavar="BYTES",
                    help="--calls-context traffic: longest foreign-traffic sweep")
    ap.add_argument("-o", "--output", required=True, help="CSV file to write")
    args = ap.parse_args(argv)
    if args.m <= args.n or args.n < 1:
        ap.error("need 1 <= N < M")
    if args.random_grid is not None and args.random_grid < 1:
        ap.error("--random-grid needs a positive count")
    if args.ranks < 1 or (args.ranks > 1 and not args.calls):
        ap.error("--ranks needs at least 1, and more only with --calls")
    if args.calls_samples < 1:
        ap.error("--calls-samples needs at least 1")
    args.calls_max_sweep = int(args.calls_max_sweep)
    args.calls_traffic_min = int(args.calls_traffic_min)

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    if args.clock == "thread" and (dev.type != "cpu" or args.threads != 1):
        ap.error("--clock thread needs --device cpu and --threads 1")
    global clock
    clock = CLOCKS[args.clock]
    if dev.type == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but torch sees no CUDA device")
    name = args.device_name or default_device_name(dev, args.threads)
    dt = DTYPES[args.dtype]
    keep = set(args.ops.split(",")) if args.ops else None
    if args.calls:
        return profile_calls(args, dev, name)
    if args.random_grid is not None and keep is not None and not keep <= set(RANDOM_OPS):
        ap.error("--random-grid knows only " + ",".join(RANDOM_OPS))

    command = " ".join(["scripts/profile_ops.py"] + (argv if argv is not None else sys.argv[1:]))
    header = [
        "# Orrery op profile: times measured with the N/M method (eq. 1 of Tianshu: Towards "
        "Accurate Measuring, Modeling and Simulation of Deep Neural Networks, Huang, Xu, Guan, "
        "EMSS 2024)",
        f"# device: {name}",
        f"# hardware: {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else cpu_model()}",
        f"# torch: {torch.__version__}; python: {platform.python_version()}; "
        f"threads: {args.threads}; clock: {args.clock}",
        f"# date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        (f"# N={args.n} M={args.m} repeats={args.repeats} warmup={args.warmup}"
         if args.random_grid is None else
         f"# random grid: seed={args.seed} count={args.random_grid} per op; N/M adaptive "
         f"(M copies take about {args.target_time * 1e3:g} ms, N = M/5); repeats={args.repeats} "
         f"warmup={args.warmup}"),
        f"# command: /usr/bin/python3 {command}",
    ]
    source = f"profile_ops.py torch {torch.__version__} {args.threads}t"
    if args.clock != "wall":
        source += f" {args.clock}-clock"
    load_start = load_average()

    # Random grids hold thousands of rows: six significant digits (well below the noise of a
    # measurement) and no per-row source column (the header says it) keep them small.
    columns, digits = (COLUMNS, 9) if args.random_grid is None else (COLUMNS[:-1], 5)
    if args.random_grid is not None:
        header.append(f"# source: {source}")
    t_start = time.perf_counter()
    rows, skipped = [], 0
    for case, n, m in cases(args, dev, dt, keep):
        t_op, t_n, t_m, spread = measure(case, dev, n, m, args.repeats, args.warmup)
        if t_op <= 0:
            skipped += 1
            print(f"skipped {case.op} {case.inputs}: T_M <= T_N (noise)", file=sys.stderr)
            continue
        rows.append([case.op, case.dtype if case.op == "cast" else args.dtype, name,
                     ";".join(shape_text(s) for s in case.inputs), shape_text(case.output),
                     attrs_text(case.attrs), f"{t_op:.{digits}e}", str(n), str(m),
                     f"{t_n:.{digits}e}", f"{t_m:.{digits}e}", str(args.repeats),
                     f"{spread:.3e}", source][:len(columns)])
    elapsed = time.perf_counter() - t_start
    header.append(f"# rows: {len(rows)}; skipped: {skipped}; profiling time: {elapsed:.1f} s")
    header.append(f"# load average (1 min) at start / end: {load_start} / {load_average()}; "
                  "per graph the fastest of the repeats is kept")

    tmp = args.output + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(tmp, "w") as f:
        f.write("\n".join(header) + "\n")
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    os.replace(tmp, args.output)
    print(f"{args.output}: {len(rows)} rows for {name} in {elapsed:.1f} s"
          + (f" ({skipped} skipped)" if skipped else ""))
    return 0


# --- The exact ops of exported model graphs (--calls) -------------------------------------------
#
# scripts/export_pytorch_graph.py --calls FILE keeps the ATen call(s) behind every op of a traced
# training step (operator, arguments, tensor shapes and strides). This mode times exactly those
# calls with the N/M method, rebuilding each argument tensor with its recorded layout (random
# float values; integer and boolean tensors such as labels and pooling indices keep their recorded
# values), and writes one row per distinct op key of the graph. Ops whose key is the same but whose
# ATen calls differ (an out-of-place add and an in-place gradient accumulation of the same shape)
# share one row: the mean over the graph's occurrences, so the row times the graph's ops sum to
# the measured sum. N/M per distinct call: N = --n copies, M = enough copies to last
# --calls-target seconds (at least --m), median (default) or minimum of --repeats interleaved
# pairs of graphs. So that an op takes here what it takes inside a training step
# (docs/validation.md, "The profile database"): arguments rotate over copies as far apart as the
# step's traffic between two uses of each tensor (--calls-rotate reuse); an op with an input
# reused from far (32 MiB of traffic or more, --calls-context auto) is instead timed call by call
# after that traffic is replayed with foreign memory (TrafficCase); the glibc heap is kept
# (a loop of one op would otherwise fault its large outputs in every copy), forward ops run with
# grad mode on inputs that required grad, and denormal floats are flushed (repeating an in-place
# op thousands of times can drive values into the denormal range, which real steps do not visit).

def _calls_decode(obj, dev, make):
    """Arguments of a recorded call, with tensor specs turned into tensors by `make(spec)`."""
    if isinstance(obj, dict):
        if obj.get("__tensor__"):
            return make(obj)
        if "__torch__" in obj:
            return getattr(torch, obj["__torch__"])
        if "__device__" in obj:
            return dev
        return {k: _calls_decode(v, dev, make) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_calls_decode(o, dev, make) for o in obj)
    return obj


def _calls_tensor(spec, dev, grad=False):
    """A fresh tensor laid out as `spec` records (shape, strides, offset, storage size,
    dtype): random floats, or the recorded values of an integer or boolean tensor. With `grad`
    and a spec that required grad in the step, the tensor requires grad too (a non-leaf, so
    in-place ops stay legal), so that autograd records the op as in the step's forward and
    kernels that choose their path by it see what they saw there."""
    dtype = getattr(torch, spec["dtype"]["__torch__"])
    shp, stride = list(spec["shape"]), spec.get("stride")
    if spec.get("values") is not None:
        return spec["values"].to(dev)
    numel = 1
    for d in shp:
        numel *= d
    size = max(spec.get("storage") or numel, 1)
    if dtype.is_floating_point:
        base = torch.empty(size, device=dev, dtype=dtype).uniform_(-1, 1)
        if grad and spec.get("requires_grad"):
            base = base.requires_grad_() * 1.0
    else:
        base = torch.zeros(size, device=dev, dtype=dtype)
    return base.as_strided(shp, stride, spec.get("offset", 0)) if stride is not None \
        else base[:numel].view(shp)


def _calls_specs(obj, out):
    """Every tensor spec of a recorded call list, in order."""
    if isinstance(obj, dict):
        if obj.get("__tensor__"):
            out.append(obj)
        else:
            for v in obj.values():
                _calls_specs(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _calls_specs(v, out)
    return out


def _calls_func(name):
    """torch.ops.aten.<op>.<overload> from its printed name 'aten.add_.Tensor'."""
    parts = name.split(".")
    obj = getattr(torch.ops, parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def _calls_signature(obj):
    """A hashable description of a recorded call list, tensor values left out."""
    if isinstance(obj, dict):
        if obj.get("__tensor__"):  # reuse distances in factor-2 bins
            return ("T", tuple(obj["shape"]), tuple(obj["stride"] or ()), obj.get("offset"),
                    obj.get("storage"), obj["dtype"]["__torch__"], obj.get("ref"),
                    int(obj.get("reuse", 0)).bit_length())
        return tuple(sorted((k, _calls_signature(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return tuple(_calls_signature(o) for o in obj)
    return repr(obj)


class CallsCase:
    """A recorded op as a Case: `run()` executes its ATen calls once, in order, and keeps
    their results until the next run (so that rotating copies also write to memory last
    touched long ago, as a step's outputs do). `make(spec)` supplies the argument tensors."""

    def __init__(self, record, dev, make=None):
        # Grad mode as in the step: on in forward (autograd records the op), off in backward
        # (the engine runs without it) and in the optimizer (torch.no_grad).
        self.grad = record.get("phase", "forward") == "forward"
        if make is None:
            refs = {}

            def make(spec):
                ref = spec.get("ref")
                if ref is None:
                    return _calls_tensor(spec, dev, self.grad)
                if ref not in refs:
                    refs[ref] = _calls_tensor(spec, dev, self.grad)
                return refs[ref]
        self.steps = [(_calls_func(c["func"]), _calls_decode(c["args"], dev, make),
                       _calls_decode(c["kwargs"], dev, make)) for c in record["calls"]]
        self.results = None

    def run(self):
        self.results = None
        with torch.set_grad_enabled(self.grad):
            self.results = [f(*a, **k) for f, a, k in self.steps]


POOL_BYTES = 256 << 20  # memory the copies of one tensor may take (--calls-rotate)


class RotatingCase:
    """Copies of a recorded op run in turn, so that an op finds its inputs as far out of the
    caches as in a training step, where other ops' memory traffic passes between two uses of
    a tensor (the same tensors repeated would stay cache-hot).

    `rotate` = bytes: every tensor rotates over copies totalling about that many bytes.
    `rotate` = "reuse": each tensor rotates over enough copies that the traffic between two
    uses of one copy matches its recorded reuse distance ("reuse", bytes of the step's traffic
    since its previous access; export_pytorch_graph.py --calls): a weight read in forward comes
    from far, an activation made by the previous op from near. Results are held until their
    copy runs again. At most 256 copies."""

    def __init__(self, record, dev, rotate):
        specs = _calls_specs(record["calls"], [])
        ident = {}  # spec -> tensor identity (shared refs are one tensor)
        for i, sp in enumerate(specs):
            ident[id(sp)] = ("ref", sp["ref"]) if sp.get("ref") is not None else ("pos", i)
        size_of = {}  # bytes each copy of a tensor allocates (its whole storage)
        for sp in specs:
            n = 1
            for d in sp["shape"]:
                n *= d
            n = max(n, sp.get("storage") or 0)
            item = torch.empty((), dtype=getattr(torch, sp["dtype"]["__torch__"])).element_size()
            size_of[ident[id(sp)]] = n * item
        case_bytes = max(sum(size_of.values()), 1)
        copies = {}
        for sp in specs:
            if rotate == "reuse":
                k = 1 + -(-int(sp.get("reuse", 0)) // case_bytes)
            elif rotate and float(rotate) > 0:
                k = -(-int(float(rotate)) // case_bytes)
            else:
                k = 1
            # At most 256 copies and about POOL_BYTES of them per tensor.
            cap = max(1, POOL_BYTES // max(size_of[ident[id(sp)]], 1))
            copies[ident[id(sp)]] = max(1, min(256, cap, k))
        count = max(copies.values()) if copies else 1
        pool = {}

        def maker(copy):
            def make(spec):
                key = ident[id(spec)]
                slot = (key, copy % copies[key])
                if slot not in pool:
                    pool[slot] = _calls_tensor(spec, dev, record.get("phase", "forward") ==
                                               "forward")
                return pool[slot]
            return make
        self.cases = [CallsCase(record, dev, maker(i)) for i in range(count)]
        self.next = 0

    def run(self):
        self.cases[self.next].run()
        self.next = (self.next + 1) % len(self.cases)


def current_cpu():
    """The CPU the calling thread runs on (Linux), or None."""
    try:
        with open("/proc/thread-self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


class _Warmer:
    """Runs cases on a helper thread. glibc gives the thread its own malloc arena, so what a
    case frees there (its outputs and internal buffers) cannot be handed to the next call on
    the main thread; the code it runs is left in the caches for that call all the same."""

    def __init__(self):
        self.todo, self.done = queue.Queue(), queue.Queue()
        self.tid = None
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        torch.set_flush_denormal(True)  # per thread (MXCSR), like the main thread's setting
        self.tid = threading.get_native_id()
        while True:
            case = self.todo.get()
            try:
                case.run()
                self.done.put(None)
            except BaseException as e:  # pragma: no cover - re-raised on the main thread
                self.done.put(e)

    def run(self, case):
        # On the core the main thread runs on, whose private caches the timed call will use.
        cpu = current_cpu()
        if cpu is not None and self.tid is not None:
            try:
                os.sched_setaffinity(self.tid, {cpu})
            except OSError:
                pass
        self.todo.put(case)
        err = self.done.get()
        if err is not None:
            raise err


class TrafficCase:
    """A recorded op timed once per call after the step's memory traffic is replayed around it.

    Between two uses of a tensor a training step moves its reuse distance's worth of *other*
    data through the memory system. Rotating copies of the op itself (RotatingCase) makes the
    op's inputs as cold as that, but leaves everything else the op touches warm: the heap blocks
    its outputs and internal buffers reuse (oneDNN's reordered weights, scratchpads) and the
    page-table entries of its tensors (ResNet-18's layer4 convolution here: 2.0 ms with 600 MB
    of rotated weights, 3.0 ms after 256 MB of other traffic, 2.6 ms inside the step). So each
    timed call is prepared as the step prepares it: inputs are read in order of decreasing reuse
    distance, each followed by writes to a foreign buffer until the next one is due (the last
    by its own distance), so that every input has its distance of foreign traffic behind it.
    Code, on the other hand, the step keeps warm (every op runs the same dispatcher; an op's
    kernels ran for the previous layer): a second copy of the op runs at its place in that
    order, on a helper thread (_Warmer), so that it warms the code without warming the memory
    the timed call will allocate. Without it a 10-element SGD update after 150 MB of traffic
    takes 77 us instead of 3 us. Sweeps stop at `max_sweep` bytes."""

    foreign = None  # the foreign buffer, shared by all cases (grown on demand)
    warmer = None

    def __init__(self, record, dev, max_sweep):
        self.dev, self.max_sweep = dev, max_sweep
        self.case, tensors, dist = self._build(record, dev)
        self.warm, warm_tensors, _ = self._build(record, dev)
        warm_bytes = sum(t.untyped_storage().nbytes() if hasattr(t, "untyped_storage")
                         else t.storage().nbytes() for t in warm_tensors.values())
        # (distance, tensor or None for the warm-up copy), farthest first
        items = [(dist[k], tensors[k]) for k in tensors] + [(warm_bytes, None)]
        items.sort(key=lambda it: -it[0])
        self.plan = [(item, items[i][0] - (items[i + 1][0] if i + 1 < len(items) else 0))
                     for i, item in enumerate(t for _, t in items)]
        need = min(max_sweep, max((d for d, _ in items), default=0))
        if TrafficCase.foreign is None or TrafficCase.foreign.numel() * 4 < need:
            TrafficCase.foreign = None
            TrafficCase.foreign = torch.empty(max(need // 4, 1), device=dev)

    @staticmethod
    def _build(record, dev):
        grad = record.get("phase", "forward") == "forward"
        tensors, dist = {}, {}

        def make(spec):
            key = ("ref", spec["ref"]) if spec.get("ref") is not None else ("spec", id(spec))
            if key not in tensors:
                tensors[key] = _calls_tensor(spec, dev, grad)
            dist[key] = max(dist.get(key, 0), int(spec.get("reuse", 0)))
            return tensors[key]
        return CallsCase(record, dev, make), tensors, dist

    def sweep(self, nbytes):
        n = min(nbytes, self.max_sweep, TrafficCase.foreign.numel() * 4) // 4
        if n > 0:
            TrafficCase.foreign[:n].fill_(1.0)

    def timed_call(self):
        with torch.no_grad():
            for tensor, gap in self.plan:
                if tensor is None:
                    if TrafficCase.warmer is None:
                        TrafficCase.warmer = _Warmer()
                    TrafficCase.warmer.run(self.warm)
                else:
                    tensor.detach().sum()
                self.sweep(gap)
        sync(self.dev)
        LOCK.wait()
        t0 = clock()
        self.case.run()
        sync(self.dev)
        return clock() - t0


def clock_overhead(samples=101):
    """Median time of an empty timed region: what a per-call time holds besides the call."""
    ts = []
    for _ in range(samples):
        t0 = clock()
        ts.append(clock() - t0)
    return statistics.median(ts)


def measure_traffic(case, samples, warmup, stat):
    """Per-call time of a TrafficCase: (t_op, empty-region time, median raw call, spread)."""
    for _ in range(max(warmup, 1)):
        case.timed_call()
    raw = [case.timed_call() for _ in range(samples)]
    empty = clock_overhead()
    pick = statistics.median if stat == "median" else min
    spread = statistics.pstdev(raw) if len(raw) > 1 else 0.0
    return max(pick(raw) - empty, 0.0), empty, pick(raw), spread


def keep_heap_memory():
    """Stops glibc malloc from returning freed memory to the kernel (trim threshold) and from
    serving large blocks by mmap. A loop of one op frees and re-allocates its output each copy;
    with glibc's defaults a large output then comes back as fresh pages, and the page faults
    (1.5 ms per call for a 9 MB conv weight gradient here) would be charged to the op, while a
    training step reuses heap memory its previous iteration freed (no faults in steady state).
    Returns whether both settings were taken (glibc only)."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_trim_threshold, 1 << 30)) and \
            bool(libc.mallopt(m_mmap_threshold, 32 << 20))  # glibc's largest mmap threshold
    except (OSError, AttributeError):
        return False


def measure_calls(case, dev, n, m_min, target_s, repeats, warmup, stat):
    """N/M time of one recorded op: (t_op, T_N, T_M, M, spread). M copies last about
    `target_s` (at least `m_min`, at most 5000); T_N and T_M are the median (or minimum) of
    `repeats` interleaved graphs."""
    for _ in range(max(warmup, 1)):
        one = graph_time(case, 1, dev)
    m = int(LOCK.agree_max(max(m_min, n + 1, min(5000, int(target_s / max(one, 1e-7)) + n))))
    t_n, t_m = [], []
    for _ in range(repeats):
        t_n.append(graph_time(case, n, dev))
        t_m.append(graph_time(case, m, dev))
    pick = statistics.median if stat == "median" else min
    best_n, best_m = pick(t_n), pick(t_m)
    per_op = [(b - a) / (m - n) for a, b in zip(t_n, t_m)]
    spread = statistics.pstdev(per_op) if len(per_op) > 1 else 0.0
    return (best_m - best_n) / (m - n), best_n, best_m, m, spread


def measure_record(rec, dev, args):
    """(t_op, T_N, T_M, M, spread, N) of one recorded op, in the context --calls-context picks
    for it: replayed traffic for far-reused ops, N/M over rotating copies for the others."""
    far = max((int(sp.get("reuse", 0)) for sp in _calls_specs(rec["calls"], [])),
              default=0) >= args.calls_traffic_min
    if args.calls_context == "traffic" or (args.calls_context == "auto" and far):
        case = TrafficCase(rec, dev, args.calls_max_sweep)
        t_op, empty, raw, spread = measure_traffic(case, args.calls_samples, args.warmup,
                                                   args.calls_stat)
        return t_op, empty, raw, 1, spread, 0
    case = RotatingCase(rec, dev, args.calls_rotate)
    res = measure_calls(case, dev, args.n, args.m, args.calls_target, args.repeats,
                        args.warmup, args.calls_stat)
    tries = 1
    # Noise above the op: longer graphs (all ranks together, so that they stay in step).
    while LOCK.agree_max(1.0 if res[0] <= 0 else 0.0) > 0 and tries < 3:
        res = measure_calls(case, dev, args.n, res[3] * 4, args.calls_target, args.repeats,
                            args.warmup, args.calls_stat)
        tries += 1
    return res + (args.n,)


class Lockstep:
    """The ranks of one profiling run (--ranks): processes forked from this one that time the
    same calls at the same moments, as data-parallel ranks run the same op at once in lock step
    (each DDP bucket's all-reduce re-aligns them), so that memory-bound ops meet their twin's
    memory traffic as they do in the step. One rank: every method is a no-op."""

    def __init__(self, ranks=1):
        self.ranks, self.rank, self.children = ranks, 0, []
        if ranks <= 1:
            return
        import multiprocessing
        ctx = multiprocessing.get_context("fork")
        self.barrier = ctx.Barrier(ranks)
        self.slots = ctx.Array("d", ranks, lock=False)
        self.queue = ctx.SimpleQueue()
        sys.stdout.flush()
        sys.stderr.flush()
        for r in range(1, ranks):
            pid = os.fork()
            if pid == 0:
                self.rank, self.children = r, []
                break
            self.children.append(pid)

    def wait(self):
        if self.ranks > 1:
            self.barrier.wait(timeout=600)  # a rank that died breaks it: an error, not a hang

    def agree_max(self, value):
        """The largest of the ranks' values (each rank passes its own)."""
        if self.ranks <= 1:
            return value
        self.slots[self.rank] = value
        self.wait()
        agreed = max(self.slots[:])
        self.wait()
        return agreed

    def combine(self, measured, weights, policy):
        """Rank 0: (the measured tuples of all ranks combined by `policy`, each rank's op sum).
        `weights`: occurrences of each call signature in the graphs. 'slowest' keeps the tuples
        of the rank whose op sum is largest: data-parallel ranks wait for each other at every
        collective, so the slowest rank sets the step. 'mean' averages each call over ranks.
        Other ranks send theirs and exit."""
        if self.ranks <= 1:
            return measured, [sum(w * measured[s][0] for s, w in weights.items())]
        if self.rank != 0:
            self.queue.put((self.rank, measured))
            sys.stdout.flush()
            os._exit(0)
        by_rank = dict([(0, measured)] + [self.queue.get() for _ in self.children])
        for pid in self.children:
            _, status = os.waitpid(pid, 0)
            if status != 0:
                sys.exit(f"profile_ops.py: rank process {pid} failed (status {status})")
        ranks = [by_rank[r] for r in sorted(by_rank)]
        sums = [sum(w * m[s][0] for s, w in weights.items()) for m in ranks]
        if policy == "slowest":
            return ranks[max(range(len(ranks)), key=lambda r: sums[r])], sums
        out = {}
        for sig, res in measured.items():
            all_res = [m[sig] for m in ranks]
            means = [statistics.fmean(r[i] for r in all_res) for i in (0, 1, 2, 4)]
            out[sig] = (means[0], means[1], means[2], res[3], means[3], res[5])
        return out, sums


LOCK = Lockstep()


def profile_calls(args, dev, name):
    """The --calls mode: rows for every op of the given call files (see above)."""
    source = f"profile_ops.py --calls torch {torch.__version__} {args.threads}t"
    flush = torch.set_flush_denormal(True)
    heap = keep_heap_memory() if dev.type == "cpu" else False
    load_start = load_average()
    t_start = time.perf_counter()
    measured = {}  # call signature -> (t_op, T_N, T_M, M, spread)
    keys = {}      # row key -> [weight, sum t_op, sum T_N, sum T_M, sum spread, M, N]
    order, skipped, models = [], 0, []
    datas = []
    for path in args.calls:
        try:
            data = aten_calls_file.load(path)  # never unpickles code (weights_only=True)
        except (OSError, ValueError) as e:
            sys.exit(f"profile_ops.py: {e}")
        models.append(f"{data['model']} ({len(data['ops'])} ops)")
        datas.append(data)
    global LOCK
    LOCK = Lockstep(args.ranks)  # forks the other ranks, which time the same calls in step
    records = []  # (record, call signature) in graph order
    for data in datas:
        for rec in data["ops"]:
            if not rec["calls"]:
                skipped += 1
                if LOCK.rank == 0:
                    print(f"no ATen call recorded for {rec['name']} ({rec['type']})",
                          file=sys.stderr)
                continue
            sig = _calls_signature(rec["calls"])
            if sig not in measured:
                measured[sig] = measure_record(rec, dev, args)
            records.append((rec, sig))
    weights = {}
    for _, sig in records:
        weights[sig] = weights.get(sig, 0) + 1
    # Ranks other than 0 exit here.
    measured, rank_sums = LOCK.combine(measured, weights, args.ranks_combine)
    for rec, sig in records:
        t_op, t_n, t_m, m, spread, n_short = measured[sig]
        key = (rec["type"], rec["dtype"], ";".join(shape_text(s) for s in rec["inputs"]),
               shape_text(rec["output"]), attrs_text(rec["attrs"]))
        if key not in keys:
            keys[key] = [0, 0.0, 0.0, 0.0, 0.0, m, n_short]
            order.append(key)
        k = keys[key]
        k[0] += 1
        k[1] += t_op
        # Per-op graph times rescaled to common N and M, so that the row's time is exactly
        # (T_M - T_N) / (M - N) of the row's own columns (per-call timing: N = 0, M = 1,
        # T_N the empty timed region).
        k[2] += t_n
        k[3] += t_n + t_op * (k[5] - k[6])
        k[4] += spread
    elapsed = time.perf_counter() - t_start
    torch.set_flush_denormal(flush)

    rows, dropped = [], 0
    for key in order:
        w, s_op, s_n, s_m, s_spread, m, n = keys[key]
        if s_op <= 0:
            dropped += 1
            print(f"dropped {key[0]} {key[2]}: T_M <= T_N after retries (noise)", file=sys.stderr)
            continue
        op, dtype, inputs, output, attrs = key
        rows.append([op, dtype, name, inputs, output, attrs, f"{s_op / w:.9e}", str(n), str(m),
                     f"{s_n / w:.9e}", f"{s_m / w:.9e}", str(args.repeats),
                     f"{s_spread / w:.3e}", source])
    command = " ".join(["scripts/profile_ops.py"] + sys.argv[1:])
    header = [
        "# Orrery op profile: the exact ATen calls of exported training steps, timed with the "
        "N/M method (eq. 1 of Tianshu: Towards Accurate Measuring, Modeling and Simulation of "
        "Deep Neural Networks, Huang, Xu, Guan, EMSS 2024) or, far-reused, in replayed traffic",
        f"# device: {name}",
        f"# hardware: {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else cpu_model()}",
        f"# torch: {torch.__version__}; python: {platform.python_version()}; "
        f"threads: {args.threads}",
        f"# date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"# models: {', '.join(models)}",
        f"# context: {args.calls_context} (auto: traffic from a reuse distance of "
        f"{int(args.calls_traffic_min)} bytes, rotate below); statistic={args.calls_stat}, "
        f"warmup={args.warmup}",
        f"# traffic: each call timed after its inputs' reuse distances of foreign memory traffic, "
        f"code warm; sweeps up to {args.calls_max_sweep} bytes; {args.calls_samples} calls; rows "
        "with N=0 M=1 (T_N the empty timed region, T_M the call)",
        f"# rotate: N/M, N={args.n} M>={args.m} (M copies last about {args.calls_target} s) "
        f"repeats={args.repeats}; input rotation: {args.calls_rotate} ('reuse': each tensor as "
        "far from its previous use as in the step; 0: cache-hot)",
        f"# ranks: {args.ranks} (processes timing every call at once, in lock step); rows: "
        f"{args.ranks_combine if args.ranks > 1 else 'the one rank'}; op sum of each rank: "
        + " / ".join(f"{v * 1e3:.3f} ms" for v in rank_sums),
        "# rows shared by several calls hold their occurrence-weighted mean; glibc heap kept "
        f"(no page faults from the op loop): {heap}; denormals flushed",
        f"# command: /usr/bin/python3 {command}",
        f"# rows: {len(rows)}; distinct calls timed: {len(measured)}; ops without calls: "
        f"{skipped}; dropped: {dropped}; profiling time: {elapsed:.1f} s",
        f"# load average (1 min) at start / end: {load_start} / {load_average()}",
    ]
    tmp = args.output + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(tmp, "w") as f:
        f.write("\n".join(header) + "\n")
        f.write(",".join(COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    os.replace(tmp, args.output)
    print(f"{args.output}: {len(rows)} rows for {name} from {len(measured)} distinct calls in "
          f"{elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
