#!/usr/bin/python3
"""Writes the hostile-input corpus: tests/hostile/cases/<id>/ and tests/hostile/manifest.tsv.

Every case is one orrery command on one damaged or absurd input. tests/hostile_input_test.cc
runs each in a fresh directory holding a copy of its case folder and asserts: exit status 2,
"error:" and the expected words (the file, the key or item) in the message, no signal, done
within 10 s, and no new result file. The corpus is generated, deterministic, and committed:

    /usr/bin/python3 tests/hostile/make_corpus.py --orrery build/orrery

(--orrery makes the result-HDF5 cases from a real run; without it they are left as they are.)

Manifest columns, tab-separated: id, arguments (split on spaces; run in the case's copy),
expected substrings separated by '|'.
"""
import argparse
import json
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
rows = []


def case(cid, files, args, expect):
    """files: {name: str|bytes}. expect: list of substrings the error must contain."""
    d = os.path.join(CASES, cid)
    os.makedirs(d, exist_ok=True)
    if not files:
        files = {".keep": ""}  # git keeps no empty folder, and the test copies the case's folder
    for name, content in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(os.path.join(d, name), mode) as f:
            f.write(content)
    rows.append((cid, args, "|".join(expect)))


BASE = """name: hostile
platform:
  preset: pcie-server
  server:
    gpus: 2
workload:
  type: synthetic-dp
  layers: 4
  forward_time: 1ms
  backward_factor: 2
  gradient_bytes: 4MB
  update_time: 200us
  input_bytes: 1MB
"""

# Keys of the base scenario and the values that must be refused there.
NUMERIC_KEYS = {
    "workload.layers": "layers",
    "workload.forward_time": "forward_time",
    "workload.backward_factor": "backward_factor",
    "workload.gradient_bytes": "gradient_bytes",
    "workload.update_time": "update_time",
    "workload.input_bytes": "input_bytes",
    "platform.server.gpus": "gpus",
}
BAD_VALUES = {
    "neg": "-1", "huge": "4294967297", "e300": "1e300", "tiny": "1e-300", "nan": ".nan",
    "inf": ".inf", "text": "fast", "list": "[1, 2]", "map": "{a: 1}", "bool": "true",
    "unitless": "25", "badunit": "3 parsecs", "negunit": "-5ms", "e300unit": "1e300GB",
}


def set_key(text, dotted, value):
    """Replaces (or adds) the value of a key of BASE-like text, by its dotted path."""
    lines = text.split("\n")
    parts = dotted.split(".")
    leaf = parts[-1]
    indent = "  " * (len(parts) - 1)
    for i, l in enumerate(lines):
        if l.startswith(indent + leaf + ":"):
            lines[i] = indent + leaf + ": " + value
            return "\n".join(lines)
    raise KeyError(dotted)


