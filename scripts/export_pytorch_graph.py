#!/usr/bin/python3
"""Trace one training step of a PyTorch model on CPU and write it as an Orrery model graph.

The output is an "orrery-model" JSON file (docs/workloads.md): one replica's forward, backward
and optimizer ops with Orrery op types (workloads/op_counts.h), input/output shapes, dtype, the
parameters each forward op owns, the weight gradient each backward op produces, and the data
dependencies between ops. `orrery workload show FILE` summarizes it.

How: the step runs once under a TorchDispatchMode, which sees every ATen operator that forward
and autograd's backward execute, with their shapes. The step runs on fake tensors (torch's
FakeTensorMode: CPU tensors with shapes and no data), so nothing is computed and a large model
exports in seconds; an operator without a shape-only kernel runs on zero-filled CPU tensors,
and a step whose control flow needs values (`.item()`, data-dependent shapes) is traced again
on real CPU tensors, each with a note on stderr. --real and --calls trace on real tensors.
Each operator maps to an Orrery op type (views and tensor factories are free and dropped;
unknown operators become "elementwise" and are listed on stderr). Dependencies follow tensor
storage: an op depends on the ops that last wrote the storages it reads. Module hooks name the
layer of forward ops; autograd node hooks name the layer of backward ops. The optimizer is not
traced: one update op per parameter tensor (sgd_update, momentum_update or adam_update)
follows the op that produced its gradient.

MODEL is builtin:mlp, builtin:small_cnn, or FILE.py:FUNCTION where FUNCTION(batch) returns
(model, inputs, loss_fn): inputs a tensor or a tuple of tensors passed to model(*inputs), and
loss_fn(outputs) a scalar loss. Run with Debian's interpreter: /usr/bin/python3 (python3-torch).

Limits: CPU kernels stand in for GPU kernels (the same ATen operators and shapes, but fused
GPU kernels such as cuDNN's LSTM appear as their CPU decomposition); a trace on real tensors
needs the memory and time of one CPU training step at the chosen --batch. A torch without
F.scaled_dot_product_attention (Debian's 1.13) gets one that computes softmax(QK^T/sqrt(d))V
explicitly, so models written for torch 2 trace (as bmm, softmax, bmm).

The file's hyper "input_bytes" is what the model's inputs take (the tensors passed to model()):
the per-step host-to-device copy. Parameters and buffers live on the device and are not copied.
"""

import argparse
import copy
import importlib.util
import json
import math
import sys
from collections import Counter, OrderedDict

try:
    import torch
    import torch.nn as nn
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.stderr.write("export_pytorch_graph: needs PyTorch (Debian: apt install python3-torch; "
                     "run with /usr/bin/python3): %s\n" % e)
    sys.exit(2)

import aten_calls_file  # noqa: E402  (needs torch; beside this script)

try:
    import torch._subclasses.fake_tensor as fake_tensor
except ImportError:  # pragma: no cover - a torch before 1.13
    fake_tensor = None

aten = torch.ops.aten

DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
          torch.int32: "int32", torch.int64: "int64", torch.int8: "int8", torch.uint8: "int8",
          torch.bool: "int8", torch.float64: "fp32"}


# --- Built-in example models --------------------------------------------------------------

def builtin_mlp(batch):
    model = nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(784, 256)), ("relu1", nn.ReLU()),
        ("fc2", nn.Linear(256, 128)), ("relu2", nn.ReLU()),
        ("fc3", nn.Linear(128, 10))]))
    x = torch.randn(batch, 784)
    target = torch.randint(0, 10, (batch,))
    return model, (x,), lambda out: nn.functional.cross_entropy(out, target)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(self.gap(x), 1))


def builtin_small_cnn(batch):
    model = SmallCnn()
    x = torch.randn(batch, 3, 32, 32)
    target = torch.randint(0, 10, (batch,))
    return model, (x,), lambda out: nn.functional.cross_entropy(out, target)


BUILTINS = {"mlp": builtin_mlp, "small_cnn": builtin_small_cnn}


# --- Attention on a torch without F.scaled_dot_product_attention ---------------------------

def explicit_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                       scale=None):
    """F.scaled_dot_product_attention as its documented reference computes it: softmax(Q K^T /
    sqrt(d) + mask) V, which traces as bmm, softmax and bmm (torch 2's fused kernels would be
    one operator Orrery has no type for)."""
    if not explicit_attention.noted:
        explicit_attention.noted = True
        sys.stderr.write("export_pytorch_graph: torch %s has no "
                         "F.scaled_dot_product_attention: traced as softmax(QK^T/sqrt(d))V "
                         "(bmm, softmax, bmm)\n" % torch.__version__)
    scale = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        keep = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool,
                          device=query.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) \
            if attn_mask.dtype == torch.bool else scores + attn_mask
    weights = torch.softmax(scores, dim=-1)
    if dropout_p > 0:
        weights = torch.dropout(weights, dropout_p, True)
    return weights @ value


explicit_attention.noted = False


