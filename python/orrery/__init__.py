"""Orrery from Python: simulate a scenario and read result files.

    import orrery
    r = orrery.run("scenarios/quickstart.yaml", overrides={"platform.server.gpus": 8})
    print(r.iteration_time_s, r.times["exposed_comm_s"])
    runs = orrery.load_runs("out/sweep.h5")        # a pandas DataFrame, one row per run

run() simulates one iteration exactly as `orrery run` does (the same library code, so the same
numbers, bit for bit) and returns what it prints as a RunResult. It writes no files: the
scenario's output section is read and checked but ignored; use `orrery run` for HDF5 results
and traces, and load_runs / load_devices to read them. docs/python.md has worked examples.
"""

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

# Installed under PREFIX/lib/python3/dist-packages/orrery, the package finds the scenarios and
# data Orrery ships in PREFIX/share/orrery (common/data_dir.h), so run("quickstart") works; the
# interpreter's own path says nothing about the prefix Orrery was installed to.
_shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4, "share", "orrery")
if os.path.isdir(_shipped):
    os.environ.setdefault("ORRERY_DATA_DIR", os.path.normpath(_shipped))

from ._orrery import InputError
from ._orrery import run_file as _run_file
from ._orrery import run_text as _run_text
from .results import load_devices, load_runs

__all__ = ["InputError", "RunResult", "run", "load_runs", "load_devices"]

InputError.__doc__ = """Bad input: a scenario, a key, a value or a file that Orrery refuses.

A ValueError. Its message is the one `orrery run` prints after "orrery: error: ": it names the
file (or "--set KEY" for an override), the line and the key, and what was expected."""


@dataclass
class RunResult:
    """What `orrery run` prints about one simulated iteration. Times in seconds, sizes in bytes,
    bandwidths in bytes/s; "mean" means over the devices that ran at least one op."""

    name: str  # the scenario's name
    description: str
    platform: str  # the "Platform" line: preset, servers, GPUs, links
    device: str  # the "Device" line: what prices the ops
    num_devices: int  # devices of the execution graph (GPUs, and CPUs that feed them)
    num_ops: int  # ops of the execution graph
    workload: str  # model workloads: model, batch, strategy, pricing; "" otherwise
    # Simulated time of one iteration: the run's length over its iterations (a scenario of
    # several jobs: when the last job ended; each job's own iteration times are in `jobs`).
    iteration_time_s: float
    iterations: int  # training steps simulated one after the other (strategy.iterations)
    makespan_s: float  # simulated time of the whole run, all iterations
    # The PAI analytical estimate of the same step, computed only when asked (run(...,
    # analytical=True), `orrery run --analytical`, or output.analytical: true); None otherwise
    # and where it does not apply (workloads that are not models, SimGrid XML platforms).
    analytical_s: Optional[float]
    # Language-model workloads (None otherwise), what `orrery run` prints under "Throughput",
    # "Time per GPU" and "Memory": gpus, tokens_per_iteration, model_flops_per_iteration,
    # tokens_per_s (all GPUs), tokens_per_s_per_gpu, tflops_per_gpu, mfu (a fraction) and
    # mfu_basis (the precision of the dense peak it is against: "bf16", "fp8", "fp4"),
    # peak_flops_per_gpu; time_per_gpu (seconds of an average GPU's iteration, adding up to it:
    # compute_s, recompute_s, tp_exposed_s, ep_exposed_s, cp_exposed_s, pp_exposed_s,
    # dp_exposed_s, bubble_s); fits, memory (the verdict line), peak_memory_bytes,
    # memory_capacity_bytes, memory_per_stage_bytes (a list, the first pipeline stage first);
    # train_tokens, train_days, gpu_hours (0 unless workload.train_tokens is given).
    llm: Optional[Dict[str, Any]]
    # Scenarios of several jobs (None otherwise): the job table, one dict per placed job: name,
    # placement, gpus, hosts, workload, iteration_times_s, mean_s, min_s, max_s, stdev_s,
    # alone_mean_s (the job replayed alone on the same GPUs), slowdown (mean_s / alone_mean_s),
    # best_mean_s (alone on the GPUs packed placement gives it on an empty platform),
    # placement_cost (alone_mean_s / best_mean_s), end_s.
    jobs: Optional[List[Dict[str, Any]]]
    job_workloads: List[str]  # each placed job's workload line, as `orrery run` lists them
    # The cluster's figures (None without jobs): placed, unplaced (jobs left out, and why),
    # gpus, gpus_used, fragmented_gpus, gpu_batches_per_s, iterations_per_s, mean_slowdown,
    # max_slowdown, gpu_utilization (a fraction).
    cluster: Optional[Dict[str, Any]]
    # The figures a sweep stores with this run as a point, by name ("llm.tokens_per_s",
    # "jobs.gpu_batches_per_s", ...): docs/sweeps.md lists them.
    metrics: Dict[str, float]
    # Mean seconds per device by category, keyed like the /runs columns of a results file:
    # compute_s, memory_bound_s, idle_s, comm_s, exposed_comm_s, io_s, host_s.
    times: Dict[str, float]
    # The rows of "Where the time goes", in printed order: column, label, stream ("compute":
    # these add up to the iteration time; "other": beside compute, overlapping it),
    # part_of_previous (an "of which" row), seconds, percent (of the iteration time).
    time_shares: List[Dict[str, Any]]
    # One dict per device, in graph order: name, compute_s, comm_s, exposed_comm_s, copies_s,
    # idle_s, host_s, memory_bound_s, ops.
    devices: List[Dict[str, Any]]
    traffic_by_link_class: Dict[str, float]  # bytes, summed over the links each transfer crosses
    # Every link that carried bytes, busiest first: name, link_class, bytes, bandwidth, latency,
    # busy_s (bytes / bandwidth), busy_percent (of the iteration time).
    links: List[Dict[str, Any]]
    activities: int  # SimGrid activities the replay started
    wall_s: float  # wall-clock seconds the replay took

    @property
    def iterations_per_s(self) -> float:
        """Throughput in iterations per second (1 / iteration_time_s; 0 for an empty run)."""
        return 1.0 / self.iteration_time_s if self.iteration_time_s > 0 else 0.0


