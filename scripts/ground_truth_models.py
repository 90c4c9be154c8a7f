#!/usr/bin/python3
"""The models of Orrery's real-hardware validation loop (docs/validation.md).

Each factory takes the batch size and returns (model, inputs, loss_fn): `inputs` a tuple passed
to model(*inputs), `loss_fn(outputs)` the scalar loss. That is the FILE.py:FUNCTION contract of
scripts/export_pytorch_graph.py, so the very same definitions are

  - trained for real by scripts/ground_truth.py (the measured iteration times), and
  - traced by the exporter (the training-step graphs Orrery replays),

and nothing can drift between what is measured and what is predicted. Inputs are fixed random
tensors, as in Tianshu: Towards Accurate Measuring, Modeling and Simulation of Deep Neural
Networks (Huang, Xu, Guan, EMSS 2024; section 4.1), which replaces data loading with random
tensors; so data loading is not part of a step.

Sizes are chosen for one CPU core (Debian's python3-torch, reference BLAS for GEMMs, oneDNN for
convolutions): each step takes tens to hundreds of milliseconds, so many repetitions fit in a
few minutes. Run with Debian's interpreter, /usr/bin/python3.
"""

from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

# name -> (factory, default batch, one-line description); filled by the @model decorator.
MODELS = OrderedDict()


def model(name, batch, description):
    """Registers a factory under `name` with its default batch size."""
    def register(fn):
        MODELS[name] = (fn, batch, description)
        return fn
    return register


def _classification(net, x, classes, batch):
    """(model, inputs, loss_fn) for a classifier trained with cross-entropy on fixed labels
    (kept as loss_fn.target, so to_device can move them)."""
    def loss_fn(out):
        return F.cross_entropy(out, loss_fn.target)
    loss_fn.target = torch.randint(0, classes, (batch,))
    return net, (x,), loss_fn


@model("mlp", 64, "MLP 784-256-128-10, ReLU (MNIST-sized)")
def mlp(batch):
    net = nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(784, 256)), ("relu1", nn.ReLU()),
        ("fc2", nn.Linear(256, 128)), ("relu2", nn.ReLU()),
        ("fc3", nn.Linear(128, 10))]))
    return _classification(net, torch.randn(batch, 784), 10, batch)


class SmallCnn(nn.Module):
    """Two conv-BN-ReLU blocks with max pooling, global average pooling, a linear head."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(self.gap(x), 1))


@model("small_cnn", 32, "CNN conv3x3(32)-BN-ReLU-pool, conv3x3(64)-BN-ReLU-pool, GAP, FC; 32x32")
def small_cnn(batch):
    return _classification(SmallCnn(), torch.randn(batch, 3, 32, 32), 10, batch)


@model("resnet18", 8, "torchvision ResNet-18, 10 classes, 64x64 images (reduced resolution)")
def resnet18(batch):
    import torchvision  # only this model needs it (python3-torchvision)
    net = torchvision.models.resnet18(num_classes=10)
    return _classification(net, torch.randn(batch, 3, 64, 64), 10, batch)


class LstmClassifier(nn.Module):
    """A one-layer LSTM over a sequence of feature vectors, classified from its last output."""

    def __init__(self, features=64, hidden=128, classes=10):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


@model("lstm", 16, "LSTM 64->128, 1 layer, 32 time steps, linear head on the last step")
def lstm(batch):
    return _classification(LstmClassifier(), torch.randn(batch, 32, 64), 10, batch)


class TransformerClassifier(nn.Module):
    """A small transformer encoder (post-norm, ReLU FFN) over a sequence, mean-pooled."""

    def __init__(self, d_model=128, heads=4, ff=256, layers=2, classes=10, dropout=0.1):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, classes)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(1))


@model("transformer", 8, "transformer encoder, 2 layers, d=128, 4 heads, FFN 256, 64 tokens")
def transformer(batch):
    return _classification(TransformerClassifier(), torch.randn(batch, 64, 128), 10, batch)


def to_device(model, inputs, loss_fn, device):
    """The model, its inputs and its labels moved to `device` (e.g. "cuda")."""
    model.to(device)
    inputs = tuple(x.to(device) for x in inputs)
    if hasattr(loss_fn, "target"):
        loss_fn.target = loss_fn.target.to(device)
    return model, inputs, loss_fn


def build(name, batch=None, seed=0):
    """The model `name` at `batch` (default: its registered batch), seeded for repeatability."""
    if name not in MODELS:
        raise KeyError("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))
    fn, default_batch, _ = MODELS[name]
    torch.manual_seed(seed)
    return fn(batch or default_batch)
