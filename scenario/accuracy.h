// Published measurements Orrery checks itself against (`orrery accuracy`, docs/validation.md):
// one CSV file per source under scenarios/validation/published/, each row a scenario to
// simulate (a file under scenarios/validation/ and `--set` overrides) beside the figure the
// source published, its date and the groups the error is summarized by. Plain data and
// functions: reading the files, turning a run into the published metric, the signed error and
// its summary per group.
//
// A file:
//   # source: Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models,
//   #         MLSys 2023 (every "# source:" line and its continuation lines name the source)
//   case,scenario,set,metric,published,per_step,date,kind,framework,gpu,gpus
//   22B GPT selective,llm/korthikanti-22b.yaml,,iteration_s,1.10,,2022-05,llm,megatron-te,A100,8
//
// metric: iteration_s (seconds per step), tokens_per_gpu_s (a language model's tokens per
// second per GPU) or samples_s (per_step samples per step over the step's seconds). set: the
// overrides, ';'-separated key=value pairs.
//
// Kernels and collectives are checked by the command a user would run instead of a scenario:
// the scenario column holds "orrery bench collective ..." (metric busbw_gbs, the bus bandwidth
// in GB/s at the largest size, or collective_us, its time) or "orrery cost ..." (metric
// matmul_tflops, the op's FLOP over its time, or kernel_us).
#pragma once

#include <string>
#include <vector>

namespace orrery {

struct PublishedCase {
  std::string file;  // the CSV file's name
  int line = 0;      // the row's line in it
  std::string source;
  std::string id;        // "case": unique over every file
  std::string scenario;  // path of the scenario file, relative to the folder above the CSV's
  std::vector<std::string> overrides;
  // A kernel or collective case: the command's arguments after "orrery" (empty for a scenario).
  std::vector<std::string> command;
  std::string metric;  // iteration_s | tokens_per_gpu_s | samples_s | busbw_gbs | collective_us
                       // | matmul_tflops | kernel_us
  double published = 0;
  double per_step = 0;  // samples_s: samples per step
  std::string date;
  // As the scenario runs (`orrery accuracy` checks): the workload kind (llm, cnn, transformer,
  // rnn, recsys, gnn, other) and the software-stack profile (megatron-te, tensorflow1...).
  std::string kind;
  std::string framework;
  std::string gpu;  // the GPU model as the source names it: A100, H100, GB200...
  int gpus = 0;
};

// Every row of every *.csv in `dir` (files in name order). InputError naming the file and line
// of a row that does not read: a missing column, a number that is not one, an unknown metric,
// a samples_s row without per_step, a case id used twice, a file without a "# source:" line.
std::vector<PublishedCase> read_published_cases(const std::string& dir);

// The published metric from a run: its seconds per step, or tokens/s per GPU (0 when the run is
// not a language model's), or per_step / seconds.
double case_prediction(const PublishedCase& c, double iteration_s, double tokens_per_gpu_s);

// What a command case's command prints, with the flag that makes it print for programs
// (`--csv` for bench collective, `--json` for cost) and the kind and framework it checks:
// "collective" under "nccl-tests" (or "torch-distributed" with --loop pytorch), "kernel" under
// "cublas".
struct CaseCommand {
  std::vector<std::string> args;  // c.command and the output flag
  std::string kind;
  std::string framework;
};
CaseCommand case_command(const PublishedCase& c);

// The published metric from a command case's output; `detail` gets what the model chose
// (the algorithm and protocol of a collective, the kernel of an op). InputError naming the case
// when the output does not hold it.
double command_prediction(const PublishedCase& c, const std::string& output, std::string* detail);

// predicted / published - 1 for rates, published / predicted - 1 for times (iteration_s,
// collective_us, kernel_us): + is too fast.
double case_error(const PublishedCase& c, double predicted);

// The generation of a GPU model name: Volta, Turing, Ampere, Ada, Hopper, Blackwell, Pascal;
// "other" when the name says none.
std::string gpu_generation(const std::string& gpu);

// The scale band of a GPU count: "1", "2-8", "9-64", "65-512", "513+".
std::string scale_band(int gpus);

// The errors of one group of cases: how many, and the median and 90th percentile of |error|
// and the median signed error (+ too fast).
struct ErrorGroup {
  std::string dimension;  // "all", "kind", "framework", "generation", "scale", "source"
  std::string name;
  int runs = 0;
  double median_abs = 0;
  double p90_abs = 0;
  double median_signed = 0;
};
// Groups `errors` (parallel to `cases`) by each dimension, every group in name order after
// "all".
std::vector<ErrorGroup> group_errors(const std::vector<PublishedCase>& cases,
                                     const std::vector<double>& errors);

}  // namespace orrery