def _yaml_value(value):
    """An override value as `--set` takes it: strings as written ("4MB", "ring"), anything else
    as JSON, which is YAML (True -> true, 8 -> 8, [1, 2] -> [1, 2])."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=_plain)


def _plain(value):
    """JSON for the values json does not know: numpy scalars and arrays, paths."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError("orrery.run: cannot put a %s into a scenario" % type(value).__name__)


def _assignments(overrides):
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise TypeError('orrery.run: overrides is a list of "key.path=value" strings or a dict '
                        '{"key.path": value}, not one string')
    if isinstance(overrides, dict):
        return ["%s=%s" % (key, _yaml_value(value)) for key, value in overrides.items()]
    return [str(o) for o in overrides]


def run(scenario, overrides=None, base_dir=None, analytical=False) -> RunResult:
    """Simulates one iteration of `scenario` and returns what `orrery run` prints about it.

    scenario:  a scenario file (str or path-like), the name of a scenario Orrery ships
               ("quickstart", as `orrery run` takes it), or a dict with the keys of a scenario
               file (docs/user-guide.md). Quantities keep their units as strings: "1ms", "4MB",
               "25Gbps".
    overrides: like `orrery run --set`: a list of "key.path=value" strings (the value is YAML),
               or a dict {"key.path": value} (strings as written, other values as YAML).
    base_dir:  dict scenarios only: the folder relative file names in it (graph files, Chakra
               traces, profiles) resolve against; default the current directory. A scenario
               file's names resolve against the file's folder, as in `orrery run`.
    analytical: also compute the PAI analytical estimate (analytical_s), as
               `orrery run --analytical` does.

    Raises InputError (a ValueError) with the message `orrery run` prints when the scenario,
    an override or a file it names is wrong, and RuntimeError when the simulation itself fails.
    Each call simulates in a child process, so calls may repeat freely.
    """
    assignments = _assignments(overrides)
    if isinstance(scenario, dict):
        if base_dir is None:
            base_dir = os.getcwd()
        # JSON is YAML; one key per line, so messages point at a line of this text (the
        # scenario text stored with results).
        text = json.dumps(scenario, indent=2, default=_plain)
        origin = os.path.join(os.fspath(base_dir), "<scenario dict>")
        raw = _run_text(text, origin, assignments, bool(analytical))
    elif isinstance(scenario, (str, os.PathLike)):
        if base_dir is not None:
            raise TypeError("orrery.run: base_dir applies to dict scenarios; a scenario file's "
                            "paths resolve against its own folder")
        raw = _run_file(os.fspath(scenario), assignments, bool(analytical))
    else:
        raise TypeError("orrery.run: scenario is a file path or a dict, not a %s"
                        % type(scenario).__name__)
    return RunResult(**raw)