def scenario_cases():
    # Bad values for every numeric key, under validate and run.
    for key, leaf in NUMERIC_KEYS.items():
        for vname, v in BAD_VALUES.items():
            if vname in ("unitless",) and leaf in ("layers", "backward_factor", "gpus"):
                continue  # plain numbers are right there
            if vname == "tiny" and leaf == "backward_factor":
                continue  # a backward pass of almost no time is odd, not wrong
            if vname == "huge" and leaf not in ("layers", "gpus"):
                v = "4294967297s" if "time" in leaf else "4294967297"
            text = set_key(BASE, key, v)
            for cmd in ("validate", "run"):
                case(f"yaml-{leaf}-{vname}-{cmd}", {"s.yaml": text}, f"{cmd} s.yaml", ["s.yaml", leaf])
    # Duplicate keys at every level.
    dups = {
        "top": BASE + "name: again\n",
        "platform": BASE.replace("  preset: pcie-server\n", "  preset: pcie-server\n  preset: dgx-a100\n"),
        "server": BASE.replace("    gpus: 2\n", "    gpus: 2\n    gpus: 4\n"),
        "workload": BASE + "  layers: 8\n".replace("  layers", "  layers"),
    }
    dups["workload"] = BASE.replace("  layers: 4\n", "  layers: 4\n  layers: 8\n")
    for n, t in dups.items():
        for cmd in ("validate", "run"):
            case(f"yaml-dup-{n}-{cmd}", {"s.yaml": t}, f"{cmd} s.yaml", ["s.yaml", "duplicate key"])
    # Unknown (misspelt) keys at every level.
    typos = {
        "top": ("workload:", "wrokload: {}\nworkload:", "wrokload"),
        "platform": ("  preset:", "  prest: x\n  preset:", "prest"),
        "server": ("    gpus: 2", "    gpus: 2\n    gpu_count: 2", "gpu_count"),
        "workload": ("  layers: 4", "  layers: 4\n  layres: 4", "layres"),
        "output": ("name: hostile", "name: hostile\noutput: {fiel: x.h5}", "fiel"),
    }
    for n, (a, b, word) in typos.items():
        case(f"yaml-unknown-{n}", {"s.yaml": BASE.replace(a, b, 1)}, "validate s.yaml", ["s.yaml", word])
    # Structure and syntax.
    shapes = {
        "empty": ("", ["s.yaml"]),
        "comments": ("# nothing\n", ["s.yaml"]),
        "list-top": ("- a\n- b\n", ["s.yaml"]),
        "scalar-top": ("hello\n", ["s.yaml"]),
        "tabs": ("name:\tx\n\tplatform: 1\n", ["s.yaml"]),
        "unclosed-flow": ("platform: {preset: pcie-server\n", ["s.yaml"]),
        "unclosed-quote": ('name: "abc\n', ["s.yaml"]),
        "bad-indent": ("platform:\n  preset: x\n preset: y\n", ["s.yaml"]),
        "deep-flow": ("name: " + "[" * 100000 + "]" * 100000 + "\n", ["s.yaml"]),
        "deep-block": ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 600)), ["s.yaml"]),
        "anchor-bomb": ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
                        ["s.yaml"]),
        "platform-scalar": ("platform: 7\nworkload: {type: synthetic-dp}\n", ["s.yaml", "platform"]),
        "workload-list": ("platform: {preset: pcie-server}\nworkload: [1, 2]\n", ["s.yaml", "workload"]),
        "no-platform": ("workload: {type: synthetic-dp}\n", ["s.yaml", "platform"]),
        "no-workload": ("platform: {preset: pcie-server}\n", ["s.yaml", "workload"]),
        "binary": (None, ["s.yaml"]),
        "nul-bytes": (None, ["s.yaml"]),
        "key-map": ("{a: 1}: 2\nplatform: {preset: pcie-server}\nworkload: {type: synthetic-dp}\n", ["s.yaml"]),
    }
    rnd = random.Random(15)
    for n, (t, exp) in shapes.items():
        if n == "binary":
            t = bytes(rnd.randrange(256) for _ in range(600))
        elif n == "nul-bytes":
            t = BASE.encode().replace(b"layers: 4", b"layers: \x004")
        case(f"yaml-shape-{n}", {"s.yaml": t}, "validate s.yaml", exp)
    # Truncations of a valid scenario at every line boundary that leaves it invalid.
    lines = BASE.split("\n")
    for k in (1, 2, 3, 5):
        case(f"yaml-truncated-{k}", {"s.yaml": "\n".join(lines[:k]) + "\n"}, "validate s.yaml", ["s.yaml"])
    # Inputs that are not regular files, and paths that do not exist.
    case("input-dev-zero", {"keep.txt": ""}, "validate /dev/zero", ["/dev/zero", "character device"])
    case("input-dev-null", {"keep.txt": ""}, "validate /dev/null", ["/dev/null"])
    case("input-directory", {"keep.txt": ""}, "validate .", ["directory"])
    case("input-missing", {"keep.txt": ""}, "validate nowhere.yaml", ["nowhere.yaml"])
    case("run-dev-urandom", {"keep.txt": ""}, "run /dev/urandom", ["/dev/urandom"])
    # Names that do not exist, with a hint.
    names = {
        "preset": (BASE.replace("pcie-server", "pcie-sever"), ["pcie-sever", "did you mean"]),
        "type": (BASE.replace("synthetic-dp", "synthetic-pd"), ["s.yaml", "synthetic-pd"]),
        "model": ("platform: {preset: dgx-a100, servers: 1}\nworkload: {type: model, model: resnt50, batch: 8}\n"
                  "strategy: {type: allreduce, gpus: 2}\n", ["resnt50", "did you mean"]),
        "device": ("platform: {preset: dgx-a100, servers: 1}\ndevice: A100-SXM4-80G\n"
                   "workload: {type: model, model: resnet50, batch: 8}\nstrategy: {type: allreduce, gpus: 2}\n",
                   ["A100-SXM4-80G", "did you mean"]),
        "strategy": ("platform: {preset: dgx-a100, servers: 1}\nworkload: {type: model, model: resnet50, batch: 8}\n"
                     "strategy: {type: alreduce, gpus: 2}\n", ["s.yaml", "alreduce"]),
    }
    for n, (t, exp) in names.items():
        case(f"yaml-name-{n}", {"s.yaml": t}, "validate s.yaml", exp)
    # Keys of host all-reduce and of the parameter server's RPC stack.
    dp = ("platform: {preset: ethernet-cluster, servers: 2, server: {gpus: 2}}\n"
          "workload: {type: model, model: resnet50, batch: 8}\nstrategy: {type: allreduce, KEY}\n")
    ps = ("platform: {preset: ethernet-cluster, servers: 2, server: {gpus: 2}}\n"
          "workload: {type: model, model: resnet50, batch: 8}\n"
          "strategy: {type: ps_worker, ps: {placement: colocated, KEY}}\n")
    keys = {
        "allreduce-on-cpu": (dp, "allreduce_on: cpu", "strategy.allreduce_on"),
        "allreduce-on-list": (dp, "allreduce_on: [gpu]", "strategy.allreduce_on"),
        "host-stream-neg": (dp, "host_stream_bandwidth: -1GB/s", "strategy.host_stream_bandwidth"),
        "host-stream-unitless": (dp, "host_stream_bandwidth: 5", "strategy.host_stream_bandwidth"),
        "host-stream-huge": (dp, "host_stream_bandwidth: 1e300GB/s", "strategy.host_stream_bandwidth"),
        "rpc-bandwidth-neg": (ps, "rpc_bandwidth: -1GB/s", "strategy.ps.rpc_bandwidth"),
        "rpc-bandwidth-text": (ps, "rpc_bandwidth: fast", "strategy.ps.rpc_bandwidth"),
        "rpc-bandwidth-unitless": (ps, "rpc_bandwidth: 9", "strategy.ps.rpc_bandwidth"),
    }
    for n, (t, kv, key) in keys.items():
        case(f"yaml-key-{n}", {"s.yaml": t.replace("KEY", kv)}, "validate s.yaml", ["s.yaml", key])
    # Model workloads with absurd sizes.
    model = ("platform: {preset: dgx-a100, servers: 1}\nworkload: {type: model, model: MODEL, batch: BATCH}\n"
             "strategy: {type: allreduce, gpus: 2}\n")
    for m in ("resnet50", "bert_base", "gpt2", "vgg16", "lstm_lm", "dlrm_default"):
        for bname, b in (("neg", "-8"), ("zero", "0"), ("huge", "1000000000000"), ("wrap", "4294967297"),
                         ("float", "8.5"), ("text", "many")):
            t = model.replace("MODEL", m).replace("BATCH", b)
            case(f"model-{m}-batch-{bname}", {"s.yaml": t}, "validate s.yaml", ["s.yaml", "batch"])
    # Platform keys with absurd values.
    plat = {
        "gpus-billion": ("platform:\n  preset: pcie-server\n  server: {gpus: 1000000000}\n", "gpus"),
        "servers-10m": ("platform:\n  preset: dgx-a100\n  servers: 10000000\n", "servers"),
        "servers-zero": ("platform:\n  preset: dgx-a100\n  servers: 0\n", "servers"),
        "servers-neg": ("platform:\n  preset: dgx-a100\n  servers: -2\n", "servers"),
        "pcie-tiny": ("platform:\n  preset: pcie-server\n  server: {pcie: {bandwidth: 1e-300Bps}}\n", "bandwidth"),
        "pcie-unitless": ("platform:\n  preset: pcie-server\n  server: {pcie: {bandwidth: 25}}\n", "bandwidth"),
        "pcie-zero": ("platform:\n  preset: pcie-server\n  server: {pcie: {bandwidth: 0}}\n", "bandwidth"),
        "pcie-neg": ("platform:\n  preset: pcie-server\n  server: {pcie: {bandwidth: -5GBps}}\n", "bandwidth"),
        "pcie-huge": ("platform:\n  preset: pcie-server\n  server: {pcie: {bandwidth: 1e300GBps}}\n", "bandwidth"),
        "nic-tiny": ("platform:\n  preset: pcie-server\n  server: {nic: {bandwidth: 1e-300Bps}}\n", "bandwidth"),
        "nic-count-huge": ("platform:\n  preset: pcie-server\n  server: {nic: {count: 4294967297}}\n", "count"),
        "pcie-latency-huge": ("platform:\n  preset: pcie-server\n  server: {pcie: {latency: 1e300s}}\n", "latency"),
        "pcie-latency-neg": ("platform:\n  preset: pcie-server\n  server: {pcie: {latency: -1us}}\n", "latency"),
        "gpu-flops-tiny": ("platform:\n  preset: pcie-server\n  server: {gpu: {flops: 1e-300flops}}\n", "flops"),
        "gpu-flops-unitless": ("platform:\n  preset: pcie-server\n  server: {gpu: {flops: 15}}\n", "flops"),
        "nvlink-topology": ("platform:\n  preset: dgx-a100\n  server: {nvlink: {topology: hypercube}}\n", "topology"),
        "fabric-kind": ("platform:\n  preset: dgx-a100\n  fabric: {kind: carrier-pigeon}\n", "kind"),
        "preset-list": ("platform:\n  preset: [a, b]\n", "preset"),
    }
    wl = "workload: {type: synthetic-dp, layers: 2}\n"
    for n, (t, word) in plat.items():
        for cmd in ("validate", "run"):
            case(f"platform-{n}-{cmd}", {"s.yaml": t + wl}, f"{cmd} s.yaml", ["s.yaml", word])
    # Output paths that cannot be written, or must not be replaced.
    out = {
        "under-file": ("output: {file: s.yaml/x.h5}\n", ["s.yaml/x.h5"]),
        "is-dir": ("output: {file: sub}\n", ["sub"]),
        "dev-null": ("output: {file: /dev/null}\n", ["/dev/null"]),
        "foreign": ("output: {file: notes.h5}\n", ["notes.h5", "--force"]),
        "trace-foreign": ("output: {trace: notes.json}\n", ["notes.json", "--force"]),
        "timeline-text": ("output: {timeline: sometimes}\n", ["s.yaml", "timeline"]),
    }
    for n, (o, exp) in out.items():
        files = {"s.yaml": BASE + o, "notes.h5": "my notes\n", "notes.json": "{\"mine\": 1}\n"}
        if n == "is-dir":
            files["sub/keep.txt"] = ""
        case(f"output-{n}", files, "run s.yaml -q", exp)
    # --set values go through the same checks.
    sets = {
        "unitless": ("workload.gradient_bytes=4", "gradient_bytes"),
        "huge-int": ("workload.layers=4294967297", "layers"),
        "unknown": ("workload.layrs=3", "layrs"),
        "through-value": ("workload.layers.x=3", "layers"),
        "no-equals": ("workload.layers", "workload.layers"),
        "empty-key": ("workload..layers=3", "workload..layers"),
        "bad-yaml": ("name=[unclosed", "name"),
        "deep-yaml": ("name=" + "[" * 50000, "name"),
    }
    for n, (s, word) in sets.items():
        case(f"set-{n}", {"s.yaml": BASE}, f"validate s.yaml --set {s}", [word])


SWEEP_BASE = BASE + "output: {file: sweep.h5}\nsweep:\n"