def install_attention_fallback():
    """Models written for torch 2 call F.scaled_dot_product_attention; Debian's torch 1.13 has
    none. Returns whether the fallback was installed."""
    if hasattr(nn.functional, "scaled_dot_product_attention"):
        return False
    nn.functional.scaled_dot_product_attention = explicit_attention
    return True


# --- Operator mapping ---------------------------------------------------------------------

def name_of(func):
    return func.overloadpacket.__name__  # "convolution", "addmm", "add_"...


VIEW_OPS = {"view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand",
            "unsqueeze", "squeeze", "slice", "select", "split", "split_with_sizes", "chunk",
            "unbind", "as_strided", "detach", "alias", "_unsafe_view", "lift_fresh",
            "unfold", "view_as", "expand_as", "flatten", "narrow", "diagonal", "numpy_T",
            "_to_copy_view", "lift", "lift_fresh_copy", "set_", "resolve_conj", "resolve_neg",
            "_neg_view", "_conj", "movedim", "swapaxes", "squeeze_", "unsqueeze_", "t_",
            "transpose_"}
FACTORY_OPS = {"zeros", "ones", "empty", "full", "scalar_tensor", "zeros_like", "ones_like",
               "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full",
               "arange", "empty_strided", "randn", "rand", "randint", "normal_", "uniform_",
               "bernoulli_", "_local_scalar_dense", "is_nonzero", "equal", "sym_size",
               "sym_stride", "sym_numel", "_has_compatible_shallow_copy_type",
               "new_empty_strided", "device"}
# In-place random fills of an existing tensor: listed as factories (free) when they initialise
# tensors, but inside a step they are kernels: CPU dropout is empty_like + bernoulli_ + div_ + mul
# (ATen's _dropout_impl; native_dropout is CUDA-only in torch 1.13), and the RNG pass costs about
# as much as the other two together.
RNG_FILL_OPS = {"bernoulli_", "uniform_", "normal_", "exponential_", "random_"}
SIMPLE = {  # ATen name -> (Orrery type, which tensor args are the inputs)
    "relu": "relu", "relu_": "relu", "threshold_backward": "relu_bwd",
    "gelu": "gelu", "gelu_backward": "gelu_bwd",
    "tanh": "tanh", "tanh_": "tanh", "tanh_backward": "tanh_bwd",
    "sigmoid": "sigmoid", "sigmoid_": "sigmoid", "sigmoid_backward": "sigmoid_bwd",
    "add": "add", "add_": "add", "sub": "sub", "sub_": "sub", "rsub": "sub",
    "mul": "mul", "mul_": "mul", "div": "div", "div_": "div",
    "sum": "reduce", "mean": "reduce", "amax": "reduce", "max": "reduce",
    "native_dropout": "dropout", "native_dropout_backward": "dropout_bwd",
    "cat": "concat", "stack": "concat",
    "clone": "memcpy", "copy_": "memcpy", "contiguous": "memcpy",
    "where": "elementwise", "masked_fill": "elementwise", "masked_fill_": "elementwise",
    "fill_": "elementwise", "zero_": "elementwise", "exp": "elementwise", "log": "elementwise",
    "sqrt": "elementwise", "rsqrt": "elementwise", "pow": "elementwise", "neg": "elementwise",
    "clamp": "elementwise", "clamp_min": "elementwise", "hardtanh": "elementwise",
    "hardtanh_backward": "elementwise", "leaky_relu": "relu", "leaky_relu_backward": "relu_bwd",
    "silu": "sigmoid", "silu_backward": "sigmoid_bwd", "mse_loss": "elementwise",
    "mse_loss_backward": "elementwise", "sgn": "elementwise", "abs": "elementwise",
    "eq": "elementwise", "ne": "elementwise", "gt": "elementwise", "lt": "elementwise",
    "ge": "elementwise", "le": "elementwise", "bitwise_not": "elementwise",
    "tril": "elementwise", "triu": "elementwise",
}


