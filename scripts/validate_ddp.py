#!/usr/bin/python3
"""What PyTorch DistributedDataParallel adds to a replica's training step, as graph ops.

Orrery's allreduce strategy turns one replica's graph into data-parallel ranks and all-reduces
gradient buckets as backward produces them. PyTorch's DDP reducer (torch 1.13,
torch/csrc/distributed/c10d/reducer.cpp, defaults: bucket_cap_mb=25, first bucket 1 MiB,
gradient_as_bucket_view=False, no comm hook) also does CPU work around each bucket, on the
training thread:

  - copy-in: when a parameter's gradient is ready (its autograd hook), the gradient is copied
    into its slot of the bucket's flat buffer, divided by the world size on the way
    (at::mul_out(bucket_view, grad, 1 / world));
  - the bucket's all-reduce starts when its last gradient is in (async, gloo threads);
  - copy-out: at the end of backward the reducer waits for every bucket, then copies each
    bucket slot back into its parameter's .grad (grad.copy_(bucket_view)); the optimizer runs
    after that.

Buckets: from the second iteration on DDP rebuilds them in the order gradients became ready
(Reducer::rebuild_buckets): the first closes at >= 1 MiB, the others at >= 25 MiB.

This script rewrites an orrery-model file (and its ATen-calls file, so the new ops are profiled
like the others) with those ops: one copy-in op per gradient after the op that produced it, the
last copy-in of each bucket carrying the bucket's gradient elements (so Orrery all-reduces
exactly DDP's buckets when the scenario's strategy bucket is 1 byte), one copy-out op per
parameter after every bucket, and each optimizer update after its copy-out. The broadcast of
module buffers at each forward (broadcast_buffers=True) is not represented.

    /usr/bin/python3 scripts/validate_ddp.py m.model.json m.calls.pt -o m-ddp.model.json \
        --calls-out m-ddp.calls.pt [--world 2]
"""

import argparse
import json
import sys

FIRST_BUCKET = 1 << 20  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
BUCKET_CAP = 25 << 20   # DistributedDataParallel(bucket_cap_mb=25)


def _contiguous(shape):
    stride, acc = [], 1
    for d in reversed(shape):
        stride.append(acc)
        acc *= d
    return list(reversed(stride))


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _spec(shape, storage, offset, reuse, ref=None):
    """A tensor spec as export_pytorch_graph.py --calls writes them (fp32). A bucket slot is
    described as a tensor of its own: the profiler needs its layout, not the whole bucket."""
    return {"__tensor__": True, "shape": list(shape), "stride": _contiguous(shape),
            "offset": offset, "storage": storage, "dtype": {"__torch__": "float32"},
            "ref": ref, "values": None, "reuse": reuse}


