#!/usr/bin/python3
"""Checks Orrery's software-stack profiles (framework:) against published training throughputs.

    /usr/bin/python3 scripts/validate_frameworks.py                     # the table
    /usr/bin/python3 scripts/validate_frameworks.py --update-doc docs/validation.md

Each row is a throughput NVIDIA's DeepLearningExamples publish for one framework, GPU, precision
and batch (BERT-large SQuAD fine-tuning at sequence 384; ResNet-50 v1.5 ImageNet training at
224 x 224), simulated from the model, the GPUs, the precision, the batch and the framework's
profile alone: nothing here is fitted. Rows are single-GPU and one 8-GPU server (DGX-1 or
DGX A100: data-parallel all-reduce over NVLink). Data loading is not simulated (the runs used
DALI or TFRecords with prefetching).

Needs the built binary (scripts/build); about two minutes on 2 cores.
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_runs  # noqa: E402

BEGIN = "<!-- framework-validation:begin (scripts/validate_frameworks.py --update-doc) -->"
END = "<!-- framework-validation:end -->"

# NVIDIA/DeepLearningExamples at 729963dd (2024-04-04): the README of each model and framework.
DLE = "NVIDIA DeepLearningExamples"
PT_BERT = DLE + " PyTorch/LanguageModeling/BERT (pytorch 21.11)"
TF1_BERT = DLE + " TensorFlow/LanguageModeling/BERT (tensorflow 20.06-tf1)"
TF2_BERT = DLE + " TensorFlow2/LanguageModeling/BERT (tensorflow 21.02-tf2)"
PT_RN50 = DLE + " PyTorch/Classification/ConvNets/resnet50v1.5 (pytorch 21.03)"
TF1_RN50 = DLE + " TensorFlow/Classification/ConvNets/resnet50v1.5 (tensorflow 20.06-tf1)"
MX_RN50 = DLE + " MxNet/Classification/RN50v1.5 (mxnet 22.10 on A100, 20.12 on V100)"

# FSDP: foundation-model-stack/fms-fsdp README at 4ffb9bdf (the eager table, 128 A100 80GB
# with 400 Gb/s per node; the numbers of the PyTorch blog "Maximizing training throughput using
# PyTorch FSDP"), and pytorch/torchtitan docs/performance.md at 1ea476e9 (64 A100 80GB, FSDP2).
FMS = "foundation-model-stack/fms-fsdp README (FSDP, PyTorch nightly 2024-03)"
TITAN = "pytorch/torchtitan docs/performance.md (FSDP2, 2024-04)"

# The DLE TensorFlow scripts run with XLA (use_xla=true in every preset; the ResNet-50 table's
# header says so): TensorFlow 1 graph mode plus XLA's fusion.
TF1_XLA = "{base: tensorflow1, fused: {elementwise: true, casts: true}}"
# NVIDIA's PyTorch BERT: Apex's fused LAMB/Adam and layer norm, and its fused bias-GeLU, plus
# the eager rest; ResNet-50 in PyTorch runs stock modules.
PT_NGC = "pytorch-ngc"

# (source, framework, label, model, device, gpus, precision, batch, published samples/s)
ROWS = [
    # BERT-large, SQuAD v1.1 fine-tuning, sequence 384.
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "A100-SXM4-80GB", 1, "tf32", 32, 61.5),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "A100-SXM4-80GB", 1, "amp", 32, 110.5),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "A100-SXM4-80GB", 8, "tf32", 32, 469.8),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "A100-SXM4-80GB", 8, "amp", 32, 846.7),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "V100-SXM2-32GB", 1, "fp32", 8, 12.0),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "V100-SXM2-32GB", 1, "amp", 16, 52.0),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "V100-SXM2-32GB", 8, "fp32", 8, 85.5),
    (PT_BERT, PT_NGC, "pytorch-ngc", "bert", "V100-SXM2-32GB", 8, "amp", 16, 382.0),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "A100-SXM4-40GB", 1, "amp", 32, 102.26),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "A100-SXM4-40GB", 1, "tf32", 16, 61.364),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "A100-SXM4-40GB", 8, "amp", 32, 767.071),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "A100-SXM4-40GB", 8, "tf32", 16, 440.47),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2", 1, "amp", 4, 29.74),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2", 1, "fp32", 2, 7.36),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2-32GB", 1, "amp", 24, 51.02),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2-32GB", 1, "fp32", 10, 10.42),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2-32GB", 8, "amp", 24, 314.6),
    (TF1_BERT, TF1_XLA, "tensorflow1 + XLA", "bert", "V100-SXM2-32GB", 8, "fp32", 10, 79.37),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2", 1, "amp", 6, 39.10),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2", 1, "fp32", 3, 9.85),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2-32GB", 1, "amp", 12, 47.06),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2-32GB", 1, "fp32", 8, 11.11),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2-32GB", 8, "amp", 12, 330.29),
    (TF2_BERT, "tensorflow2-xla", "tensorflow2-xla", "bert", "V100-SXM2-32GB", 8, "fp32", 8, 85.91),
    # ResNet-50 v1.5, ImageNet training at 224 x 224.
    (PT_RN50, "pytorch", "pytorch", "resnet50", "A100-SXM4-80GB", 1, "tf32", 256, 938),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "A100-SXM4-80GB", 1, "amp", 256, 2470),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "A100-SXM4-80GB", 8, "tf32", 256, 7248),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "A100-SXM4-80GB", 8, "amp", 256, 16621),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "V100-SXM2", 1, "fp32", 112, 367),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "V100-SXM2", 1, "amp", 256, 1200),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "V100-SXM2", 8, "fp32", 112, 2855),
    (PT_RN50, "pytorch", "pytorch", "resnet50", "V100-SXM2", 8, "amp", 256, 8322),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "A100-SXM4-40GB", 1, "tf32", 256, 909),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "A100-SXM4-40GB", 1, "amp", 256, 2375),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "A100-SXM4-40GB", 8, "tf32", 256, 7000),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "A100-SXM4-40GB", 8, "amp", 256, 17400),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "V100-SXM2", 1, "fp32", 128, 412),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "V100-SXM2", 1, "amp", 256, 1270),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "V100-SXM2", 8, "fp32", 128, 3170),
    (TF1_RN50, TF1_XLA, "tensorflow1 + XLA", "resnet50", "V100-SXM2", 8, "amp", 256, 9510),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "A100-SXM4-80GB", 1, "amp", 512, 3410.52),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "A100-SXM4-80GB", 1, "tf32", 512, 1055.78),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "A100-SXM4-80GB", 8, "amp", 512, 26673.72),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "A100-SXM4-80GB", 8, "tf32", 512, 8247.44),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "V100-SXM2", 1, "amp", 192, 1376),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "V100-SXM2", 1, "fp32", 96, 384),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "V100-SXM2", 8, "amp", 192, 10723),
    (MX_RN50, "mxnet", "mxnet", "resnet50", "V100-SXM2", 8, "fp32", 96, 3005),
    # Language models under PyTorch FSDP (full sharding, bf16), tokens/s per GPU; batch is the
    # micro-batch per GPU (no gradient accumulation), full activation checkpointing or none.
    (FMS, "pytorch-fsdp", "pytorch-fsdp", "llm:llama2_70b:4096:full:400Gbps", "A100-SXM4-80GB",
     128, "bf16", 2, 370),
    (TITAN, "pytorch-fsdp", "pytorch-fsdp", "llm:llama2_70b:4096:full", "A100-SXM4-80GB", 64,
     "bf16", 2, 353),
    (TITAN, "pytorch-fsdp", "pytorch-fsdp", "llm:llama2_13b:4096:none", "A100-SXM4-80GB", 64,
     "bf16", 2, 2162),
]


def llm_scenario(model, device, gpus, batch, framework):
    """A language model under FSDP: full sharding over every GPU, no tensor or pipeline split."""
    _, name, seq, recompute, *nic = model.split(":")
    server = ", server: {nic: {count: %d}}" % (int(nic[0][:-4]) // 200) if nic else ""
    lines = ["name: framework-validation",
             "platform: {preset: dgx-a100, servers: %d%s}" % (gpus // 8, server),
             "device: " + device,
             "workload: {type: llm, model: %s, seq_len: %s, micro_batch: %d, global_batch: %d}"
             % (name, seq, batch, batch * gpus),
             "strategy: {zero: 3, recompute: %s, replicas: one, collectives: {mode: analytical}}"
             % recompute,
             "framework: " + framework]
    return "\n".join(lines) + "\n"


def scenario(model, device, gpus, precision, batch, framework):
    """The scenario text of one row."""
    if model.startswith("llm:"):
        return llm_scenario(model, device, gpus, batch, framework)
    if gpus == 1:
        platform = "{preset: pcie-server, servers: 1, server: {gpus: 1}}"
    else:
        platform = "{preset: %s, servers: 1}" % ("dgx-a100" if device.startswith("A100") else "dgx1-v100")
    if model == "bert":
        # SQuAD: BERT-large with the span head at sequence 384, Adam (the fine-tuning scripts').
        workload = ("{type: model, model: bert_large, seq_len: 384, head: qa, batch: %d, "
                    "optimizer: adam}" % batch)
    else:
        workload = "{type: model, model: resnet50, batch: %d, optimizer: momentum}" % batch
    lines = ["name: framework-validation", "platform: " + platform, "device: " + device,
             "workload: " + workload, "strategy: {type: allreduce, bucket: 25MiB}",
             "framework: " + framework]
    if precision == "amp":
        lines.append("precision: amp")
    # TF32: FP32 tensors on the A100's TF32 Tensor Cores (PyTorch 1.11 and TensorFlow 2.4+ allow
    # it for GEMMs and convolutions by default); FP32 on the V100's CUDA cores.
    lines.append("cost_model: {allow_tf32: %s}" % ("true" if precision == "tf32" else "false"))
    return "\n".join(lines) + "\n"


def simulate(orrery, row, tmp):
    source, framework, label, model, device, gpus, precision, batch, published = row
    stdout = published_runs.run_scenario(
        orrery, scenario(model, device, gpus, precision, batch, framework), tmp, label)
    m = re.search(r"Iteration time\s+([\d.]+)\s*(ms|s|us)", stdout)
    if not m:
        sys.exit("%s: no iteration time in:\n%s" % (label, stdout))
    seconds = float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[m.group(2)]
    if model.startswith("llm:"):
        return batch * int(model.split(":")[2]) / seconds  # tokens/s per GPU
    return batch * gpus / seconds


def model_name(model):
    if model == "bert":
        return "BERT-large SQuAD"
    if model == "resnet50":
        return "ResNet-50"
    _, name, seq, recompute, *_ = model.split(":")
    return "%s, seq %s, recompute %s (tokens/s/GPU)" % (name, seq, recompute)


def table(results):
    lines = ["Predicted against published samples/s, each row simulated from its setup and the "
             "framework's profile (error = predicted / published - 1; + is too fast):", "",
             "| framework | model | GPU | GPUs | precision | batch | published | predicted | error |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row, predicted in results:
        source, framework, label, model, device, gpus, precision, batch, published = row
        lines.append("| %s | %s | %s | %d | %s | %d | %.1f | %.1f | %+.0f%% |" % (
            label, model_name(model), device, gpus, precision,
            batch, published, predicted, 100 * (predicted / published - 1)))
    lines += ["", "By framework: median |error| and median signed error, [rows]:", "",
              "| framework | BERT-large | ResNet-50 | language models | all |",
              "|---|---|---|---|---|"]
    labels = []
    for row, _ in results:
        if row[2] not in labels:
            labels.append(row[2])

    def cell(errs):
        if not errs:
            return "-"
        return "%.0f%% / %+.0f%% [%d]" % (100 * statistics.median(abs(e) for e in errs),
                                          100 * statistics.median(errs), len(errs))

    for label in labels:
        kind = lambda m: m if m in ("bert", "resnet50") else "llm"
        e = {k: [p / r[8] - 1 for r, p in results if r[2] == label and kind(r[3]) == k]
             for k in ("bert", "resnet50", "llm")}
        lines.append("| %s | %s | %s | %s | %s |" % (label, cell(e["bert"]), cell(e["resnet50"]),
                                                       cell(e["llm"]),
                                                       cell(e["bert"] + e["resnet50"] + e["llm"])))
    allerr = [p / r[8] - 1 for r, p in results]
    lines.append("| every row | | | | %s |" % cell(allerr))
    return "\n".join(lines) + "\n"


def main():
    published_runs.main(
        __doc__.split("\n\n")[0], ROWS, simulate, table, BEGIN, END,
        lambda row, p: "  %-18s %-9s %-15s %d GPU %-4s batch %3d: %.1f (published %.1f)" % (
            row[2], row[3], row[4], row[5], row[6], row[7], p, row[8]))


if __name__ == "__main__":
    main()
