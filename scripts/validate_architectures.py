#!/usr/bin/python3
"""Checks the newer language-model architectures against published training throughputs.

    /usr/bin/python3 scripts/validate_architectures.py                     # the table
    /usr/bin/python3 scripts/validate_architectures.py --update-doc docs/validation.md

Each row is a tokens/s per GPU that NVIDIA publishes for one model, system, precision and
parallel plan (Megatron-Bridge's performance summary, NVIDIA's DGX Cloud benchmarking recipes,
the Megatron-Core MoE model zoo), simulated from the model, the GPUs and the plan alone under
the megatron-te profile: nothing here is fitted. Collectives are priced analytically and one
data-parallel replica is simulated in full (as orrery plan does). Pipelines of layers that do
not split into the published virtual stages run as plain 1F1B (noted in the row).

Needs the built binary (scripts/build); under a minute on 2 cores.
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_runs  # noqa: E402

BEGIN = "<!-- architecture-validation:begin (scripts/validate_architectures.py --update-doc) -->"
END = "<!-- architecture-validation:end -->"

MB = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary(-archive).md"
DGXC = "NVIDIA/dgxc-benchmarking README (v25.05.05, NeMo 25.04)"
ZOO = "Megatron-MoE-ModelZoo best_practice/qwen3 (linked from Megatron-LM's MoE README)"

H100 = "{preset: dgx-h100, servers: %d}"
# A DGX GB200 or GB300 system of N GPUs: racks of 64 GPUs as NVIDIA's benchmarks use them.
GB200 = ("{preset: gb200-nvl72, servers: %d, server: {gpus: 64, cpu: {sockets: 32}, "
         "nic: {count: 64}}}")
# Fewer than 64: one rack's first trays (4 GPUs and 2 Graces each).
GB200_PART = ("{preset: gb200-nvl72, servers: 1, server: {gpus: %d, cpu: {sockets: %d}, "
              "nic: {count: %d}}}")
GB300 = GB200.replace("gb200", "gb300")

# (source, release, model, label, system, gpus, precision, seq, gbs, mbs, plan, published)
# plan: strategy keys beyond the batch; published: tokens/s per GPU.
ROWS = [
    # DeepSeek-V3 (BF16, no MTP in the DGXC runs; NeMo 25.04's recipe: ETP 1 with TP 2).
    (DGXC, "25.05.05", "deepseek_v3", "DeepSeek-V3", "H100", 512, "bf16", 4096, 4096, 1,
     "tp: 2, pp: 8, ep: 64, etp: 1, sequence_parallel: true", 669),
    (DGXC, "25.05.05", "deepseek_v3", "DeepSeek-V3", "H100", 1024, "bf16", 4096, 8192, 1,
     "tp: 2, pp: 16, ep: 64, etp: 1, sequence_parallel: true", 630),
    (DGXC, "25.05.05", "deepseek_v3", "DeepSeek-V3", "GB200", 256, "bf16", 4096, 2048, 1,
     "tp: 2, pp: 4, ep: 64, etp: 1, sequence_parallel: true", 958),
    (MB, "25.11", "deepseek_v3", "DeepSeek-V3 (VP 4 as 1F1B)", "GB200", 256, "bf16", 4096, 4096,
     1, "pp: 4, ep: 64", 3139),
    # Qwen3 MoE (FP8 current scaling on H100; BF16 on GB200).
    (MB, "26.06", "qwen3_30b_a3b", "Qwen3-30B-A3B", "H100", 16, "fp8-cs", 4096, 1024, 1,
     "ep: 16", 8826),
    (MB, "26.04.01", "qwen3_235b_a22b", "Qwen3-235B-A22B (VP 4 as 1F1B)", "H100", 256, "fp8-cs",
     4096, 8192, 1, "tp: 2, pp: 8, ep: 32, etp: 1, sequence_parallel: true", 1712),
    (MB, "25.11", "qwen3_235b_a22b", "Qwen3-235B-A22B (VP 3 as 1F1B)", "GB200", 256, "bf16",
     4096, 8192, 1, "pp: 8, ep: 32", 4916),
    (ZOO, "2026-05", "qwen3_235b_a22b", "Qwen3-235B-A22B, DeepEP (VP 4 as 1F1B)", "H100", 256,
     "bf16", 4096, 2048, 1,
     "tp: 2, pp: 8, ep: 32, etp: 1, sequence_parallel: true, moe_dispatcher: deepep, "
     "recompute_modules: [layernorm, moe_act]", 1663),
    # Nemotron-H 56B (FP8 per-tensor current scaling), TP 8, 3 sequences per GPU pair... GBS 3 x GPUs.
    (DGXC, "25.05.05", "nemotron_h_56b", "Nemotron-H 56B", "H100", 32, "fp8-cs", 8192, 96, 1,
     "tp: 8, sequence_parallel: true", 1625),
    (DGXC, "25.05.05", "nemotron_h_56b", "Nemotron-H 56B", "H100", 256, "fp8-cs", 8192, 768, 1,
     "tp: 8, sequence_parallel: true", 1546),
    # Nemotron-4 (BF16).
    (DGXC, "25.05.05", "nemotron4_15b", "Nemotron-4 15B", "H100", 16, "bf16", 4096, 64, 2,
     "tp: 2, sequence_parallel: true", 5966),
    (DGXC, "25.05.05", "nemotron4_340b", "Nemotron-4 340B", "H100", 256, "bf16", 4096, 64, 1,
     "tp: 8, pp: 8, schedule: interleaved, virtual_stages: 12, sequence_parallel: true", 222),
    # Grok-1 (BF16, seq 8192, TP 4 with its experts split the same way).
    (DGXC, "25.05.05", "grok1", "Grok-1", "GB200", 128, "bf16", 8192, 256, 1,
     "tp: 4, ep: 8, sequence_parallel: true", 2237),
    # Llama 3 70B under Megatron-FSDP (FSDP over all 64 GPUs, FP8 current scaling, 8192 tokens),
    # a run whose memory the verdict once refused; the recipe offloads 20 layers' activations
    # (Megatron-Bridge's performance configs, llama3_workload_base_configs.py, GB300 FP8_CS).
    (MB, "25.11", "llama3_70b", "Llama 3 70B, FSDP", "GB300", 64, "fp8-cs", 8192, 256, 2,
     "zero: 3, offload_activations: 20", 4520),
    # Fine-tuning Llama 3 70B (FP8; sequences of 4096; the same release's SFT and LoRA tables;
    # LoRA of rank 32 on the QKV, output and MLP layers, NeMo's default).
    (MB, "25.11", "llama3_70b", "Llama 3 70B, SFT", "GB200", 32, "fp8-cs", 4096, 32, 1,
     "pp: 8, schedule: interleaved, virtual_stages: 10, training: sft", 3864),
    (MB, "25.11", "llama3_70b", "Llama 3 70B, LoRA", "GB200", 8, "fp8-cs", 4096, 32, 1,
     "pp: 2, schedule: interleaved, virtual_stages: 20, training: lora", 6206),
    (MB, "25.11", "llama3_70b", "Llama 3 70B, LoRA", "H100", 8, "fp8-cs", 4096, 32, 1,
     "tp: 2, pp: 4, schedule: interleaved, virtual_stages: 20, sequence_parallel: true, "
     "training: lora", 2643),
    # gpt-oss-120b (BF16).
    (MB, "26.04.01", "gpt_oss_120b", "gpt-oss-120b", "H100", 64, "bf16", 4096, 1280, 1,
     "pp: 4, ep: 8", 5824),
]


def scenario(row):
    (_, _, model, _, system, gpus, precision, seq, gbs, mbs, plan, _) = row
    if system == "GB200" and gpus < 64:
        platform = GB200_PART % (gpus, gpus // 2, gpus)
    else:
        platform = {"H100": H100 % (gpus // 8), "GB200": GB200 % (gpus // 64),
                    "GB300": GB300 % (gpus // 64)}[system]
    return "\n".join([
        "name: architecture-validation",
        "platform: " + platform,
        "workload: {type: llm, model: %s, seq_len: %d, micro_batch: %d, global_batch: %d}"
        % (model, seq, mbs, gbs),
        "strategy: {%s, precision: %s, replicas: one, collectives: {mode: analytical}}"
        % (plan if "zero" in plan else plan + ", zero: 1", precision),
        "framework: megatron-te"]) + "\n"


def simulate(orrery, row, tmp):
    stdout = published_runs.run_scenario(orrery, scenario(row), tmp, row[3])
    m = re.search(r"Throughput\s+([\d.]+) tokens/s per GPU", stdout)
    if not m:
        sys.exit("%s: no throughput in:\n%s" % (row[3], stdout))
    return float(m.group(1)), "OUT OF MEMORY" not in stdout


def table(results):
    lines = ["Predicted against published tokens/s per GPU (error = predicted / published - 1; "
             "+ is too fast; \"no\" under fits: the memory verdict refuses a run that was "
             "published):", "",
             "| model | source (release) | system | GPUs | precision | plan | published | "
             "predicted | error | fits |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row, (predicted, fits) in results:
        (source, release, _, label, system, gpus, precision, seq, gbs, mbs, plan, published) = row
        short = {MB: "Megatron-Bridge", DGXC: "DGXC", ZOO: "MoE model zoo"}[source]
        lines.append("| %s | %s %s | %s | %d | %s | %s, seq %d, GBS %d, MBS %d | %d | %.0f | "
                     "%+.0f%% | %s |" % (label, short, release, system, gpus, precision, plan,
                                         seq, gbs, mbs, published, predicted,
                                         100 * (predicted / published - 1),
                                         "yes" if fits else "no"))
    errs = [p / r[11] - 1 for r, (p, _) in results]
    lines += ["", "Median |error| %.0f%%, median signed error %+.0f%%, over %d runs." % (
        100 * statistics.median(abs(e) for e in errs), 100 * statistics.median(errs), len(errs))]
    return "\n".join(lines) + "\n"


def main():
    published_runs.main(
        __doc__.split("\n\n")[0], ROWS, simulate, table, BEGIN, END,
        lambda row, r: "  %-40s %-5s %4d GPUs: %.0f (published %d)" % (
            row[3], row[4], row[5], r[0], row[11]))


if __name__ == "__main__":
    main()