def sweep_cases():
    sw = {
        "unknown-key": "  grid:\n    workload.layrs: [1, 2]\n",
        "unknown-section": "  gird:\n    workload.layers: [1, 2]\n",
        "scalar-values": "  grid:\n    workload.layers: 3\n",
        "empty-list": "  grid:\n    workload.layers: []\n",
        "zip-unequal": "  zip:\n    - {workload.layers: [1, 2], platform.server.gpus: [1, 2, 3]}\n",
        "two-axes-one-key": "  grid:\n    workload.layers: [1, 2]\n  zip:\n    - {workload.layers: [3, 4]}\n",
        "through-value": "  grid:\n    workload.layers.deep: [1, 2]\n",
        "empty-path": "  grid:\n    workload..layers: [1, 2]\n",
        "too-many-points": "  grid:\n" + "".join(
            f"    {k}: [{', '.join(str(i + 1) for i in range(200))}]\n"
            for k in ("workload.layers", "platform.server.gpus", "workload.backward_factor", "name")),
        "derived-deep": "  derived:\n    workload.layers: \"" + "(" * 100000 + "1" + ")" * 100000 + " + ${workload.layers}\"\n",
        "derived-deep-minus": "  derived:\n    workload.layers: \"${workload.layers} * " + "-" * 100000 + "1\"\n",
        "derived-div0": "  derived:\n    workload.layers: \"${workload.layers} / 0\"\n",
        "derived-unknown": "  derived:\n    workload.layers: \"${workload.nothing} * 2\"\n",
        "derived-unterminated": "  derived:\n    workload.layers: \"${workload.layers * 2\"\n",
        "derived-empty-ref": "  derived:\n    workload.layers: \"${} * 2\"\n",
        "derived-overflow": "  derived:\n    workload.layers: \"${workload.layers} * 1e308 * 1e308\"\n",
        "derived-huge-exp": "  derived:\n    workload.layers: \"${workload.layers} * 1e99999\"\n",
        "derived-wraps": "  derived:\n    workload.layers: \"${workload.layers} * 1073741824\"\n",
        "derived-list": "  derived:\n    workload.layers: [1, 2]\n",
        "named-scalar": "  named:\n    gpu: 7\n",
        "named-label-scalar": "  named:\n    gpu: {V100: 7}\n",
        "one-at-a-time-unknown": "  one_at_a_time:\n    workload.layres: [1, 2]\n",
        "grid-unitless": "  grid:\n    workload.gradient_bytes: [1, 2]\n",
        "grid-huge": "  grid:\n    workload.layers: [4294967297, 2]\n",
        "grid-e300": "  grid:\n    workload.forward_time: [1e300s, 1ms]\n",
        "sweep-scalar": "  7\n",
        "dup-axis-key": "  grid:\n    workload.layers: [1, 2]\n    workload.layers: [3, 4]\n",
    }
    for n, body in sw.items():
        text = SWEEP_BASE + body
        if n == "sweep-scalar":
            text = BASE + "output: {file: sweep.h5}\nsweep: 7\n"
        case(f"sweep-{n}-dry", {"s.yaml": text}, "sweep --dry-run s.yaml", ["s.yaml"])
        case(f"sweep-{n}-run", {"s.yaml": text}, "sweep -q s.yaml", ["s.yaml"])
    plan = BASE + "sweep:\n  grid:\n    platform.server.gpus: [1, 2]\nplan:\n"
    plans = {
        "no-target": "  prices: {server: 1, gpu: 1}\n",
        "target-text": "  target: {samples_per_s: lots}\n  prices: {server: 1, gpu: 1}\n",
        "target-neg": "  target: {samples_per_s: -5}\n  prices: {server: 1, gpu: 1}\n",
        "price-missing": "  target: {iterations_per_s: 1}\n  prices: {server: 1}\n",
        "samples-deep": "  target: {samples_per_s: 1}\n  samples_per_iteration: \"" + "(" * 5000 + "2" + ")" * 5000 + " * ${gpus}\"\n  prices: {server: 1, gpu: 1}\n",
        "unknown-key": "  target: {iterations_per_s: 1}\n  prices: {server: 1, gpu: 1}\n  budget: 3\n",
    }
    for n, body in plans.items():
        case(f"plan-{n}", {"s.yaml": plan + body}, "plan --dry-run s.yaml", ["s.yaml"])


GRAPH = {
    "format": "orrery-graph", "version": 1,
    "devices": [{"name": "gpu0", "host": "n0_gpu0", "launch_host": "n0_cpu0"},
                {"name": "gpu1", "host": "n0_gpu1", "launch_host": "n0_cpu0"}],
    "ops": [
        {"name": "fwd0", "device": "gpu0", "duration": 0.001, "phase": "forward"},
        {"name": "fwd1", "device": "gpu0", "flops": 2.0e9, "bytes": 1.0e6, "deps": ["fwd0"]},
        {"name": "send", "device": "gpu0", "stream": "comm", "kind": "transfer", "dst": "gpu1",
         "bytes": 4.0e6, "deps": ["fwd1"]},
        {"name": "bwd1", "device": "gpu1", "stream": "compute", "duration": 0.002, "phase": "backward",
         "deps": ["send"]},
        {"name": "ar", "device": "gpu0", "kind": "collective", "collective": "allreduce",
         "ranks": ["gpu0", "gpu1"], "bytes": 1.0e6, "deps": ["bwd1"]},
    ],
}
GRAPH_SCENARIO = "platform: {preset: pcie-server, server: {gpus: 2}}\nworkload: {type: graph, file: g.json}\n"


def graph_cases():
    def mutate(fn):
        g = json.loads(json.dumps(GRAPH))
        fn(g)
        return json.dumps(g, indent=1)

    op_fields = {
        "duration": ["-1", "1e300", "null", "\"1ms\"", "[]", "1e400"],
        "flops": ["-5", "1e300", "\"many\"", "{}"],
        "bytes": ["-1", "1e300", "true", "1e400"],
        "deps": ["\"fwd0\"", "[\"nothing\"]", "[1]", "[\"fwd1\"]"],
        "device": ["\"gpu9\"", "7", "null"],
        "phase": ["3", "[]"],  # a free label, but text
        "stream": ["\"river\"", "[]"],
        "kind": ["\"magic\"", "0"],
        "name": ["\"fwd0\"", "\"\"", "5"],
    }
    for field, values in op_fields.items():
        for i, v in enumerate(values):
            idx = 1 if field != "name" else 2
            def fn(g, field=field, v=v, idx=idx):
                g["ops"][idx][field] = json.loads(v) if not v.startswith("1e4") else "__RAW__"
            text = mutate(fn).replace('"__RAW__"', v)
            case(f"graph-op-{field}-{i}", {"g.json": text, "s.yaml": GRAPH_SCENARIO}, "validate s.yaml", ["g.json"])
    transfer = {
        "dst-unknown": lambda g: g["ops"][2].update(dst="gpu7"),
        "dst-self": lambda g: g["ops"][2].update(dst="gpu0"),
        "bytes-missing": lambda g: g["ops"][2].pop("bytes"),
        "bytes-tiny-neg": lambda g: g["ops"][2].update(bytes=-1e-300),
        "transfer-max-rate-neg": lambda g: g["ops"][2].update(max_rate=-1),
        "transfer-max-rate-text": lambda g: g["ops"][2].update(max_rate="fast"),
        "transfer-max-rate-tiny": lambda g: g["ops"][2].update(max_rate=1e-9),
        "compute-max-rate": lambda g: g["ops"][1].update(max_rate=1e9),
        "coll-max-rate-neg": lambda g: g["ops"][4].update(max_rate=-5),
        "coll-max-rate-huge": lambda g: g["ops"][4].update(max_rate=1e300),
        "coll-unknown": lambda g: g["ops"][4].update(collective="allsum"),
        "coll-algo": lambda g: g["ops"][4].update(algo="teleport"),
        "coll-ranks-empty": lambda g: g["ops"][4].update(ranks=[]),
        "coll-ranks-unknown": lambda g: g["ops"][4].update(ranks=["gpu0", "gpu5"]),
        "coll-ranks-dup": lambda g: g["ops"][4].update(ranks=["gpu0", "gpu0"]),
        "coll-ranks-scalar": lambda g: g["ops"][4].update(ranks="gpu0"),
        "cycle": lambda g: g["ops"][0].update(deps=["bwd1"]),
        "self-dep": lambda g: g["ops"][0].update(deps=["fwd0"]),
        "format": lambda g: g.update(format="orrery-graaf"),
        "version": lambda g: g.update(version=99),
        "version-text": lambda g: g.update(version="1"),
        "no-ops": lambda g: g.pop("ops"),
        "ops-object": lambda g: g.update(ops={}),
        "no-devices": lambda g: g.pop("devices"),
        "device-dup": lambda g: g["devices"].append(dict(g["devices"][0])),
        "device-host-unknown": None,  # named by the scenario check, below
        "device-extra-key": lambda g: g["devices"][0].update(colour="red"),
        "op-extra-key": lambda g: g["ops"][0].update(duratoin=1),
        "top-extra-key": lambda g: g.update(comment=1),
        "op-not-object": lambda g: g["ops"].append(7),
        "devices-not-list": lambda g: g.update(devices="gpu0"),
        "mirrors-unknown": lambda g: g["devices"][0].update(mirrors=["gpu7"]),
        "mirrors-text": lambda g: g["devices"][0].update(mirrors="gpu1"),
        "mirrors-number": lambda g: g["devices"][0].update(mirrors=[1]),
        "mirrors-self": lambda g: g["devices"][0].update(mirrors=["gpu0"]),
        "mirror-runs-ops": lambda g: g["devices"][0].update(mirrors=["gpu1"]),
        "mirrors-each-other": lambda g: (g["devices"][0].update(mirrors=["gpu1"]),
                                         g["devices"][1].update(mirrors=["gpu0"])),
    }
    for n, fn in transfer.items():
        if fn is None:
            continue
        case(f"graph-{n}", {"g.json": mutate(fn), "s.yaml": GRAPH_SCENARIO}, "validate s.yaml", ["g.json"])
    good = json.dumps(GRAPH, indent=1)
    raw = {
        "empty": "",
        "null": "null",
        "array": "[]",
        "string": "\"orrery\"",
        "deep-array": "[" * 100000 + "]" * 100000,
        "deep-object": "{\"a\":" * 20000 + "1" + "}" * 20000,
        "trailing": good + " garbage",
        "nan": good.replace("0.001", "NaN"),
        "bad-utf8": None,
        "comments": "// c\n" + good,
        "single-quotes": good.replace('"', "'"),
        "dup-keys": good.replace('"version": 1', '"version": 1, "version": 1'),
    }
    for n, t in raw.items():
        if n == "bad-utf8":
            t = good.encode().replace(b"fwd0", b"fw\xff\xfe", 1)
        case(f"graph-raw-{n}", {"g.json": t, "s.yaml": GRAPH_SCENARIO}, "validate s.yaml", ["g.json"])
    for k in (1, 10, 50, 100, 200, 400, len(good) - 2):
        case(f"graph-truncated-{k}", {"g.json": good[:k], "s.yaml": GRAPH_SCENARIO}, "validate s.yaml", ["g.json"])
    rnd = random.Random(7)
    for i in range(20):
        b = bytearray(good.encode())
        for _ in range(3):
            b[rnd.randrange(len(b))] = rnd.choice(b'{}[]:,"\\0x\x00\xff')
        data = bytes(b)
        if data == good.encode():
            continue
        # A flip may leave valid JSON; keep only those the reader must refuse.
        try:
            json.loads(data.decode())
            continue
        except Exception:
            pass
        case(f"graph-flip-{i}", {"g.json": data, "s.yaml": GRAPH_SCENARIO}, "validate s.yaml", ["g.json"])
    # The same files through `workload show`.
    text = mutate(lambda g: g["devices"][1].update(host="n9_gpu0"))
    case("graph-device-host-unknown", {"g.json": text, "s.yaml": GRAPH_SCENARIO}, "validate s.yaml",
         ["gpu1", "n9_gpu0"])
    for n in ("empty", "deep-array", "trailing", "nan"):
        t = raw[n]
        case(f"graph-show-{n}", {"g.json": t}, "workload show g.json", ["g.json"])


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, wt, payload):
    key = varint((num << 3) | wt)
    if wt == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def attr(name, num, value):
    body = field(1, 2, name.encode())
    if isinstance(value, bytes):
        body += field(num, 2, value)
    else:
        body += field(num, 0, value)
    return field(10, 2, body)


