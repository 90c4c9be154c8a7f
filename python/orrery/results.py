"""Results files as pandas DataFrames: the HDF5 files `orrery run`, `orrery sweep` and `orrery
plan` write (docs/hdf5-layout.md). Read with h5py; numbers stay numbers, in seconds, bytes and
bytes/s, and each frame's attrs["units"] names the unit of every numeric column.

A file is first read whole by Orrery's own reader in a child process, as `orrery report` reads
it (check_results_file in python/orrery_module.cc): a damaged file, which can make libhdf5 read
out of bounds and crash, is refused with InputError before h5py opens it, and whatever h5py still
raises while reading becomes InputError too. Text that is not valid UTF-8 is decoded with each
bad byte replaced by U+FFFD, so the numbers of such a file still load."""

import contextlib
import os

from ._orrery import InputError
from ._orrery import check_results_file as _check_results_file

# Highest /format_version this reader knows (results/h5_store.h kResultsFormatVersion).
_FORMAT_VERSION = 4

# Units of the /runs columns (docs/hdf5-layout.md, "/runs").
_RUN_UNITS = {"iteration_time_s": "s", "compute_s": "s", "comm_s": "s", "io_s": "s",
              "host_s": "s", "idle_s": "s", "exposed_comm_s": "s", "memory_bound_s": "s",
              "activities": "1", "wall_s": "s", "analytical_s": "s"}

# /runs_detail/<i>/devices columns -> frame columns; the seconds gain "_s".
_DEVICE_COLUMNS = {"name": "device", "busy_compute": "busy_compute_s", "busy_comm": "busy_comm_s",
                   "busy_copy_h2d": "busy_copy_h2d_s", "busy_copy_d2h": "busy_copy_d2h_s",
                   "busy_host": "busy_host_s", "idle": "idle_s", "exposed_comm": "exposed_comm_s",
                   "memory_bound": "memory_bound_s", "ops": "ops"}

# What h5py, numpy and pandas raise on a file whose layout or contents are not what this reader
# expects (a missing dataset: KeyError; unreadable data: OSError; a mistyped value: TypeError or
# ValueError, UnicodeDecodeError among them). Each becomes InputError naming the file.
_FILE_ERRORS = (OSError, LookupError, ValueError, TypeError, AttributeError, RuntimeError)


def _text(value):
    """A string of the file as str: bytes (strings inside tables) decoded as UTF-8 and str (h5py's
    attributes, which carry bytes that are not UTF-8 as lone surrogates) re-decoded, each invalid
    byte replaced by U+FFFD."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    return str(value)


def _why(error):
    """What an h5py/numpy error says, without KeyError's quotes."""
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return text or type(error).__name__


@contextlib.contextmanager
def _open(path):
    """The file, checked to be an Orrery results file this reader understands; every error while
    it is open becomes InputError naming it."""
    import h5py

    path = os.fsdecode(os.fspath(path))
    # Orrery's reader first, in a child process: InputError naming the file when it is missing,
    # not HDF5, damaged (also where libhdf5 would crash) or not an Orrery results file. The child
    # is forked while h5py's lock is held, so no other thread is inside libhdf5 at that moment
    # (the child's copy of the library would be half-way through a call).
    with getattr(getattr(h5py, "_objects", None), "phil", None) or contextlib.nullcontext():
        _check_results_file(path)
    try:
        with h5py.File(path, "r") as f:
            version = f.attrs.get("format_version")
            if version is None or "runs" not in f:
                raise InputError("%s: not an Orrery results file (no format_version attribute or "
                                 "/runs table)" % path)
            if int(version) > _FORMAT_VERSION:
                raise InputError("%s: format_version %d is newer than this orrery package reads "
                                 "(%d)" % (path, int(version), _FORMAT_VERSION))
            yield f
    except InputError:
        raise
    except _FILE_ERRORS as e:
        raise InputError("%s: not a valid Orrery results file: %s" % (path, _why(e))) from e