def tensors_in(obj):
    """Every tensor in an argument structure, in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        out = []
        for o in obj:
            out.extend(tensors_in(o))
        return out
    if isinstance(obj, dict):
        out = []
        for o in obj.values():
            out.extend(tensors_in(o))
        return out
    return []


def shape(t):
    return [int(d) for d in t.shape]


def is_fake(t):
    return fake_tensor is not None and isinstance(t, fake_tensor.FakeTensor)


def storage_key(t):
    try:
        # Fake storages have no data (every data_ptr is 0): the storage object tells them apart.
        return t.storage()._cdata if is_fake(t) else t.storage().data_ptr()
    except Exception:  # sparse or storage-less tensors
        return id(t)


def pair(v, i):
    if isinstance(v, (list, tuple)):
        return int(v[i] if len(v) > i else v[0])
    return int(v)


def to4d(s):
    """conv1d shapes [N, C, L] as [N, C, 1, L] (op_counts.h counts 2-D convolutions)."""
    return s if len(s) == 4 else s[:2] + [1] + s[2:]


def map_op(func, args, out):
    """(orrery type, inputs, output, attrs, per-output ops) for one ATen call.

    Returns a list of op dicts (several for convolution_backward), or None for free ops.
    Each dict: type, inputs (shapes), output (shape), attrs, outs (the result tensors it writes),
    reads (the tensors it reads)."""
    n = name_of(func)
    outs = tensors_in(out)
    ins = tensors_in(args)
    first_out = shape(outs[0]) if outs else []

    def op(t, inputs, output, attrs=None, writes=None, reads=None):
        return {"type": t, "inputs": inputs, "output": output, "attrs": attrs or {},
                "outs": outs if writes is None else writes, "reads": ins if reads is None else reads}

    if n in RNG_FILL_OPS:  # in-place random fills inside a step are real kernels
        return [op("elementwise", [shape(args[0])], shape(args[0]))]
    if n in VIEW_OPS or n in FACTORY_OPS:
        return None
    if n == "convolution" and not args[6]:
        x, w = args[0], args[1]
        if x.dim() not in (3, 4):
            return [op("elementwise", [shape(x), shape(w)], first_out)]
        attrs = {"kernel_h": to4d(shape(w))[2], "kernel_w": to4d(shape(w))[3],
                 "stride_h": pair(args[3], 0), "stride_w": pair(args[3], -1),
                 "pad_h": pair(args[4], 0), "pad_w": pair(args[4], -1)}
        if args[8] != 1:
            attrs["groups"] = int(args[8])
        inputs = [to4d(shape(x)), to4d(shape(w))]
        return [op("conv2d", inputs, to4d(first_out), attrs)]
    if n == "convolution_backward" and not args[7]:
        dy, x, w, mask = args[0], args[1], args[2], args[10]
        if x.dim() not in (3, 4):
            return [op("elementwise", [shape(dy)], shape(x))]
        attrs = {"kernel_h": to4d(shape(w))[2], "kernel_w": to4d(shape(w))[3],
                 "stride_h": pair(args[4], 0), "stride_w": pair(args[4], -1),
                 "pad_h": pair(args[5], 0), "pad_w": pair(args[5], -1)}
        if args[9] != 1:
            attrs["groups"] = int(args[9])
        res = list(out)
        ops = []
        if mask[0] and res[0] is not None:
            ops.append(op("conv2d_bwd_data", [to4d(shape(dy)), to4d(shape(w))], to4d(shape(x)),
                          attrs, [res[0]], [dy, w]))
        if mask[1] and res[1] is not None:
            ops.append(op("conv2d_bwd_filter", [to4d(shape(x)), to4d(shape(dy))],
                          to4d(shape(w)), attrs, [res[1]], [x, dy]))
        if len(mask) > 2 and mask[2] and res[2] is not None:
            ops.append(op("reduce", [shape(dy)], shape(res[2]), {}, [res[2]], [dy]))
        return ops
    if n == "addmm":
        return [op("matmul", [shape(args[1]), shape(args[2]), shape(args[0])], first_out)]
    if n in ("mm", "matmul"):
        return [op("matmul", [shape(args[0]), shape(args[1])], first_out)]
    if n == "bmm":
        return [op("bmm", [shape(args[0]), shape(args[1])], first_out)]
    if n == "baddbmm":
        return [op("bmm", [shape(args[1]), shape(args[2]), shape(args[0])], first_out)]
    if n in ("max_pool2d_with_indices", "avg_pool2d"):
        k = args[1]
        s = args[2] if len(args) > 2 and args[2] else k
        p = args[3] if len(args) > 3 else 0
        attrs = {"kernel_h": pair(k, 0), "kernel_w": pair(k, -1), "stride_h": pair(s, 0),
                 "stride_w": pair(s, -1), "pad_h": pair(p, 0), "pad_w": pair(p, -1)}
        t = "maxpool" if n.startswith("max") else "avgpool"
        return [op(t, [shape(args[0])], first_out, attrs, outs[:1])]
    if n == "_adaptive_avg_pool2d":
        x = shape(args[0])
        attrs = {"kernel_h": max(1, x[2] // first_out[2]), "kernel_w": max(1, x[3] // first_out[3])}
        return [op("avgpool", [x], first_out, attrs)]
    if n in ("max_pool2d_with_indices_backward", "avg_pool2d_backward",
             "_adaptive_avg_pool2d_backward"):
        t = "maxpool_bwd" if n.startswith("max") else "avgpool_bwd"
        return [op(t, [shape(args[1]), shape(args[0])], first_out)]
    if n in ("native_batch_norm", "_native_batch_norm_legit", "native_layer_norm"):
        t = "layernorm" if "layer" in n else "batchnorm"
        return [op(t, [shape(args[0])], first_out, {}, outs[:1])]
    if n in ("native_batch_norm_backward", "native_layer_norm_backward"):
        t = "layernorm_bwd" if "layer" in n else "batchnorm_bwd"
        return [op(t, [shape(args[1]), shape(args[0])], shape(args[1]))]
    if n in ("_softmax", "_log_softmax"):
        return [op("softmax", [shape(args[0])], first_out)]
    if n in ("_softmax_backward_data", "_log_softmax_backward_data"):
        return [op("softmax_bwd", [shape(args[1]), shape(args[0])], first_out)]
    if n in ("nll_loss_forward", "nll_loss2d_forward", "binary_cross_entropy",
             "binary_cross_entropy_with_logits"):
        return [op("cross_entropy", [shape(args[0])], [1], {}, outs[:1])]
    if n in ("nll_loss_backward", "nll_loss2d_backward", "binary_cross_entropy_backward",
             "binary_cross_entropy_with_logits_backward"):
        return [op("cross_entropy_bwd", [shape(args[1])], shape(args[1]))]
    if n == "embedding":
        w, idx = shape(args[0]), shape(args[1])
        idx2 = [1, idx[0]] if len(idx) == 1 else [int(torch.tensor(idx[:-1]).prod()), idx[-1]]
        return [op("embedding_fwd", [w, idx2], first_out)]
    if n == "embedding_dense_backward":
        dy, idx = shape(args[0]), shape(args[1])
        idx2 = [1, idx[0]] if len(idx) == 1 else [int(torch.tensor(idx[:-1]).prod()), idx[-1]]
        return [op("embedding_bwd", [dy, idx2], first_out)]
    if n == "_embedding_bag":
        w, idx, offsets = shape(args[0]), args[1], args[2]
        bags = max(1, int(offsets.numel()))
        per_bag = max(1, idx.numel() // bags)
        return [op("embedding_fwd", [w, [bags, per_bag]], [bags, w[1]], {}, outs[:1])]
    if n in ("_embedding_bag_backward", "_embedding_bag_dense_backward",
             "_embedding_bag_sparse_backward"):
        dy, idx = shape(args[0]), args[1]
        bags = max(1, dy[0])
        return [op("embedding_bwd", [dy, [bags, max(1, idx.numel() // bags)]], first_out)]
    if n == "_to_copy":
        src = args[0]
        dst_dtype = outs[0].dtype if outs else src.dtype
        if dst_dtype != src.dtype:
            return [op("cast", [shape(src)], first_out, {"src_bytes": src.element_size()})]
        return [op("memcpy", [shape(src)], first_out)]
    if n in SIMPLE:
        return [op(SIMPLE[n], [shape(t) for t in ins], first_out)]
    return "unknown"


# --- Tracing ------------------------------------------------------------------------------

class Tracer(TorchDispatchMode):
    def __init__(self, param_owner):
        super().__init__()
        self.ops = []
        self.producer = {}        # storage key -> op index that last wrote it
        self.phase = "forward"
        self.module_stack = []
        self.pending = []         # backward ops not yet given a layer
        self.param_owner = param_owner   # storage key -> (parameter name, tensor)
        self.owned = set()
        self.unknown = Counter()
        self.loss_op = None       # the op that produced the loss
        self.fake = None          # the FakeTensorMode the step runs in (trace(fake=True))
        self.lifted = {}          # id -> fake tensor made from a real one (kept alive)

    def to_fake(self, t):
        """A real tensor the step meets (labels the loss closes over, a constant made in forward)
        as the fake tensor the fake mode keeps for it."""
        if not isinstance(t, torch.Tensor) or is_fake(t):
            return t
        f = self.fake.from_tensor(t)
        if id(f) not in self.lifted:
            self.lifted[id(f)] = f
            self.producer.pop(storage_key(f), None)
        return f

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.fake is None:
            out = func(*args, **kwargs)
        else:
            args, kwargs = tree_map(self.to_fake, (args, kwargs))
            with self.fake:
                out = func(*args, **kwargs)
        # A fresh tensor may reuse the storage of a freed one: forget that one's writer. (Fake
        # storages are told apart by their address, which the allocator reuses at once.)
        in_keys = {storage_key(t) for t in tensors_in(args) + tensors_in(kwargs)}
        for t in tensors_in(out):
            if storage_key(t) not in in_keys:
                self.producer.pop(storage_key(t), None)
        mapped = map_op(func, args, out)
        if mapped == "unknown":
            ins = tensors_in(args)
            outs = tensors_in(out)
            in_keys = {storage_key(t) for t in ins}
            if outs and all(storage_key(t) in in_keys for t in outs):
                return out  # an unknown view: free
            self.unknown[name_of(func)] += 1
            mapped = [{"type": "elementwise", "inputs": [shape(t) for t in ins],
                       "output": shape(outs[0]) if outs else [], "attrs": {}, "outs": outs,
                       "reads": ins}]
        if not mapped:
            return out
        for m in mapped:
            self.record(func, m)
        return out

    def record(self, func, m):
        deps = []
        for t in m["reads"]:
            d = self.producer.get(storage_key(t))
            if d is not None and d not in deps:
                deps.append(d)
        dtype = "fp32"
        for t in m["reads"] + m["outs"]:
            if t.is_floating_point():
                dtype = DTYPES.get(t.dtype, "fp32")
                break
        index = len(self.ops)
        # The loss gradient starts from a constant (ones_like), so nothing ties the first
        # backward ops to the loss: add that dependency, as the step's order demands.
        if self.phase == "backward" and self.loss_op is not None and \
                not any(self.ops[d]["phase"] == "backward" for d in deps):
            deps.append(self.loss_op)
        op = {"name": "%s/%d:%s" % (self.phase, index, name_of(func)), "type": m["type"],
              "phase": self.phase, "dtype": dtype, "inputs": m["inputs"], "output": m["output"],
              "attrs": m["attrs"], "deps": deps, "params": 0, "grads": 0, "layer": ""}
        if self.phase == "forward":
            op["layer"] = self.module_stack[-1] if self.module_stack else ""
            for t in m["reads"]:
                owner = self.param_owner.get(storage_key(t))
                if owner and owner[0] not in self.owned:
                    self.owned.add(owner[0])
                    op["params"] += owner[1].numel()
        else:
            self.pending.append(index)
        self.ops.append(op)
        for t in m["outs"]:
            self.producer[storage_key(t)] = index

    def assign_pending(self, layer):
        for i in self.pending:
            self.ops[i]["layer"] = layer
        self.pending = []


def walk_graph(roots):
    """Autograd nodes reachable from `roots` (grad_fn objects)."""
    seen, stack, order = set(), [r for r in roots if r is not None], []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return order


def trace(model, inputs, loss_fn, optimizer, make_tracer=None, fake=False):
    """Traces one training step; `make_tracer(param_owner)` builds the dispatch mode (default:
    Tracer; CallRecorder also keeps the ATen call behind every op). With `fake`, a copy of the
    model and the inputs become fake tensors first (shapes only: nothing is computed, and an
    operator whose result needs values raises); the model itself is left as it was."""
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    mode = None
    if fake:
        # Not the meta device: ATen takes CPU-only paths on fake CPU tensors (an LSTM projects
        # all time steps' inputs at once on CPU), so the graph is the real step's.
        mode = fake_tensor.FakeTensorMode(throw_on_data_dependent_ops=True)
        with fake_tensor.FakeCopyMode(mode):
            model = copy.deepcopy(model)
        inputs = tuple(mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in inputs)
    model.train()
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    owner = {storage_key(p): (n, p) for n, p in params}
    param_layer = {id(p): n.rsplit(".", 1)[0] if "." in n else "" for n, p in params}
    node_layer = {}
    tracer = (make_tracer or Tracer)(owner)
    tracer.fake = mode

    names = {m: n for n, m in model.named_modules()}
    # Autograd nodes get a discovery number when first seen; a module's nodes are those first
    # seen after its forward began (nodes of inner modules keep the inner, more precise name).
    discovered = {}
    marks = []

    def discover(node):
        if node not in discovered:
            discovered[node] = len(discovered)
        return discovered[node]

    def pre(mod, args):
        tracer.module_stack.append(names[mod] or type(mod).__name__)
        stack = [t.grad_fn for t in tensors_in(args) if t.grad_fn is not None]
        while stack:  # everything that already exists is outside this module
            node = stack.pop()
            if node in discovered:
                continue
            discover(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)
        marks.append(len(discovered))

    def post(mod, _, out):
        layer = tracer.module_stack.pop()
        mark = marks.pop()
        stack = [t.grad_fn for t in tensors_in(out) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if node in seen or discover(node) < mark:
                continue
            seen.add(node)
            node_layer.setdefault(node, layer)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    handles = []
    for m in model.modules():
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))

    with tracer:
        out = model(*inputs)
        loss = loss_fn(out)
        tracer.phase = "backward"
        tracer.loss_op = tracer.producer.get(storage_key(loss))
        for node in walk_graph([loss.grad_fn]):
            var = getattr(node, "variable", None)  # AccumulateGrad of a parameter
            layer = param_layer.get(id(var), node_layer.get(node, "loss")) if var is not None \
                else node_layer.get(node, "loss")
            node.register_hook(lambda gi, go, layer=layer: tracer.assign_pending(layer))
        loss.backward()
        tracer.assign_pending("loss")
    for h in handles:
        h.remove()

    ops = tracer.ops
    update = {"sgd": "sgd_update", "momentum": "momentum_update", "adam": "adam_update"}[optimizer]
    for n, p in params:
        if p.grad is None:
            continue
        src = tracer.producer.get(storage_key(p.grad))
        if src is not None:
            ops[src]["grads"] += p.numel()
            ops[src]["grad_dtype"] = DTYPES.get(p.grad.dtype, "fp32")
            if p.grad.is_sparse:
                ops[src]["sparse_grad"] = True
        ops.append({"name": "optimizer/%d:%s.update" % (len(ops), n), "type": update,
                    "phase": "optimizer", "layer": param_layer[id(p)], "dtype": "fp32",
                    "inputs": [shape(p)], "output": shape(p), "attrs": {},
                    "deps": [src] if src is not None else [], "params": 0, "grads": 0})
    return ops, tracer.unknown, sum(p.numel() for _, p in params)


# --- ATen calls behind the ops, for exact profiling --------------------------------------------
#
# `--calls FILE` keeps, for every op of the graph, the ATen call(s) that execute it: the operator,
# every argument with tensors described by shape, strides, storage size and dtype (integer and
# boolean tensors, such as class labels and pooling indices, keep their values), so
# `scripts/profile_ops.py --calls FILE` can time exactly these calls with the N/M method and
# write profile-database rows keyed like the graph's ops (docs/validation.md).

def tensor_spec(t, ref=None):
    """What it takes to rebuild a tensor like `t` for timing: layout, dtype, and the values of
    integer/boolean tensors (indices and labels must stay valid); float values are random."""
    spec = {"__tensor__": True, "shape": shape(t), "stride": [int(s) for s in t.stride()],
            "offset": int(t.storage_offset()), "dtype": encode_args(t.dtype), "ref": ref,
            "values": None, "requires_grad": bool(t.requires_grad)}
    try:
        spec["storage"] = int(t.storage().size())
    except Exception:  # storage-less tensors: a dense one of the same shape
        spec["storage"] = int(t.numel())
    if not t.is_floating_point() and t.numel() <= (1 << 22):
        spec["values"] = t.detach().clone()
    return spec


def encode_args(obj):
    """Arguments with every tensor replaced by its tensor_spec (other values kept)."""
    if isinstance(obj, torch.Tensor):
        return tensor_spec(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(encode_args(o) for o in obj)
    if isinstance(obj, dict):
        return {k: encode_args(v) for k, v in obj.items()}
    if isinstance(obj, (torch.dtype, torch.memory_format, torch.layout)):
        return {"__torch__": str(obj).replace("torch.", "")}  # torch.save cannot pickle these
    if isinstance(obj, torch.device):
        return {"__device__": str(obj)}
    return obj


# convolution_backward computes up to three results; each becomes its own op, timed alone.
# The bias gradient is the exception: oneDNN computes it inside the weight-gradient kernel
# when the step asks for both, but asked for the bias alone it computes the weight gradient
# again (measured: small_cnn's bias parts cost as much as its weight parts, 1.5 ms per step
# that the step never spends). It is timed as what it is, the sum of dy over N, H and W.
CONV_BWD_PART = {"conv2d_bwd_data": 0, "conv2d_bwd_filter": 1, "reduce": 2}


class CallRecorder(Tracer):
    """A Tracer that also keeps the ATen call behind every op it records (`self.calls`,
    parallel to `self.ops`): {"func": "aten.addmm.default", "args": ..., "kwargs": ...}."""

    def __init__(self, param_owner):
        super().__init__(param_owner)
        self.calls = []
        self._call = None
        self.last_access = {}  # storage key -> index of the last op that read or wrote it

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self._call = (func, args, kwargs or {})
        return super().__torch_dispatch__(func, types, args, kwargs)

    def _encode(self, obj):
        """encode_args, with each tensor's last access in this step ("last": op index, None
        before its first use) and owning parameter ("param"): what sets how far back in the
        step's memory traffic the op finds it (scripts/profile_ops.py --calls-rotate reuse)."""
        if isinstance(obj, torch.Tensor):
            spec = tensor_spec(obj)
            key = storage_key(obj)
            spec["last"] = self.last_access.get(key)
            owner = self.param_owner.get(key)
            spec["param"] = owner[0] if owner else None
            return spec
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._encode(o) for o in obj)
        if isinstance(obj, dict):
            return {k: self._encode(v) for k, v in obj.items()}
        return encode_args(obj)

    def record(self, func, m):
        f, args, kwargs = self._call
        args = list(args)
        if name_of(f) == "convolution_backward":
            part = CONV_BWD_PART.get(m["type"], 0)
            args[10] = [i == part for i in range(3)]
            if part == 2:  # the bias gradient: see CONV_BWD_PART
                f, args, kwargs = torch.ops.aten.sum.dim_IntList, [args[0], [0, 2, 3]], {}
        call = {"func": str(f), "args": self._encode(tuple(args)), "kwargs": self._encode(kwargs)}
        super().record(func, m)
        self.calls.append([call])
        for t in m["reads"] + m["outs"]:
            self.last_access[storage_key(t)] = len(self.ops) - 1