def node(nid, name, ntype, attrs, deps=()):
    b = field(1, 0, nid) + field(2, 2, name.encode()) + field(3, 0, ntype)
    if deps:
        b += field(5, 2, b"".join(varint(d) for d in deps))
    for a in attrs:
        b += a
    return b


def delimited(msgs):
    return b"".join(varint(len(m)) + m for m in msgs)


ORRERY = None


def accepted(args, files):
    """True when the binary accepts these files (exit 0): a random flip that leaves a valid file.
    Without --orrery every flip is kept."""
    if not ORRERY:
        return False
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for name, content in files.items():
            with open(os.path.join(d, name), "wb" if isinstance(content, bytes) else "w") as f:
                f.write(content)
        r = subprocess.run([ORRERY] + args, cwd=d, capture_output=True, timeout=30)
        return r.returncode == 0


def chakra_trace(rank, npus):
    meta = field(1, 2, b"0.0.4")
    comp = node(1, "comp", 4, [attr("num_ops", 9, 1000000), attr("tensor_size", 13, 4096),
                              attr("is_cpu_op", 27, 0)])
    coll = node(2, "allreduce", 7, [attr("comm_type", 9, 0), attr("comm_size", 9, 1048576),
                                    attr("is_cpu_op", 27, 0)], deps=(1,))
    return delimited([meta, comp, coll])


