"""The ATen-calls file: written by export_pytorch_graph.py --calls and validate_ddp.py
--calls-out, read by profile_ops.py --calls and validate_ddp.py.

Calls files travel between machines and people, and unpickling an arbitrary torch.save file runs
whatever code it names. So the file is a torch.save container that torch.load(weights_only=True)
opens (torch 1.13's restricted unpickler: strings, ints, lists, dicts and tensors only, no
floats): a format tag, the records as JSON text, and the tensors the records point to (the
values of integer and boolean arguments). In the JSON a tensor is {"__tensor_data__": INDEX} and
a tuple is {"__tuple__": [...]}, so calls are rebuilt exactly as they were recorded.
"""

import json

import torch

FORMAT = "orrery-aten-calls"
VERSION = 2


def save(path, data):
    """Writes data (dicts, lists, tuples, str, int, float, bool, None, tensors) to path."""
    tensors = []

    def encode(obj):
        if isinstance(obj, torch.Tensor):
            tensors.append(obj.detach().cpu())
            return {"__tensor_data__": len(tensors) - 1}
        if isinstance(obj, tuple):
            return {"__tuple__": [encode(o) for o in obj]}
        if isinstance(obj, list):
            return [encode(o) for o in obj]
        if isinstance(obj, dict):
            for k in obj:
                if not isinstance(k, str):
                    raise TypeError(f"calls file: dict key {k!r} is not a string")
            return {k: encode(v) for k, v in obj.items()}
        if obj is None or isinstance(obj, (str, int, float, bool)):
            return obj
        raise TypeError(f"calls file: cannot store a {type(obj).__name__} ({obj!r})")

    text = json.dumps(encode(data))
    torch.save({"format": FORMAT, "version": VERSION, "json": text, "tensors": tensors}, path)


def load(path):
    """The data save() wrote; ValueError naming path if it is not such a file. Never unpickles
    anything but plain containers and tensors (weights_only=True)."""
    try:
        box = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any failure means "not a calls file we can trust"
        raise ValueError(f"{path}: not an {FORMAT} file that loads without running code "
                         f"(torch.load with weights_only=True failed: {e})") from None
    if not isinstance(box, dict) or box.get("format") != FORMAT:
        raise ValueError(f"{path}: not an {FORMAT} file (no format tag {FORMAT!r})")
    if box.get("version") != VERSION:
        raise ValueError(f"{path}: {FORMAT} version {box.get('version')!r}, expected {VERSION}; "
                         "export it again with scripts/export_pytorch_graph.py --calls")
    tensors = box.get("tensors")
    if not isinstance(tensors, list) or not isinstance(box.get("json"), str):
        raise ValueError(f"{path}: {FORMAT} file without its 'json' text or 'tensors' list")

    def decode(obj):
        if isinstance(obj, list):
            return [decode(o) for o in obj]
        if isinstance(obj, dict):
            if set(obj) == {"__tensor_data__"}:
                i = obj["__tensor_data__"]
                if not isinstance(i, int) or not 0 <= i < len(tensors):
                    raise ValueError(f"{path}: tensor index {i!r} out of range "
                                     f"(the file holds {len(tensors)} tensors)")
                return tensors[i]
            if set(obj) == {"__tuple__"}:
                return tuple(decode(o) for o in obj["__tuple__"])
            return {k: decode(v) for k, v in obj.items()}
        return obj

    try:
        data = json.loads(box["json"])
    except ValueError as e:
        raise ValueError(f"{path}: the records are not valid JSON ({e})") from None
    data = decode(data)
    if not isinstance(data, dict) or not isinstance(data.get("ops"), list):
        raise ValueError(f"{path}: {FORMAT} records without an 'ops' list")
    return data