def _frame(table):
    """A DataFrame of an HDF5 compound table, its strings decoded."""
    import pandas as pd

    df = pd.DataFrame(table[:])
    for column in df.columns:
        if df[column].dtype == object:
            df[column] = [_text(v) if isinstance(v, (bytes, str)) else v for v in df[column]]
    return df


def _file_attrs(f):
    def text(name):
        return _text(f.attrs.get(name, ""))

    return {"format_version": int(f.attrs["format_version"]), "orrery_version": text("orrery_version"),
            "scenario": text("scenario"), "platform": text("platform"),
            "created_by": text("created_by")}


def load_runs(path):
    """One row per run of a results file: the one run of `orrery run -o FILE`, or every
    finished point of an `orrery sweep` or `orrery plan` file, row i being /runs_detail/<i>.

    Columns: first the headline numbers of /runs, named as there: name, iteration_time_s,
    compute_s, comm_s, io_s, host_s, idle_s, exposed_comm_s, memory_bound_s (means over the
    devices that ran ops, seconds), activities, wall_s, analytical_s (0 where the PAI estimate
    does not apply). Then one column per scenario parameter of a sweep (`platform.servers`,
    `sweep.status`...): a float in SI base units where every value of the parameter is a
    number of one kind (NaN where a run lacks it), its unit in attrs["units"] ("s", "B", "B/s",
    "FLOP/s" or "1"); otherwise the text as written ("" where a run lacks it).

    attrs: "units" (column -> unit of every numeric column), and the file's "scenario",
    "platform", "orrery_version", "created_by" and "format_version".

    Raises InputError (a ValueError) naming the file when it is missing or unreadable, is not an
    Orrery results file, is of a newer format or is damaged; never h5py's own errors, and a
    damaged file cannot crash the interpreter (it is read by Orrery's reader in a child process
    first). Strings that are not valid UTF-8 load with U+FFFD in place of each bad byte.
    """
    with _open(path) as f:
        df = _frame(f["runs"])
        units = {c: u for c, u in _RUN_UNITS.items() if c in df.columns}
        if "run_params" in f:
            params = _frame(f["run_params"])
            values = f["run_values"] if "run_values" in f else {}
            for name in params.columns:
                column = name if name not in df.columns else "param." + name
                if name in values:
                    df[column] = values[name][:]
                    unit = values[name].attrs["unit"]
                    units[column] = _text(unit)
                else:
                    df[column] = params[name]
        df.attrs["units"] = units
        df.attrs.update(_file_attrs(f))
    return df


def load_devices(path):
    """The per-device breakdown of every run of a results file, one row per device and run
    (the table `orrery run` prints, and the host and memory-bound times it does not).

    Columns: run (the row of load_runs), run_name, device, busy_compute_s, busy_comm_s,
    busy_copy_h2d_s, busy_copy_d2h_s, busy_host_s (seconds each stream class ran ops),
    idle_s (iteration time minus busy_compute_s), exposed_comm_s (communication while compute
    was idle), memory_bound_s (part of busy_compute_s in memory-bound ops), ops (count).
    Devices of one run are in the execution graph's order. attrs["units"] as in load_runs.

    Raises like load_runs.
    """
    import pandas as pd

    frames = []
    with _open(path) as f:
        for i in range(len(f["runs"])):
            detail = f["runs_detail/%d" % i]
            df = _frame(detail["devices"]).rename(columns=_DEVICE_COLUMNS)
            name = detail.attrs.get("name", "")
            df.insert(0, "run_name", _text(name))
            df.insert(0, "run", i)
            frames.append(df)
        attrs = _file_attrs(f)
    columns = ["run", "run_name"] + list(_DEVICE_COLUMNS.values())
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    df.attrs["units"] = {c: ("1" if c == "ops" else "s") for c in columns[3:]}
    df.attrs.update(attrs)
    return df
