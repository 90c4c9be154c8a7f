#!/usr/bin/python3
"""Checks parameter servers and host all-reduce against Horovod's published comparison.

    /usr/bin/python3 scripts/validate_ps.py                             # the table
    /usr/bin/python3 scripts/validate_ps.py --update-doc docs/strategies.md

The measurements are the 16-GPU table of Horovod's README as of September 2017
(github.com/horovod/horovod, README.md at commit d54e3a88, removed later): 4 servers of 4
Pascal GPUs on a 25 Gb/s network, tf_cnn_benchmarks on synthetic data, batch 64 per GPU,
images/s of Inception V3, ResNet-101 and VGG-16 for one GPU, distributed TensorFlow (parameter
servers over gRPC, TensorFlow 1.3), Horovod with its all-reduce on the CPUs over TCP, and
Horovod with NCCL over TCP. Each is simulated on the ethernet-cluster preset with 4 P100-PCIe per
server (the README says Pascal), a parameter-server shard on each server (colocated), the
tensorflow1 profile; nothing here is fitted to these numbers.

Error = predicted / published - 1: + is too fast. Needs the built binary; about a minute.
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_runs  # noqa: E402

BEGIN = "<!-- ps-validation:begin (scripts/validate_ps.py --update-doc) -->"
END = "<!-- ps-validation:end -->"

BATCH = 64
SERVERS, GPUS = 4, 4
SETUPS = [
    ("one GPU", 1, "{type: 1w1g}"),
    ("distributed TensorFlow (parameter servers)", SERVERS * GPUS,
     "{type: ps_worker, ps: {placement: colocated}}"),
    ("Horovod, all-reduce on the CPUs (TCP)", SERVERS * GPUS,
     "{type: allreduce, allreduce_on: host}"),
    ("Horovod, NCCL (TCP)", SERVERS * GPUS, "{type: allreduce}"),
]
# (model, zoo name, published images/s per setup in SETUPS order)
ROWS = [
    ("Inception V3", "inception_v3", [134.4, 1345.8, 2073.3, 1990.7]),
    ("ResNet-101", "resnet101", [119.4, 959.6, 1338.3, 1685.1]),
    ("VGG-16", "vgg16", [130.9, 74.7, 616.8, 1308.7]),
]
RUNS = [(model, zoo, setup, gpus, strategy, published[i])
        for model, zoo, published in ROWS
        for i, (setup, gpus, strategy) in enumerate(SETUPS)]


def scenario(run):
    (_, zoo, _, gpus, strategy, _) = run
    servers, per = (1, 1) if gpus == 1 else (SERVERS, GPUS)
    return "\n".join([
        "name: ps-validation",
        "platform: {preset: ethernet-cluster, servers: %d, server: {gpus: %d, "
        "gpu: {model: P100-PCIe}}}" % (servers, per),
        "workload: {type: model, model: %s, batch: %d}" % (zoo, BATCH),
        "framework: tensorflow1",
        "strategy: " + strategy]) + "\n"


def simulate(orrery, run, tmp):
    stdout = published_runs.run_scenario(orrery, scenario(run), tmp, run[0] + ", " + run[2])
    m = re.search(r"Iteration time\s+([\d.]+) (s|ms)", stdout)
    if not m:
        sys.exit("%s, %s: no iteration time in:\n%s" % (run[0], run[2], stdout))
    seconds = float(m.group(1)) * (1e-3 if m.group(2) == "ms" else 1.0)
    return run[3] * BATCH / seconds


def table(results):
    lines = ["Images/s on 16 GPUs (4 servers of 4) and on one, predicted against Horovod's "
             "published table (error = predicted / published - 1; + is too fast):", "",
             "| model | setup | published | predicted | error |", "|---|---|---|---|---|"]
    for run, predicted in results:
        lines.append("| %s | %s | %.1f | %.1f | %+.0f%% |" % (
            run[0], run[2], run[5], predicted, 100 * (predicted / run[5] - 1)))
    lines.append("")
    for setup, _, _ in SETUPS:
        errs = [p / r[5] - 1 for r, p in results if r[2] == setup]
        lines.append("- %s: median signed error %+.0f%%, median |error| %.0f%%" % (
            setup, 100 * statistics.median(errs), 100 * statistics.median(abs(e) for e in errs)))
    return "\n".join(lines) + "\n"


def main():
    published_runs.main(
        __doc__.split("\n\n")[0], RUNS, simulate, table, BEGIN, END,
        lambda run, r: "  %-14s %-45s %8.1f img/s (published %.1f)" % (run[0], run[2], r, run[5]))


if __name__ == "__main__":
    main()