def optimizer_calls(optimizer, shp, lr=0.01, momentum=0.9, betas=(0.9, 0.999), eps=1e-8):
    """The kernels torch.optim's single-tensor update runs for one parameter of shape `shp`
    (torch 1.13: foreach is off by default), as ATen calls on shared state tensors."""
    def t(ref):
        return {"__tensor__": True, "shape": list(shp), "stride": None, "offset": 0,
                "storage": None, "dtype": {"__torch__": "float32"}, "ref": ref, "values": None}

    def call(func, *args, **kwargs):
        return {"func": func, "args": args, "kwargs": kwargs}
    if optimizer == "sgd":
        return [call("aten.add_.Tensor", t("p"), t("g"), alpha=-lr)]
    if optimizer == "momentum":
        return [call("aten.mul_.Scalar", t("buf"), momentum),
                call("aten.add_.Tensor", t("buf"), t("g"), alpha=1.0),
                call("aten.add_.Tensor", t("p"), t("buf"), alpha=-lr)]
    return [call("aten.mul_.Scalar", t("m"), betas[0]),
            call("aten.add_.Tensor", t("m"), t("g"), alpha=1 - betas[0]),
            call("aten.mul_.Scalar", t("v"), betas[1]),
            call("aten.addcmul_.default", t("v"), t("g"), t("g"), value=1 - betas[1]),
            call("aten.sqrt.default", t("v")),
            call("aten.div_.Scalar", t("d"), 0.5),
            call("aten.add_.Scalar", t("d"), eps),
            call("aten.addcdiv_.default", t("p"), t("m"), t("d"), value=-lr)]