def chakra_cases():
    good = chakra_trace(0, 2)
    scen = ("platform: {preset: pcie-server, server: {gpus: 2}}\n"
            "workload: {type: chakra, files: [t]}\n")
    both = {"t.0.et": good, "t.1.et": chakra_trace(1, 2)}
    # Damaged rank 1, read through a scenario and through workload show.
    muts = {}
    for k in (1, 2, 5, 10, len(good) // 2, len(good) - 1):
        muts[f"truncated-{k}"] = good[:k]
    muts["huge-length"] = varint(1 << 40) + good
    muts["length-past-end"] = varint(len(good) + 100) + good[1:]
    muts["varint-overlong"] = b"\xff" * 12 + good
    muts["wrong-wire-type"] = good.replace(field(3, 0, 4), field(3, 2, b"\x04"), 1)
    muts["node-type-bad"] = delimited([field(1, 2, b"0.0.4"), node(1, "x", 99, [])])
    muts["dep-unknown"] = delimited([field(1, 2, b"0.0.4"), node(1, "x", 4, [attr("num_ops", 9, 5)], deps=(77,))])
    muts["dep-self"] = delimited([field(1, 2, b"0.0.4"), node(1, "x", 4, [attr("num_ops", 9, 5)], deps=(1,))])
    muts["comm-size-huge"] = delimited([field(1, 2, b"0.0.4"), node(1, "ar", 7, [attr("comm_type", 9, 0),
                                       attr("comm_size", 13, (1 << 64) - 1)])])
    muts["comm-type-bad"] = delimited([field(1, 2, b"0.0.4"), node(1, "ar", 7, [attr("comm_type", 9, 42),
                                      attr("comm_size", 9, 1024)])])
    muts["dup-node-id"] = delimited([field(1, 2, b"0.0.4"), node(1, "a", 4, [attr("num_ops", 9, 5)]),
                                     node(1, "b", 4, [attr("num_ops", 9, 5)])])
    muts["garbage"] = bytes(random.Random(3).randrange(256) for _ in range(300))
    muts["empty"] = b""
    muts["json"] = b'{"this": "is not chakra"}'
    muts["zeros"] = b"\x00" * 64
    rnd = random.Random(11)
    for i in range(12):
        b = bytearray(good)
        p = rnd.randrange(len(b))
        b[p] ^= 1 << rnd.randrange(8)
        muts[f"flip-{i}"] = bytes(b)
    # Wrong only as a workload (ids, types, sizes): `workload show` summarises such a file.
    semantic = {"node-type-bad", "dep-unknown", "dep-self", "comm-size-huge", "comm-type-bad",
                "dup-node-id"}
    for n, data in muts.items():
        files = {"t.0.et": good, "t.1.et": data}
        if n.startswith("flip-") and accepted(["validate", "s.yaml"], dict(files, **{"s.yaml": scen})):
            continue  # the flip left a valid trace: not a hostile input
        case(f"chakra-{n}-scenario", dict(files, **{"s.yaml": scen}), "validate s.yaml", ["t.1.et"])
        if n not in semantic and not (n.startswith("flip-") and accepted(["workload", "show", "t.1.et"], {"t.1.et": data})):
            case(f"chakra-{n}-show", {"t.1.et": data}, "workload show t.1.et", ["t.1.et"])
    # A missing rank file: ranks 0 and 2 of a 3-GPU platform.
    scen3 = scen.replace("gpus: 2", "gpus: 3")
    case("chakra-missing-rank", {"t.0.et": good, "t.2.et": good, "s.yaml": scen3}, "validate s.yaml", ["t.1.et"])
    case("chakra-no-files", {"s.yaml": scen}, "validate s.yaml", ["t.0.et"])
    case("chakra-more-ranks-than-gpus",
         {"t.0.et": good, "t.1.et": good, "t.2.et": good, "s.yaml": scen}, "validate s.yaml", ["t"])
    del both


# The profile CSV as models/profile_csv.cc reads it (docs/cost-models.md, "Contribution format"):
# its header and one row the reader accepts, by column.
PROFILE_COLUMNS = ["op", "dtype", "device", "inputs", "output", "attrs", "time_s", "n", "m", "t_n_s",
                   "t_m_s", "samples", "stdev_s", "source"]
PROFILE_ROW = {"op": "matmul", "dtype": "fp32", "device": "V100-SXM2", "inputs": "64x64;64x64",
               "output": "64x64", "attrs": "", "time_s": "1e-5", "n": "10", "m": "20",
               "t_n_s": "1e-4", "t_m_s": "2e-4", "samples": "5", "stdev_s": "3e-7", "source": "hostile"}


def profile_csv(columns=None, **values):
    """A profile CSV of PROFILE_ROW under the current header, with `values` replacing its cells and
    only `columns` (default: all) kept."""
    columns = columns or PROFILE_COLUMNS
    row = dict(PROFILE_ROW, **values)
    return ("# Orrery op profile\n# device: V100-SXM2\n" + ",".join(columns) + "\n"
            + ",".join(row[c] for c in columns) + "\n")


def profile_cases():
    good = profile_csv()
    if ORRERY:
        # Each case must differ from a file the reader accepts by its one value: a stale header
        # would have every case refused for the header, never reaching the value it is about.
        if not accepted(["profile", "show", "p.csv"], {"p.csv": good}):
            sys.exit("make_corpus.py: the reader refuses the base profile CSV; update "
                     "PROFILE_COLUMNS and PROFILE_ROW to models/profile_csv.cc")
    bad = {
        "empty": ("", "p.csv"),
        "header-only": ("# only a comment\n", "header"),
        "unknown-column": (good.replace("samples", "sampels"), "sampels"),
        "missing-column": (profile_csv([c for c in PROFILE_COLUMNS if c != "time_s"]), "time_s"),
        "seconds-text": (profile_csv(time_s="fast"), "time_s"),
        "seconds-e300": (profile_csv(time_s="1e300"), "time_s"),
        "seconds-tiny": (profile_csv(time_s="1e-300"), "time_s"),
        "n-huge": (profile_csv(n="4294967297", m="4294967298"), "column n"),
        "n-neg": (profile_csv(n="-10"), "column n"),
        "attrs-neg-pad": (profile_csv(attrs="pad_h=-1"), "pad_h"),
        "attrs-zero-stride": (profile_csv(attrs="stride_w=0"), "stride_w"),
        "m-neg": (profile_csv(m="-10"), "column m"),
        "m-not-above-n": (profile_csv(n="20", m="20"), "column m"),
        "samples-neg": (profile_csv(samples="-5"), "column samples"),
        "t_n_s-neg": (profile_csv(t_n_s="-1e-4"), "t_n_s"),
        "t_m_s-e300": (profile_csv(t_m_s="1e300"), "t_m_s"),
        "stdev-neg": (profile_csv(stdev_s="-3e-7"), "stdev_s"),
        "shape-overflow": (profile_csv(inputs="4294967296x4294967296;4294967296x4294967296",
                                       output="4294967296x4294967296"), "inputs"),
        "shape-dim-overflow": (profile_csv(inputs="99999999999999999999x64;64x64"), "inputs"),
        "attrs-overflow": (profile_csv(attrs="pad_h=99999999999999999999"), "pad_h"),
        "seconds-neg": (profile_csv(time_s="-1e-5"), "time_s"),
        "seconds-zero": (profile_csv(time_s="0"), "time_s"),
        "seconds-nan": (profile_csv(time_s="nan"), "time_s"),
        "seconds-inf": (profile_csv(time_s="inf"), "time_s"),
        "seconds-e400": (profile_csv(time_s="1e400"), "time_s"),
        "n-overflow": (profile_csv(n="99999999999999999999"), "column n"),
        "n-text": (profile_csv(n="ten"), "column n"),
        "samples-float": (profile_csv(samples="2.5"), "column samples"),
        "short-row": (good + "matmul,fp32\n", "fields"),
        "long-row": (good + good.split("\n")[-2] + ",extra,extra\n", "fields"),
        "unclosed-quote": (profile_csv(inputs="\"64x64;64x64"), "unterminated"),
        "shapes-deep": (profile_csv(inputs="[" * 50000 + "]" * 50000), "inputs"),
        "shape-neg": (profile_csv(inputs="-64x64;64x64"), "inputs"),
        "op-unknown": (profile_csv(op="matmull"), "matmull"),
        "dtype-bad": (profile_csv(dtype="fp31"), "fp31"),
        "binary": (None, "p.csv"),
    }
    for n, (t, word) in bad.items():
        if t is None:
            t = bytes(random.Random(5).randrange(256) for _ in range(400))
        expect = ["p.csv"] if word == "p.csv" else ["p.csv", word]
        case(f"profile-{n}-show", {"p.csv": t}, "profile show p.csv", expect)
        case(f"profile-{n}-import", {"p.csv": t}, "profile import p.csv -o p.h5", expect)


def hdf5_cases(orrery):
    foreign_json = json.dumps({"runs": [1, 2, 3]})
    base = {"notes.h5": "these are my notes\n", "json.h5": foreign_json, "empty.h5": ""}
    for n, (f, content) in enumerate(base.items()):
        case(f"report-foreign-{f.split('.')[0]}", {f: content}, f"report {f}", [f])
    # h5py-made HDF5 that is not Orrery's.
    try:
        import h5py  # noqa: F401 (Debian's python3-h5py)
        d = os.path.join(CASES, "report-foreign-hdf5")
        os.makedirs(d, exist_ok=True)
        with h5py.File(os.path.join(d, "other.h5"), "w", track_order=True) as h:
            h.create_dataset("runs", data=[1, 2, 3])
            h.attrs["orrery_version"] = 7  # the right name with the wrong type
        rows.append(("report-foreign-hdf5", "report other.h5", "other.h5"))
    except ImportError:
        pass
    if not orrery:
        return
    tmp = os.path.join(HERE, ".make_tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "s.yaml"), "w") as f:
        f.write(BASE)
    subprocess.run([orrery, "run", "s.yaml", "-q", "-o", "r.h5", "--no-timeline"], cwd=tmp, check=True)
    good = open(os.path.join(tmp, "r.h5"), "rb").read()
    shutil.rmtree(tmp)
    rnd = random.Random(9)
    damaged = {}
    for k in (8, 100, 512, 2048, len(good) // 2, len(good) - 100):
        damaged[f"truncated-{k}"] = good[:k]
    for i in range(16):
        b = bytearray(good)
        for _ in range(8):
            p = rnd.randrange(len(b))
            b[p] ^= 0xFF
        damaged[f"flip-{i}"] = bytes(b)
    damaged["zeroed-superblock"] = b"\x89HDF\r\n\x1a\n" + b"\x00" * 64 + good[72:]
    for n, data in damaged.items():
        case(f"report-{n}", {"r.h5": data}, "report r.h5", ["r.h5"])
    # A damaged file where a sweep would resume: refused, never overwritten.
    for n in ("truncated-512", "flip-0", "flip-1"):
        case(f"sweep-resume-{n}", {"r.h5": damaged[n],
             "s.yaml": BASE + "output: {file: r.h5}\nsweep:\n  grid:\n    workload.layers: [1, 2]\n"},
             "sweep -q s.yaml", ["r.h5"])
    # A damaged profile database named by a scenario's cost model.
    for n in ("truncated-2048", "flip-2"):
        case(f"profile-h5-{n}", {"p.h5": damaged[n]}, "profile show p.h5", ["p.h5"])


def xml_cases():
    good = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
            "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n"
            "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
            "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n</zone>\n</platform>\n")
    scen = ("platform: {xml: p.xml, gpus: [a, b]}\n"
            "workload: {type: synthetic-dp, layers: 2}\n")
    bad = {
        "empty": "",
        "truncated": good[: len(good) // 2],
        "not-xml": "platform: yes\n",
        "unclosed-tag": good.replace("</zone>", ""),
        "unknown-element": good.replace("<host id=\"b\"", "<hots id=\"b\""),
        "speed-text": good.replace("1Gf\"/>\n<host id=\"b\"", "fast\"/>\n<host id=\"b\""),
        "speed-neg": good.replace("speed=\"1Gf\"/>\n<host id=\"b\"", "speed=\"-1Gf\"/>\n<host id=\"b\""),
        "bandwidth-text": good.replace("1GBps", "quick"),
        "latency-text": good.replace("1us", "soon"),
        "route-unknown-host": good.replace("dst=\"b\"", "dst=\"c\""),
        "route-unknown-link": good.replace("link_ctn id=\"l\"", "link_ctn id=\"m\""),
        "dup-host": good.replace("<host id=\"b\"", "<host id=\"a\""),
        "dup-route": good.replace("</route>", "</route>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>"),
        "entity-bomb": "<?xml version='1.0'?>\n<!DOCTYPE p [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                       "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n<platform version=\"4.1\">&c;</platform>\n",
        "deep": "<?xml version='1.0'?>\n<platform version=\"4.1\">" + "<zone id=\"z\" routing=\"Full\">" * 5000 + "</platform>\n",
        "binary": None,
        "gpus-unknown": None,
    }
    for n, t in bad.items():
        s = scen
        if n == "binary":
            t = bytes(random.Random(21).randrange(256) for _ in range(500))
        if n == "gpus-unknown":
            t, s = good, scen.replace("[a, b]", "[a, z]")
        case(f"xml-{n}-validate", {"p.xml": t, "s.yaml": s}, "validate s.yaml", ["p.xml" if n != "gpus-unknown" else "z"])
        case(f"xml-{n}-run", {"p.xml": t, "s.yaml": s}, "run s.yaml -q", ["p.xml" if n != "gpus-unknown" else "z"])
    case("xml-missing", {"s.yaml": scen}, "validate s.yaml", ["p.xml"])
    case("xml-directory", {"p.xml/keep.txt": "", "s.yaml": scen}, "validate s.yaml", ["p.xml"])


def platform_yaml_cases():
    # `orrery platform show|export` on damaged platform YAML files.
    good = "name: mine\npreset: pcie-server\nserver: {gpus: 4}\n"
    bad = {
        "dup": good + "name: again\n",
        "unknown": good + "sever: {}\n",
        "gpus-huge": good.replace("gpus: 4", "gpus: 4294967297"),
        "gpus-neg": good.replace("gpus: 4", "gpus: -4"),
        "unitless-bw": good.replace("{gpus: 4}", "{gpus: 4, pcie: {bandwidth: 16}}"),
        "preset-typo": good.replace("pcie-server", "pci-server"),
        "nccl-launch-negative": good.replace("{gpus: 4}", "{gpus: 4, nccl_launch: -2us}"),
        "nccl-launch-unitless": good.replace("{gpus: 4}", "{gpus: 4, nccl_launch: 8}"),
        "garbage": None,
    }
    for n, t in bad.items():
        if t is None:
            t = bytes(random.Random(31).randrange(256) for _ in range(300))
        case(f"platform-yaml-{n}-show", {"p.yaml": t}, "platform show p.yaml", ["p.yaml"])
        case(f"platform-yaml-{n}-export", {"p.yaml": t}, "platform export p.yaml -o p.xml", ["p.yaml"])


def model_file_cases():
    scen = ("platform: {preset: dgx-a100, servers: 1}\nworkload: {type: model_file, file: m.json}\n"
            "strategy: {type: allreduce, gpus: 2}\n")
    bad = {
        "empty": "",
        "not-model": json.dumps(GRAPH),
        "deep": "[" * 100000,
        "wrong-format": json.dumps({"format": "orrery-model", "version": 999, "ops": []}),
        "ops-scalar": json.dumps({"format": "orrery-model", "version": 1, "ops": 5}),
        "garbage": None,
        "h5-text": "\x89HDF\r\n\x1a\n not really",
    }
    for n, t in bad.items():
        if t is None:
            t = bytes(random.Random(41).randrange(256) for _ in range(300))
        case(f"model-file-{n}", {"m.json": t, "s.yaml": scen}, "validate s.yaml", ["m.json"])


def reliability_cases():
    # Issue 36's classes, as new cases: inputs that crashed, hung or succeeded wrongly.
    xml = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"{routing}\">\n"
           "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n"
           "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n</zone>\n</platform>\n")
    scen = ("platform: {xml: p.xml, gpus: [a, b]}\n"
            "workload: {type: synthetic-dp, layers: 2, gradient_bytes: 8MB}\n")
    for routing in ("Dijkstra", "Full", "Floyd"):
        for cmd in ("validate s.yaml", "run s.yaml -q"):
            case(f"noroute-{routing.lower()}-{cmd.split()[0]}",
                 {"p.xml": xml.replace("{routing}", routing), "s.yaml": scen}, cmd,
                 ["p.xml", "no route from host"])
    base = "platform: {preset: pcie-server}\nworkload: {type: synthetic-dp}\n"
    anchors = "x: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10))
    case("yaml-alias-bomb-description", {"s.yaml": anchors + base + "description: *a9\n"},
         "validate s.yaml", ["s.yaml", "alias"])
    case("yaml-alias-bomb-set", {"s.yaml": base}, "validate s.yaml --set description=[*a]",
         ["--set"])
    for n, raw in {"overlong": b"n\xc0\xafme", "stray": b"bad\xff", "cut": b"cut\xe2\x82",
                   "surrogate": b"s\xed\xa0\x80"}.items():
        case(f"yaml-utf8-{n}", {"s.yaml": base.encode() + b"name: \"" + raw + b"\"\n"},
             "validate s.yaml", ["s.yaml:3", "UTF-8"])
    llm = ("platform: {preset: dgx-a100, servers: 1}\n"
           "workload: {type: llm, model: llama2_7b, seq_len: 2048, global_batch: 16}\n"
           "strategy: {tp: 2, pp: 2}\n")
    for key in ("seq_len", "global_batch", "micro_batch"):
        case(f"llm-{key}-zero", {"s.yaml": llm}, f"validate s.yaml --set workload.{key}=0",
             [key, "at least 1"])
    for opt in ("--seq 0", "--reserved inf", "--reserved nan"):
        case("llm-memory-" + opt.strip("-").replace(" ", "-"), {},
             "llm memory llama2_7b --tp 8 " + opt, [opt.split()[0]])
    mix = ("platform: {preset: ethernet-cluster, servers: 1}\njob_mix:\n  types:\n"
           "    - {name: a, gpus: 2, start: START, workload: {type: synthetic-dp}}\n")
    for n, start in {"range": "[0, 5]", "one": "5"}.items():
        case(f"jobmix-start-unitless-{n}", {"s.yaml": mix.replace("START", start)},
             "validate s.yaml", ["start", "unit"])
    for n, speeds in {"list": "{[a, b]: 0.5}", "map": "{{a: 1}: 0.5}"}.items():
        case(f"gpu-speeds-{n}-key", {"s.yaml": base + f"gpu_speeds: {speeds}\n"},
             "validate s.yaml", ["gpu_speeds", "host names"])
    case("jobs-iterations-huge",
         {"s.yaml": "platform: {preset: ethernet-cluster, servers: 1}\njobs:\n"
                    "  - {name: a, gpus: 8, iterations: 1000000, workload: {type: model, "
                    "model: resnet50, batch: 8}, strategy: {type: allreduce}}\n"},
         "validate s.yaml", ["composing the jobs", "--max-ops"])
    axis = ", ".join(str(i) for i in range(1, 1001))
    case("sweep-million-points",
         {"s.yaml": base + "sweep:\n  grid:\n    workload.layers: [" + axis + "]\n"
                    "    workload.forward_time: [" + ", ".join(f"{i}us" for i in range(1, 1001))
                    + "]\n"},
         "sweep s.yaml --dry-run", ["s.yaml", "--max-points"])
    case("sweep-point-negative",
         {"s.yaml": base + "sweep:\n  grid:\n    workload.layers: [1, 2]\n"},
         "sweep s.yaml --point -1 -o p.h5", ["--point -1", "0 to 1"])
    case("run-output-is-trace", {"s.yaml": base}, "run s.yaml -q -o same.x --trace same.x",
         ["same.x"])
    cluster = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n<cluster id=\"c\" prefix=\"g\" suffix=\"\" "
               "radical=\"0-99999999\" speed=\"1Tf\" bw=\"10GBps\" lat=\"1us\" bb_bw=\"100GBps\" "
               "bb_lat=\"1us\"/>\n</platform>\n")
    case("xml-cluster-radical-huge",
         {"c.xml": cluster, "s.yaml": "platform: {xml: c.xml, gpus: [g0, g1]}\n"
                                      "workload: {type: synthetic-dp, layers: 1}\n"},
         "validate s.yaml", ["c.xml", "hosts"])
    case("astra-fullyconnected-2048",
         {"fc.yml": "topology: [ FullyConnected ]\nnpus_count: [ 2048 ]\n"
                    "bandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n",
          "s.yaml": "platform: {astra_network: fc.yml}\nworkload: {type: synthetic-dp}\n"},
         "validate s.yaml", ["fc.yml", "links"])
    case("bench-factor-near-one", {},
         "bench collective all_reduce --platform pcie-server -e 128MiB -f 1.0000001",
         ["size factor", "sizes"])
    ops = "op,B,M,N,K\nmatmul,1,64,64,64\n"
    case("cost-output-is-input", {"ops.csv": ops},
         "cost --csv ops.csv --device A100-SXM4-80GB -o ops.csv", ["ops.csv", "input"])
    case("cost-output-foreign", {"ops.csv": ops, "notes.txt": "mine\n"},
         "cost --csv ops.csv --device A100-SXM4-80GB -o notes.txt", ["notes.txt", "refusing"])
    case("profile-import-output-is-input", {"p.csv": profile_csv()},
         "profile import p.csv -o p.csv", ["p.csv", "input"])
    case("platform-export-foreign", {"notes.txt": "mine\n"},
         "platform export pcie-server -o notes.txt", ["notes.txt", "refusing"])
    case("bench-output-foreign", {"notes.txt": "mine\n"},
         "bench collective all_reduce --platform pcie-server -e 64 -o notes.txt",
         ["notes.txt", "refusing"])

    # One reader rule (common/input_limits.h): zero, negative, non-finite and huge values of
    # every kind of key are refused with the key named, a negative quantity before its unit.
    syn = "platform: {preset: pcie-server, server: {gpus: 2}}\nworkload: {type: synthetic-dp}\n"
    model = ("platform: {preset: dgx-a100, servers: 1}\n"
             "workload: {type: model, model: resnet50, batch: 8}\nstrategy: {type: allreduce}\n")
    ranged = {
        "speed-factor": (syn, "gpu_speeds.n0_gpu0", "gpu_speeds.n0_gpu0", ("0", "-1", "11", ".nan")),
        "speed-stdev": (syn, "gpu_speed_variation.stdev", "stdev", ("-0.1", "2", ".inf")),
        "capacity-factor": (llm, "strategy.capacity_factor", "capacity_factor", ("0", "-1", "65")),
        "llm-bucket": (llm, "strategy.bucket", "strategy.bucket", ("-1", "-4MB", "2000TB")),
        "llm-reserved": (llm, "strategy.reserved", "strategy.reserved", ("-1GiB", "-2")),
        "model-bucket": (model, "strategy.bucket", "strategy.bucket", ("0", "-25MiB", "-3")),
        "tdp": (syn, "platform.server.gpu.tdp_w", "tdp_w", ("0", "-300", "1e9")),
        "clock": (syn, "platform.server.gpu.clock", "clock", ("1kHz", "-1410MHz", "1THz")),
        "cast-fixed": (model + "precision: {policy: cost-aware}\n", "precision.cast_fixed",
                       "cast_fixed", ("-1us", "1e9s")),
    }
    for n, (text, key, word, values) in ranged.items():
        for i, v in enumerate(values):
            case(f"reader-rule-{n}-{i}", {"s.yaml": text}, f"validate s.yaml --set {key}={v}",
                 ["s.yaml", word])
    for n, (line, word) in {"global-batch": ("  global_batch: 3\n", ":6: workload.global_batch"),
                            "tp": ("  global_batch: 4\nstrategy: {tp: 3}\n", ":7: strategy.tp"),
                            "schedule": ("  global_batch: 4\nstrategy: {tp: 8, "
                                         "schedule: zb-h1}\n", ":7: strategy.schedule")}.items():
        text = ("platform: {preset: dgx-a100, servers: 1}\nworkload:\n  type: llm\n"
                "  model: llama2_7b\n  micro_batch: 2\n" + line)
        case(f"plan-error-line-{n}", {"s.yaml": text}, "validate s.yaml", ["s.yaml" + word])
    # Errors of the builders below the reader point at the line of the key they name.
    case("builder-error-line-gpus",
         {"s.yaml": model.replace("{type: allreduce}", "{type: allreduce, gpus: 64}")},
         "validate s.yaml", ["s.yaml:3: strategy.gpus"])
    case("missing-file-line-graph",
         {"s.yaml": "platform: {preset: pcie-server}\nworkload: {type: graph, file: gone.json}\n"},
         "validate s.yaml", ["s.yaml:2: workload.file", "gone.json"])
    # The attention op's shapes (issue 37): heads that do not group, a causal mask with more
    # queries than keys, a missing field.
    for n, fields in {"heads": "B=1 S=16 H=3 KV=2 D=64", "causal": "B=1 S=16 S_kv=8 H=2 D=64",
                      "missing": "B=1 S=16 H=2"}.items():
        case(f"cost-attention-{n}", {}, "cost attention " + fields + " --device H100",
             ["cost attention"])
    case("missing-file-line-xml", {"s.yaml": "platform: {xml: gone.xml}\nworkload: {type: synthetic-dp}\n"},
         "validate s.yaml", ["s.yaml:1: platform.xml", "gone.xml"])


def framework_cases():
    # Issue 38: software-stack profiles (framework:) and what they set.
    case("framework-on-synthetic", {"s.yaml": "platform: {preset: pcie-server}\n"
                                              "workload: {type: synthetic-dp}\nframework: jax\n"},
         "validate s.yaml", ["s.yaml:3", "framework", "synthetic-dp"])
    base = "platform: {preset: pcie-server}\nworkload: {type: model, model: resnet50, batch: 8}\n"
    case("framework-unknown", {"s.yaml": base + "framework: caffe2\n"}, "validate s.yaml",
         ["s.yaml:3", "unknown framework"])
    case("framework-bad-key", {"s.yaml": base + "framework: {base: pytorch, fused: {norms: true}}\n"},
         "validate s.yaml", ["s.yaml", "norms"])
    case("framework-no-base", {"s.yaml": base + "framework: {cuda_graphs: true}\n"},
         "validate s.yaml", ["s.yaml", "framework.base"])
    case("framework-file-missing", {"s.yaml": base + "framework: mine.yaml\n"}, "validate s.yaml",
         ["s.yaml", "mine.yaml"])
    case("framework-file-no-sources",
         {"s.yaml": base + "framework: mine.yaml\n", "mine.yaml": "description: x\n"},
         "validate s.yaml", ["mine.yaml", "sources"])
    case("framework-file-bad-attention",
         {"s.yaml": base + "framework: mine.yaml\n",
          "mine.yaml": "sources: [x]\nattention: flash9\n"},
         "validate s.yaml", ["mine.yaml", "attention"])
    llm = ("platform: {preset: dgx-a100, servers: 1}\n"
           "workload: {type: llm, model: llama2_7b, seq_len: 2048, global_batch: 16}\n"
           "strategy: {tp: 2, pp: 2}\n")
    case("llm-attention-impl-unknown", {"s.yaml": llm},
         "validate s.yaml --set strategy.attention_impl=flash4", ["attention_impl", "flash2"])
    case("llm-attention-impl-not-on-gpu", {"s.yaml": llm},
         "validate s.yaml --set strategy.attention_impl=flash3", ["s.yaml", "Hopper"])
    case("llm-tp-overlap-needs-sp", {"s.yaml": llm},
         "validate s.yaml --set strategy.tp_comm_overlap=true", ["tp_comm_overlap", "sequence_parallel"])
    case("device-compute-capability", {"s.yaml": base + "device: {model: T4, compute_capability: 99}\n"},
         "validate s.yaml", ["s.yaml", "compute_capability"])
    case("cost-impl-not-on-gpu", {}, "cost attention B=1 S=512 H=8 D=64 --device A100 --dtype bf16 "
         "--impl flash3", ["impl flash3", "Hopper"])
    case("cost-impl-not-attention", {}, "cost linear B=1 M=8 N=8 K=8 --impl flash2",
         ["--impl", "attention"])
    plan = llm + "plan: {search: {framework: [caffe2], tp: [2], pp: [2]}}\n"
    case("plan-search-framework-unknown", {"s.yaml": plan}, "plan s.yaml --dry-run",
         ["s.yaml", "framework", "unknown framework"])


def model_plan_cases():
    # Issue 39: architectures, schedules, MoE execution, training kinds.
    llm = ("platform: {preset: dgx-a100, servers: 1}\n"
           "workload: {type: llm, model: llama2_7b, seq_len: 2048, global_batch: 16}\n"
           "strategy: {tp: 2, pp: 2}\n")
    moe = ("platform: {preset: dgx-a100, servers: 1}\n"
           "workload: {type: llm, model: mixtral_8x7b, seq_len: 1024, global_batch: 16}\n"
           "strategy: {tp: 2, ep: 4}\n")
    for cid, setting, expect in [
            ("llm-schedule-unknown", "strategy.schedule=zb-h3", ["schedule", "zb-h1"]),
            ("llm-dualpipe-few-micro", "strategy.schedule=dualpipe --set workload.global_batch=4",
             ["global_batch", "dualpipe"]),
            ("llm-training-unknown", "strategy.training=rlhf", ["training", "lora"]),
            ("llm-lora-rank-not-lora", "strategy.lora_rank=8", ["lora_rank", "training: lora"]),
            ("llm-recompute-module-unknown", "strategy.recompute_modules=[attn]",
             ["recompute_modules", "core_attn"]),
            ("llm-recompute-layers-not-full", "strategy.recompute_layers=4",
             ["recompute_layers", "recompute: full"]),
            ("llm-offload-negative", "strategy.offload_activations=-1", ["offload_activations"]),
            ("llm-fragmentation-range", "strategy.fragmentation=2", ["fragmentation"]),
            ("llm-mla-up-proj-no-mla", "strategy.recompute_modules=[mla_up_proj]",
             ["recompute_modules", "latent attention"])]:
        case(cid, {"s.yaml": llm}, "validate s.yaml --set " + setting, ["s.yaml"] + expect)
    for cid, setting, expect in [
            ("moe-dispatcher-unknown", "strategy.moe_dispatcher=nvshmem", ["moe_dispatcher", "deepep"]),
            ("moe-imbalance-range", "strategy.moe_imbalance=0.5", ["moe_imbalance"]),
            ("moe-expert-load-length", "strategy.expert_load=[1,2,3]", ["expert_load", "8 experts"]),
            ("moe-expert-load-text", "strategy.expert_load=[a,b]", ["expert_load", "numbers"]),
            ("moe-etp-unmodelled", "strategy.etp=3", ["etp"]),
            ("moe-etp-needs-sp", "strategy.etp=1", ["etp", "sequence_parallel"])]:
        case(cid, {"s.yaml": moe}, "validate s.yaml --set " + setting, ["s.yaml"] + expect)
    bad_pattern = ('{"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 3, '
                   '"num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 10, '
                   '"max_position_embeddings": 8, "hybrid_override_pattern": "M*Q", '
                   '"mamba_num_heads": 2, "mamba_head_dim": 8, "ssm_state_size": 4}')
    case("llm-config-hybrid-pattern", {"c.json": bad_pattern}, "llm memory c.json",
         ["c.json", "hybrid_override_pattern", "'Q'"])
    no_pattern = bad_pattern.replace('"hybrid_override_pattern": "M*Q", ', "")
    case("llm-config-hybrid-no-pattern", {"c.json": no_pattern}, "llm memory c.json",
         ["c.json", "hybrid_override_pattern"])
    deepseek = ('{"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 4, '
                '"num_attention_heads": 4, "intermediate_size": 64, "moe_intermediate_size": 16, '
                '"vocab_size": 10, "max_position_embeddings": 8, "first_k_dense_replace": 4, '
                '"n_routed_experts": 8, "num_experts_per_tok": 2, "kv_lora_rank": 8, '
                '"qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8}')
    case("llm-config-deepseek-all-dense", {"c.json": deepseek}, "llm memory c.json",
         ["c.json", "first_k_dense_replace", "no MoE layer"])


def accuracy_cases():
    # `orrery accuracy --dir p` on damaged published-measurement files.
    head = "# source: somewhere\ncase,date,kind,framework,gpu,gpus,scenario,set,metric,published,per_step\n"
    row = "a,2024-01,llm,f,H100,8,s.yaml,,iteration_s,1.5,\n"
    bad = {
        "no-source": head.split("\n", 1)[1] + row,
        "no-header-column": "# source: x\ncase,scenario\na,s.yaml\n",
        "published-text": head + row.replace("1.5", "fast"),
        "published-neg": head + row.replace("1.5", "-1"),
        "published-nan": head + row.replace("1.5", "nan"),
        "gpus-zero": head + row.replace(",8,", ",0,"),
        "metric": head + row.replace("iteration_s", "speed"),
        "samples-no-per-step": head + row.replace("iteration_s", "samples_s"),
        "set-no-equals": head + row.replace(",,", ",tp2,", 1),
        "short-row": head + "a,2024-01,llm\n",
        "open-quote": head + '"a,2024-01,llm,f,H100,8,s.yaml,,iteration_s,1.5,\n',
        "dup-case": head + row + row,
        "scenario-missing": head + row,
        "binary": bytes(random.Random(41).randrange(256) for _ in range(400)),
    }
    for n, t in bad.items():
        case(f"accuracy-{n}", {"p/x.csv": t}, "accuracy --dir p", ["x.csv"])
    case("accuracy-no-dir", {}, "accuracy --dir nowhere", ["nowhere"])
    # Kernel and collective cases: the command the scenario column names, against its metric.
    commands = {
        "collective-metric-on-scenario": row.replace("iteration_s", "busbw_gbs"),
        "cost-with-collective-metric": row.replace("s.yaml", "orrery cost linear M=1")
                                          .replace("iteration_s", "busbw_gbs"),
        "command-with-set": row.replace("s.yaml,", "orrery cost linear M=1,x=1")
                               .replace("iteration_s", "kernel_us"),
        "command-fails": row.replace("s.yaml", "orrery cost nosuchop M=1")
                            .replace("iteration_s", "kernel_us"),
        "bench-fails": row.replace("s.yaml", "orrery bench collective allreduce --platform nowhere")
                          .replace("iteration_s", "busbw_gbs"),
    }
    for n, t in commands.items():
        case(f"accuracy-{n}", {"p/x.csv": head + t}, "accuracy --dir p", ["x.csv"])


CAMPAIGN = BASE + """campaign:
  steps: 1000
  checkpoint: {bytes: 1GB}
"""


def campaign_cases():
    # A scenario's campaign section: each bad value names its key. Each value replaces the
    # section's target line.
    bad = {
        "two-targets": ("steps: 1000\n  tokens: 15T", ["campaign.steps", "one target"]),
        "steps-neg": ("steps: -5", ["campaign.steps"]),
        "steps-text": ("steps: many", ["campaign.steps"]),
        "tokens-non-llm": ("tokens: 15T", ["not a language model"]),
        "duration-tiny": ("duration: 1s", ["campaign.duration"]),
        "reliability-unknown": ("steps: 1000\n  reliability: llama9",
                                ["campaign.reliability", "shipped"]),
        "reliability-missing-file": ("steps: 1000\n  reliability: none/r.yaml",
                                     ["campaign.reliability"]),
        "spares-neg": ("steps: 1000\n  spares: -3", ["campaign.spares"]),
        "restart-unitless": ("steps: 1000\n  restart: 10", ["campaign.restart"]),
        "pue-low": ("steps: 1000\n  power: {pue: 0.5}", ["campaign.power.pue"]),
        "cap-text": ("steps: 1000\n  power: {cap: lots}", ["campaign.power.cap"]),
        "cap-below-idle": ("steps: 1000\n  power: {cap: 10W}", ["campaign.power.cap"]),
        "interval-text": ("steps: 1000\n  checkpoint: {bytes: 1GB, interval: often}",
                          ["campaign.checkpoint.interval"]),
        "storage-unitless": ("steps: 1000\n  checkpoint: {bytes: 1GB, storage: {write: 5}}",
                             ["campaign.checkpoint.storage.write"]),
        "mc-runs-zero": ("steps: 1000\n  monte_carlo: {runs: 0}", ["campaign.monte_carlo.runs"]),
        "unknown-key": ("steps: 1000\n  budget: 5", ["campaign", "budget"]),
    }
    for n, (value, expect) in bad.items():
        text = CAMPAIGN.replace("  steps: 1000\n", "  " + value + "\n")
        if "checkpoint:" in value:
            text = text.replace("  checkpoint: {bytes: 1GB}\n", "")
        case(f"campaign-{n}", {"s.yaml": text}, "run s.yaml", ["s.yaml"] + expect)
    # A reliability model of one's own, damaged.
    case("campaign-reliability-file-bad-unit",
         {"s.yaml": CAMPAIGN.replace("  steps: 1000\n", "  steps: 1000\n  reliability: r.yaml\n"),
          "r.yaml": "name: r\nsource: me\ncauses: [{id: x, unit: rack, per_unit_hour: 1}]\n"},
         "run s.yaml", ["r.yaml", "unit"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--orrery", help="the orrery binary, to make the result-file cases")
    a = ap.parse_args()
    global ORRERY
    ORRERY = os.path.abspath(a.orrery) if a.orrery else None
    shutil.rmtree(CASES, ignore_errors=True)
    os.makedirs(CASES)
    scenario_cases()
    sweep_cases()
    graph_cases()
    chakra_cases()
    profile_cases()
    xml_cases()
    platform_yaml_cases()
    model_file_cases()
    reliability_cases()
    framework_cases()
    model_plan_cases()
    accuracy_cases()
    campaign_cases()
    hdf5_cases(os.path.abspath(a.orrery) if a.orrery else None)
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write("# id\targuments\texpected substrings (|-separated); generated by make_corpus.py\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"{len(rows)} cases")


if __name__ == "__main__":
    main()
