#!/usr/bin/python3
"""Loopback communication between two PyTorch processes over gloo, as Orrery's platform needs it.

The 2-process data-parallel runs of the validation loop (docs/validation.md) exchange
gradients with gloo over TCP on loopback. Orrery models that exchange as flows over links and a
ring all-reduce. This script measures, like Table 1 of
Simulating Performance of ML Systems with Offline Profiling (Huang, Cheng, Xu, Xiong)
measures PCIe and NCCL:

  - point-to-point: rank 0 sends S bytes, rank 1 receives them (dist.send / dist.recv), for
    sizes from 4 KiB to 64 MiB; t = latency + S / bandwidth (bandwidth from the two largest
    sizes, latency from the smallest) gives the link of the platform preset (one direction of
    a loopback TCP connection);
  - all-reduce: dist.all_reduce of S bytes of fp32 on both ranks, to compare with what Orrery's
    ring algorithm predicts from that link (gloo's allreduce is a ring: reduce-scatter then
    all-gather, pipelined in segments; gloo/allreduce.cc, Algorithm::RING is the default).

Each size is timed `--reps` times after warm-up (wall clock; a barrier before each), median.
One torch thread per process. Output: a CSV with the table and the fitted link ('#' lines).

    flock /tmp/orrery-measure.lock /usr/bin/python3 scripts/validate_comm.py -o comm.csv
"""

import argparse
import datetime
import multiprocessing
import os
import socket
import statistics
import sys
import time

import torch

SIZES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]


def worker(rank, port, args, queue):
    """One of the two ranks: times send/recv and all_reduce for every size."""
    import torch.distributed as dist
    torch.set_num_threads(args.threads)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=2)
    out = []
    for size in SIZES:
        buf = torch.ones(size // 4)
        p2p, ar = [], []
        for i in range(args.warmup + args.reps):
            dist.barrier()
            t0 = time.perf_counter()
            if rank == 0:
                dist.send(buf, 1)
            else:
                dist.recv(buf, 0)
            # The receiver's time is the transfer: it starts waiting at the barrier.
            t1 = time.perf_counter()
            dist.barrier()
            t2 = time.perf_counter()
            dist.all_reduce(buf)
            t3 = time.perf_counter()
            if i >= args.warmup:
                p2p.append(t1 - t0)
                ar.append(t3 - t2)
        out.append((size, statistics.median(p2p), statistics.median(ar)))
    dist.destroy_process_group()
    queue.put((rank, out))


def fit(points):
    """(latency, bandwidth) of t = latency + bytes / bandwidth from (bytes, t) points sorted by
    size: the bandwidth is the slope between the two largest messages (their fixed costs
    cancel), the latency the least any message of at most 64 KiB takes beyond its bytes (a
    least-squares fit would let the large messages' noise swamp the latency; the minimum
    leaves out a stray slow repetition)."""
    (s1, t1), (s2, t2) = points[-2], points[-1]
    bandwidth = (s2 - s1) / (t2 - t1)
    small = [t - s / bandwidth for s, t in points if s <= 64 << 10] or \
        [points[0][1] - points[0][0] / bandwidth]
    return max(min(small), 0.0), bandwidth


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = [ctx.Process(target=worker, args=(r, port, args, queue)) for r in range(2)]
    for p in procs:
        p.start()
    res = dict(queue.get() for _ in procs)
    for p in procs:
        p.join()
    rows = res[1]  # the receiver's view of point-to-point; all-reduce is the same on both
    latency, bandwidth = fit(sorted((s, p) for s, p, _ in rows))
    load = os.getloadavg()[0]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(args.output, "w") as f:
        f.write("# Orrery loopback gloo measurements (scripts/validate_comm.py), %s, load %.2f\n"
                % (now, load))
        f.write("# point-to-point: latency %.3e s (small messages), bandwidth %.4e B/s "
                "(slope between the two largest): t = latency + bytes / bandwidth\n"
                % (latency, bandwidth))
        f.write("bytes,p2p_s,allreduce_s,allreduce_rank0_s\n")
        for (s, p, a), (_, _, a0) in zip(rows, res[0]):
            f.write("%d,%.6e,%.6e,%.6e\n" % (s, p, a, a0))
    print("loopback gloo: latency %.1f us, bandwidth %.2f GB/s" % (latency * 1e6, bandwidth / 1e9))
    for s, p, a in rows:
        print("  %9d B  send/recv %9.3f ms  all_reduce %9.3f ms" % (s, p * 1e3, a * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