def _numel(shp):
    n = 1
    for d in shp:
        n *= int(d)
    return n


STATE_TENSORS = {"sgd": 2, "momentum": 3, "adam": 4}  # parameter-sized tensors per parameter


def write_calls(path, name, recorder, ops, optimizer, params):
    """Saves every op's key (as the graph file has it) and its ATen calls (aten_calls_file.py).

    Each tensor argument also gets "reuse": the bytes of memory traffic the step makes
    between the tensor's previous access and this op (the ops' input and output sizes in
    execution order; a parameter first read in forward was last updated by the previous
    step's optimizer; state tensors of the optimizer were last touched a whole step ago),
    capped at the step's footprint (parameter-sized state tensors plus every forward output).
    The profiler can rotate copies of each tensor over that distance, so an op finds its
    inputs as far out of cache as in the step (profile_ops.py --calls-rotate reuse)."""
    traffic = [4 * (sum(_numel(s) for s in op["inputs"]) + _numel(op["output"])) for op in ops]
    before = [0]
    for t in traffic:
        before.append(before[-1] + t)
    total = before[-1]
    footprint = 4 * (STATE_TENSORS[optimizer] * sum(p.numel() for _, p in params)) + sum(
        4 * _numel(op["output"]) for op in ops if op["phase"] == "forward")
    update_of = {}
    for i, op in enumerate(ops):
        if op["phase"] == "optimizer":
            update_of[op["name"].split(":", 1)[1][:-len(".update")]] = i

    def distance(last, here, param):
        if last is not None:
            d = before[here] - before[last + 1]
        elif param in update_of:  # last written by the previous step's update
            d = total - before[update_of[param] + 1] + before[here]
        else:  # inputs and labels: read once per step
            d = total
        return min(max(d, 0), footprint)

    def annotate(obj, here):
        if isinstance(obj, dict) and obj.get("__tensor__"):
            obj["reuse"] = distance(obj.pop("last", None), here, obj.pop("param", None))
        elif isinstance(obj, dict):
            for v in obj.values():
                annotate(v, here)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                annotate(v, here)

    grad_last = {n: recorder.last_access.get(storage_key(p.grad)) for n, p in params
                 if p.grad is not None}
    param_last = {n: recorder.last_access.get(storage_key(p)) for n, p in params}
    records = []
    for i, op in enumerate(ops):
        if i < len(recorder.calls):
            calls = recorder.calls[i]
            for c in calls:
                annotate(c["args"], i)
                annotate(c["kwargs"], i)
        elif op["phase"] == "optimizer":
            calls = optimizer_calls(optimizer, op["inputs"][0])
            pname = op["name"].split(":", 1)[1][:-len(".update")]
            last = {"p": param_last.get(pname), "g": grad_last.get(pname)}
            for c in calls:
                for a in list(c["args"]) + list(c["kwargs"].values()):
                    if isinstance(a, dict) and a.get("__tensor__"):
                        r = a["ref"]
                        a["reuse"] = distance(last[r], i, None) if r in last else \
                            min(total, footprint)
        else:
            calls = []
        records.append({"name": op["name"], "type": op["type"], "dtype": op["dtype"],
                        "inputs": op["inputs"], "output": op["output"], "attrs": op["attrs"],
                        "phase": op["phase"], "calls": calls})
    aten_calls_file.save(path, {"model": name, "torch": str(torch.__version__),
                                "footprint": footprint, "ops": records})


