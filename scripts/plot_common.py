"""Shared by the plot_*.py scripts: an Orrery results file (HDF5) as plain Python rows.

Run the scripts with Debian's /usr/bin/python3 (python3-h5py, python3-matplotlib).
"""
import copy
import os
import re
import sys

import h5py
import yaml

# Unit suffixes of scenario values (common/units.cc), to base units: bytes/s, bytes, s, flop/s.
_UNITS = {
    "bps": 1 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
    "Gb/s": 1e9 / 8, "Mb/s": 1e6 / 8, "Bps": 1, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9,
    "TBps": 1e12, "B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
    "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
    "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1024.0, "MiB": 1048576.0,
    "GiB": 1073741824.0, "TiB": 1099511627776.0,
    "flops": 1, "Kflops": 1e3, "Mflops": 1e6, "Gflops": 1e9, "Tflops": 1e12, "Pflops": 1e15,
    "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15, "GF": 1e9, "TF": 1e12,
}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")

# Short names of the keys the studies sweep, for legends (the NIC's: fabric_kind).
FRIENDLY = {
    "platform.server.pcie.bandwidth": "PCIe",
    "platform.server.gpu.flops": "GPU FLOP/s",
    "platform.server.gpu.mem_bw": "GPU memory",
    "platform.server.nvlink.bandwidth": "NVLink",
    "platform.servers": "servers",
    "platform.server.gpus": "GPUs per server",
}


def quantity(text):
    """'25Gbps' -> 3.125e9; '8' -> 8.0; anything else -> None."""
    m = _NUMBER.match(text or "")
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    if not unit:
        return value
    return value * _UNITS[unit] if unit in _UNITS else None


# The NIC bandwidth's name per fabric kind (platforms/platform_spec.cc accepts these three).
FABRICS = {"ethernet": "Ethernet", "roce": "RoCE", "infiniband": "InfiniBand"}
PRESETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platforms", "presets")


def friendly(key, fabric=None):
    """A legend's name for `key`; the NIC bandwidth is named after `fabric` (fabric_kind), or
    "NIC bandwidth" when that is not known."""
    if key == "platform.server.nic.bandwidth":
        return FABRICS.get(fabric, "NIC bandwidth")
    return FRIENDLY.get(key, ".".join(key.split(".")[-2:]))


def fabric_kind(rows, attrs):
    """The fabric kind (ethernet, roce or infiniband) of the platform of every one of `rows`,
    from the scenario the file stores, its --set overrides, the sweep's values for each row and
    the presets' files; None when the rows' kinds differ or one cannot be known (a SimGrid XML
    platform, a preset not found)."""
    text = attrs.get("scenario", "")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict):
        return None
    sweep = doc.pop("sweep", None)
    named = sweep.get("named") if isinstance(sweep, dict) else None
    for line in text.splitlines():  # the overrides, as the file records them
        if line.startswith("# --set "):
            key, _, value = line[len("# --set "):].partition("=")
            _set_at_path(doc, key.strip(), _yaml_value(value))
    kinds = set()
    for r in rows or [{"params": {}}]:
        point = copy.deepcopy(doc)
        for axis, labels in (named if isinstance(named, dict) else {}).items():
            label = labels.get(r["params"].get(axis)) if isinstance(labels, dict) else None
            for key, value in (label if isinstance(label, dict) else {}).items():
                _set_at_path(point, key, value)
        for key, value in r["params"].items():  # grid, zip and plan values
            if key.split(".")[0] == "platform":
                _set_at_path(point, key, _yaml_value(value))
        kinds.add(_platform_fabric(point.get("platform")))
    return kinds.pop() if len(kinds) == 1 else None


def _platform_fabric(platform):
    if not isinstance(platform, dict) or "xml" in platform:
        return None
    fabric = platform.get("fabric")
    if isinstance(fabric, dict) and fabric.get("kind"):
        return str(fabric["kind"])
    if not platform.get("preset"):
        return "ethernet"  # FabricSpec's default (platforms/platform_spec.h)
    try:
        with open(os.path.join(PRESETS, str(platform["preset"]) + ".yaml")) as f:
            preset = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return None
    fabric = preset.get("fabric") if isinstance(preset, dict) else None
    return str((fabric if isinstance(fabric, dict) else {}).get("kind", "ethernet"))


def _set_at_path(tree, key, value):
    """tree["a"]["b"] = value for key "a.b", making the mappings on the way."""
    parts = key.split(".")
    for part in parts[:-1]:
        if not isinstance(tree.get(part), dict):
            tree[part] = {}
        tree = tree[part]
    tree[parts[-1]] = value


def _yaml_value(text):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def load(path):
    """Returns (rows, sweep_attrs, file_attrs). A row: the /runs columns plus 'params' (dict of
    str), 'index' (the sweep point, or the row) and 'ok'."""
    with h5py.File(path, "r") as f:
        runs = f["runs"][:]
        params = f["run_params"][:] if "run_params" in f else None
        sweep = {k: _text(v) for k, v in f["sweep"].attrs.items()} if "sweep" in f else {}
        attrs = {k: _text(v) for k, v in f.attrs.items()}
    rows = []
    for i, run in enumerate(runs):
        row = {name: _text(run[name]) for name in runs.dtype.names}
        row["params"] = {k: params[k][i].decode() for k in params.dtype.names} if params is not None else {}
        row["index"] = int(row["params"].get("sweep.index") or i)
        row["ok"] = row["params"].get("sweep.status", "ok") == "ok"
        rows.append(row)
    return rows, sweep, attrs


def filter_rows(rows, where):
    """Keeps the rows whose params match every KEY=VALUE of `where`."""
    for cond in where or []:
        key, _, value = cond.partition("=")
        rows = [r for r in rows if r["params"].get(key) == value]
    return rows


# Parameters a sweep writes itself, and a run's figures (llm., jobs., likely., sensitivity.,
# campaign.): never a point's own choice.
NOT_CHOSEN = ("sweep.", "plan.", "llm.", "jobs.", "likely.", "sensitivity.", "campaign.")


def varying_keys(rows, skip_prefixes=NOT_CHOSEN):
    keys = sorted({k for r in rows for k in r["params"]})
    out = []
    for k in keys:
        if k.startswith(skip_prefixes):
            continue
        if len({r["params"].get(k, "") for r in rows}) > 1:
            out.append(k)
    return out


def fail(message):
    sys.stderr.write("error: " + message + "\n")
    sys.exit(2)


def require_named_axes(path, sweep, axes):
    """The sweep's named axes; fails naming the file unless every one of `axes` is among them."""
    named = [a for a in sweep.get("named_axes", "").split("\n") if a]
    for axis in axes:
        if axis not in named:
            fail(f"{path}: no named axis \"{axis}\" (named axes: {', '.join(named) or 'none'})")
    return named


def require_all_ran(path, rows):
    """Fails naming the first point that did not run, when any did not."""
    bad = [r for r in rows if not r["ok"]]
    if bad:
        fail(f"{path}: {len(bad)} point(s) did not run, e.g. #{bad[0]['index']} "
             f"({bad[0]['params'].get('sweep.status', '')}): "
             f"{bad[0]['params'].get('sweep.error', '')}")


def axis_labels(rows, axis):
    """The values of a named axis in the order of the sweep ([None] without the axis)."""
    seen = []
    for r in sorted(rows, key=lambda r: r["index"]):
        if axis and r["params"][axis] not in seen:
            seen.append(r["params"][axis])
    return seen or [None]


def _text(v):
    return v.decode() if isinstance(v, bytes) else v