def ddp_graph(graph, records, world=2, first_bucket=FIRST_BUCKET, cap=BUCKET_CAP,
              footprint=0):
    """(ops, records) of the DDP step: `graph` an orrery-model dict, `records` the ATen-call
    records parallel to its ops (or None)."""
    ops = graph["ops"]
    by_name = {op["name"]: i for i, op in enumerate(ops)}
    # Each parameter: the op producing its gradient, and its update op (and shape).
    params = []
    for i, op in enumerate(ops):
        if op.get("phase") == "optimizer":
            src = by_name.get(op.get("deps", [None])[0]) if op.get("deps") else None
            if src is not None and ops[src].get("grads", 0) > 0:
                params.append({"update": i, "grad_op": src, "shape": op["inputs"][0]})
    params.sort(key=lambda p: p["grad_op"])  # ready order: the order backward produces them
    # DDP's rebuilt buckets.
    buckets, filled, limit = [[]], 0, first_bucket
    for p in params:
        buckets[-1].append(p)
        filled += 4 * _numel(p["shape"])
        if filled >= limit:
            buckets.append([])
            filled, limit = 0, cap
    if not buckets[-1]:
        buckets.pop()

    new_ops, new_recs = [], []
    after = {}  # original op index -> ops to insert right after it
    closers = []
    for b, bucket in enumerate(buckets):
        size = sum(_numel(p["shape"]) for p in bucket)
        offset = 0
        prev = None
        for k, p in enumerate(bucket):
            n = _numel(p["shape"])
            g = ops[p["grad_op"]]
            name = "%s/ddp.copy_in" % ops[p["update"]]["name"].split(":", 1)[1]
            op = {"name": name, "type": "mul", "phase": "backward", "layer": g.get("layer", ""),
                  "inputs": [p["shape"], []], "output": p["shape"],
                  "deps": [g["name"]] + ([prev] if prev else [])}
            if k == len(bucket) - 1:
                op["grads"] = size
            rec = {"name": name, "type": "mul", "dtype": "fp32", "inputs": op["inputs"],
                   "output": op["output"], "attrs": {}, "phase": "backward", "calls": [{
                       "func": "aten.mul.out",
                       "args": (_spec(p["shape"], n, 0, 0), _spec([], 1, 0, 0)),
                       "kwargs": {"out": _spec(p["shape"], n, 0, footprint)}}]}
            after.setdefault(p["grad_op"], []).append((op, rec))
            p["bucket"], p["offset"], p["bucket_size"] = b, offset, size
            offset += n
            prev = name
        closers.append(prev)
    copy_out = []
    for p in params:
        name = "%s/ddp.copy_out" % ops[p["update"]]["name"].split(":", 1)[1]
        op = {"name": name, "type": "memcpy", "phase": "optimizer",
              "layer": ops[p["update"]].get("layer", ""), "inputs": [p["shape"]],
              "output": p["shape"], "deps": list(closers)}
        reuse = 4 * p["bucket_size"]
        rec = {"name": name, "type": "memcpy", "dtype": "fp32", "inputs": op["inputs"],
               "output": op["output"], "attrs": {}, "phase": "optimizer", "calls": [{
                   "func": "aten.copy_.default",
                   "args": (_spec(p["shape"], _numel(p["shape"]), 0, reuse),
                            _spec(p["shape"], _numel(p["shape"]), 0, reuse)),
                   "kwargs": {}}]}
        copy_out.append((p["update"], op, rec))
    out_of = {u: op["name"] for u, op, _ in copy_out}
    first_update = min((p["update"] for p in params), default=len(ops))
    for i, op in enumerate(ops):
        if i == first_update:
            for _, cop, crec in copy_out:
                new_ops.append(cop)
                new_recs.append(crec)
        op = dict(op)
        if op.get("grads"):
            op["grads"] = 0  # the bucket's closing copy-in carries them
        if i in out_of:
            op["deps"] = list(op.get("deps", [])) + [out_of[i]]
        new_ops.append(op)
        new_recs.append(records[i] if records is not None else None)
        for extra, rec in after.get(i, []):
            new_ops.append(extra)
            new_recs.append(rec)
    return new_ops, new_recs, buckets


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", help="orrery-model JSON of one replica")
    ap.add_argument("calls", nargs="?", help="its ATen-calls file (export_pytorch_graph --calls)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--calls-out", help="ATen-calls file of the DDP graph")
    ap.add_argument("--world", type=int, default=2)
    a = ap.parse_args(argv)
    with open(a.graph) as f:
        graph = json.load(f)
    data = None
    if a.calls:
        import aten_calls_file
        try:
            data = aten_calls_file.load(a.calls)  # never unpickles code (weights_only=True)
        except (OSError, ValueError) as e:
            sys.exit(f"validate_ddp.py: {e}")
    ops, recs, buckets = ddp_graph(graph, data["ops"] if data else None, a.world,
                                   footprint=data.get("footprint", 0) if data else 0)
    graph = dict(graph)
    graph["ops"] = ops
    graph["name"] = graph["name"] + "-ddp"
    hyper = dict(graph.get("hyper", {}))
    hyper["ddp"] = "world %d, %d buckets (first >= 1 MiB, then >= 25 MiB)" % (a.world,
                                                                            len(buckets))
    graph["hyper"] = hyper
    with open(a.output, "w") as f:
        head = {k: v for k, v in graph.items() if k != "ops"}
        text = json.dumps(head)[:-1] + ', "ops": [\n    ' + ",\n    ".join(
            json.dumps(op) for op in ops) + "\n  ]}\n"
        f.write(text)
    if a.calls_out and data is not None:
        import aten_calls_file
        out = dict(data)
        out["ops"] = recs
        out["model"] = graph["name"]
        aten_calls_file.save(a.calls_out, out)
    print("%s: %d ops, %d DDP buckets of %s elements" % (
        a.output, len(ops), len(buckets),
        "/".join(str(sum(_numel(p["shape"]) for p in b)) for b in buckets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