def to_json(name, batch, hyper, ops):
    lines = []
    for op in ops:
        j = OrderedDict([("name", op["name"]), ("type", op["type"])])
        if op["phase"] != "forward":
            j["phase"] = op["phase"]
        if op["layer"]:
            j["layer"] = op["layer"]
        if op["dtype"] != "fp32":
            j["dtype"] = op["dtype"]
        if op["inputs"]:
            j["inputs"] = op["inputs"]
        if op["output"]:
            j["output"] = op["output"]
        if op["attrs"]:
            j["attrs"] = op["attrs"]
        for k in ("params", "grads"):
            if op.get(k):
                j[k] = op[k]
        if op.get("grad_dtype", "fp32") != "fp32" and op.get("grads"):
            j["grad_dtype"] = op["grad_dtype"]
        if op.get("sparse_grad"):
            j["sparse_grad"] = True
        if op["deps"]:
            j["deps"] = [ops[d]["name"] for d in op["deps"]]
        lines.append(json.dumps(j))
    head = OrderedDict([("format", "orrery-model"), ("version", 1), ("name", name),
                        ("batch", batch), ("hyper", hyper)])
    text = json.dumps(head)[:-1] + ', "ops": [\n    ' + ",\n    ".join(lines) + "\n  ]}\n"
    return text


def counting_fallback(run_fallback_kernel, computed):
    """FakeTensorMode runs an operator without a shape-only kernel on real zero-filled tensors:
    counts them, to say so."""
    def run(fake_mode, func, *rest):
        computed[name_of(func)] += 1
        return run_fallback_kernel(fake_mode, func, *rest)
    return run


def load_factory(spec):
    if spec.startswith("builtin:"):
        key = spec.split(":", 1)[1]
        if key not in BUILTINS:
            raise SystemExit("export_pytorch_graph: unknown builtin model %r (known: %s)"
                             % (key, ", ".join(sorted(BUILTINS))))
        return BUILTINS[key], key
    path, sep, fn = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise SystemExit("export_pytorch_graph: MODEL must be builtin:NAME or FILE.py:FUNCTION, "
                         "got %r" % spec)
    loader = importlib.util.spec_from_file_location("user_model", path)
    if loader is None:
        raise SystemExit("export_pytorch_graph: cannot load %s" % path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    if not hasattr(module, fn):
        raise SystemExit("export_pytorch_graph: %s has no function %r" % (path, fn))
    return getattr(module, fn), fn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="builtin:mlp, builtin:small_cnn or FILE.py:FUNCTION")
    ap.add_argument("-o", "--output", required=True, help="orrery-model JSON file to write")
    ap.add_argument("--batch", type=int, default=8, help="samples per step (default 8)")
    ap.add_argument("--optimizer", choices=["sgd", "momentum", "adam"], default="sgd",
                    help="update op per parameter tensor (default sgd)")
    ap.add_argument("--name", help="model name in the file (default: the builtin or function)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calls", help="also save the ATen calls behind every op here (a file that "
                    "loads without running code; for scripts/profile_ops.py --calls); traces "
                    "on real tensors, whose index and label values the file keeps")
    ap.add_argument("--real", action="store_true", help="trace on real CPU tensors (computes "
                    "the step) rather than on fake ones (shapes only)")
    a = ap.parse_args(argv)
    if a.batch < 1:
        ap.error("--batch must be >= 1")
    install_attention_fallback()
    torch.manual_seed(a.seed)
    factory, default_name = load_factory(a.model)
    model, inputs, loss_fn = factory(a.batch)
    # What the step copies from the host: the inputs alone. Without it, a reader would take the
    # first op's first input, which for a language model is its embedding table.
    input_bytes = sum(t.numel() * t.element_size() for t in tensors_in(inputs))
    recorder = []
    make = (lambda owner: recorder.append(CallRecorder(owner)) or recorder[-1]) if a.calls \
        else None
    fake = not (a.real or a.calls)
    if fake and fake_tensor is None:
        sys.stderr.write("export_pytorch_graph: torch %s has no FakeTensorMode: tracing on real "
                         "CPU tensors\n" % torch.__version__)
        fake = False
    computed = Counter()
    if fake:
        fake_tensor.run_fallback_kernel = counting_fallback(fake_tensor.run_fallback_kernel,
                                                            computed)
    try:
        ops, unknown, nparams = trace(model, inputs, loss_fn, a.optimizer, make, fake)
    except Exception as e:
        if not fake:
            raise
        why = (str(e).strip().split("\n") or [""])[0][:200]
        sys.stderr.write("export_pytorch_graph: the step does not trace on fake tensors (%s: %s); "
                         "tracing it on real CPU tensors\n" % (type(e).__name__, why))
        computed.clear()
        ops, unknown, nparams = trace(model, inputs, loss_fn, a.optimizer, make)
    if computed:
        sys.stderr.write("export_pytorch_graph: torch %s has no shape-only kernel for %s: run on "
                         "zero-filled CPU tensors\n" % (torch.__version__, ", ".join(
                             "%s x%d" % kv for kv in sorted(computed.items()))))
    if a.calls:
        write_calls(a.calls, a.name or default_name, recorder[0], ops, a.optimizer,
                    [(n, p) for n, p in model.named_parameters() if p.requires_grad])
    hyper = OrderedDict([("source", a.model), ("optimizer", a.optimizer),
                         ("torch", torch.__version__), ("input_bytes", input_bytes)])
    with open(a.output, "w") as f:
        f.write(to_json(a.name or default_name, a.batch, hyper, ops))
    if unknown:
        sys.stderr.write("export_pytorch_graph: counted as elementwise (no Orrery type): %s\n"
                         % ", ".join("%s x%d" % kv for kv in sorted(unknown.items())))
    phases = Counter(op["phase"] for op in ops)
    print("%s: %d ops (%d forward, %d backward, %d optimizer), %d parameters"
          % (a.output, len(ops), phases["forward"], phases["backward"], phases["optimizer"],
             nparams))
    return 0


if __name__ == "__main__":
    sys.exit(main())
