// `orrery accuracy`: every published comparison the repository ships (scenario/accuracy.h),
// simulated again and printed beside its published figure with the signed error, then the
// errors summarized per workload kind, framework, GPU generation, scale and source.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/csv.h"
#include "common/data_dir.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "scenario/accuracy.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

struct AccuracyArgs {
  std::string dir;
  std::vector<std::string> only;
  bool csv = false;
  bool markdown = false;
  int jobs = 1;
  std::string update_doc;  // a Markdown file whose block `block` the Markdown tables replace
  std::string block;
};

// Replaces what lies between the lines "<!-- BLOCK:begin ... -->" and "<!-- BLOCK:end -->" of
// `doc` with `text` (the begin line, which names the command, stays).
void update_doc_block(const std::string& doc, const std::string& block, const std::string& text) {
  const std::string old = read_input_file(doc, "--update-doc", 1 << 24);
  const std::string begin = "<!-- " + block + ":begin";
  const size_t from = old.find(begin);
  const size_t body = from == std::string::npos ? from : old.find('\n', from);
  const size_t to = body == std::string::npos ? body : old.find("<!-- " + block + ":end -->", body);
  if (to == std::string::npos)
    throw InputError(doc + ": no block \"" + begin + " ... -->\" ... \"<!-- " + block +
                     ":end -->\" to replace");
  const std::string updated = old.substr(0, body + 1) + text + old.substr(to);
  write_atomically(doc, [&](const std::string& tmp) {
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw InputError(doc + ": cannot write");
    std::fwrite(updated.data(), 1, updated.size(), f);
    std::fclose(f);
  });
}

std::string default_dir() {
  const std::string data = shipped_data_dir();
  return (fs::path(data.empty() ? "." : data) / "scenarios" / "validation" / "published").string();
}

bool selected(const PublishedCase& c, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const auto& o : only)
    if (c.id.find(o) != std::string::npos || c.file.find(o) != std::string::npos) return true;
  return false;
}

// The answer of one case, worked out in a child process: the published metric as this model
// predicts it, the kind and framework the case ran as (checked against the case's columns) and,
// for a kernel or collective, what the model chose.
struct CaseAnswer {
  double predicted = 0;
  std::string kind;
  std::string framework;
  std::string detail;
};

std::string encode(const CaseAnswer& a) {
  char v[32];
  std::snprintf(v, sizeof v, "%.17g", a.predicted);
  return std::string(v) + "\n" + a.kind + "\n" + a.framework + "\n" + a.detail;
}

CaseAnswer decode(const std::string& text) {
  std::istringstream in(text);
  CaseAnswer a;
  std::string value;
  std::getline(in, value);
  a.predicted = std::strtod(value.c_str(), nullptr);
  std::getline(in, a.kind);
  std::getline(in, a.framework);
  std::getline(in, a.detail);
  return a;
}

CaseAnswer simulate(const PublishedCase& c, const std::string& scenario) {
  const Scenario sc = load_scenario(scenario, c.overrides);
  const ScenarioRun run = run_scenario(sc, RunOptions{});
  CaseAnswer a;
  a.predicted = case_prediction(c, run.iteration_s, run.llm ? run.llm->tokens_per_s_per_gpu : 0.0);
  a.kind = sc.traits.kind;
  a.framework = sc.traits.framework.empty() ? "-" : sc.traits.framework;
  return a;
}

// A kernel or collective case: the command a user would type, run by this same binary.
CaseAnswer run_case_command(const PublishedCase& c, const std::string& self) {
  const CaseCommand cmd = case_command(c);
  std::vector<std::string> argv = {self};
  argv.insert(argv.end(), cmd.args.begin(), cmd.args.end());
  CaseAnswer a;
  std::string output;
  try {
    output = run_program(argv, "orrery " + c.scenario.substr(7));
  } catch (const InputError& e) {
    // The command's own "orrery: error: " prefix: once is enough.
    std::string what = e.what();
    const std::string prefix = "orrery: error: ";
    const size_t at = what.find(prefix);
    if (at != std::string::npos) what.erase(at, prefix.size());
    throw InputError(what);
  }
  a.predicted = command_prediction(c, output, &a.detail);
  a.kind = cmd.kind;
  a.framework = cmd.framework;
  return a;
}

std::string pct(double e) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * e);
  return b;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.1f" : "%.4g", v);
  return b;
}

std::string metric_unit(const std::string& metric) {
  if (metric == "iteration_s") return "s/step";
  if (metric == "tokens_per_gpu_s") return "tokens/s/GPU";
  if (metric == "busbw_gbs") return "GB/s busbw";
  if (metric == "collective_us" || metric == "kernel_us") return "us";
  if (metric == "matmul_tflops") return "TFLOP/s";
  return "samples/s";
}

std::string group_label(const std::string& dimension) {
  static const std::map<std::string, std::string> labels = {
      {"all", "every run"},       {"kind", "workload"},
      {"framework", "framework"}, {"generation", "GPU generation"},
      {"scale", "GPUs"},          {"source", "source file"}};
  return labels.at(dimension);
}

void print_text(const std::vector<PublishedCase>& cases, const std::vector<double>& predicted,
                const std::vector<double>& errors, const std::vector<ErrorGroup>& groups) {
  std::printf("%-48s %-12s %12s %12s %8s\n", "case", "metric", "published", "predicted", "error");
  for (size_t i = 0; i < cases.size(); ++i)
    std::printf("%-48s %-12s %12s %12s %8s\n", cases[i].id.c_str(),
                metric_unit(cases[i].metric).c_str(), num(cases[i].published).c_str(),
                num(predicted[i]).c_str(), pct(errors[i]).c_str());
  std::printf("\n%-16s %-34s %5s %12s %10s %14s\n", "group", "", "runs", "median |err|",
              "p90 |err|", "median signed");
  for (const auto& g : groups)
    std::printf("%-16s %-34s %5d %12s %10s %14s\n", group_label(g.dimension).c_str(),
                g.name.c_str(), g.runs, pct(g.median_abs).c_str() + 1, pct(g.p90_abs).c_str() + 1,
                pct(g.median_signed).c_str());
  std::printf(
      "\nError: predicted over published minus one for rates, published over predicted "
      "minus one for times; + is too fast.\n");
}

void print_csv(const std::vector<PublishedCase>& cases, const std::vector<double>& predicted,
               const std::vector<double>& errors) {
  std::printf(
      "case,file,source,date,metric,published,predicted,error,kind,framework,gpu,"
      "generation,gpus,scale\n");
  for (size_t i = 0; i < cases.size(); ++i) {
    const PublishedCase& c = cases[i];
    std::printf("%s,%s,%s,%s,%s,%.17g,%.17g,%.6f,%s,%s,%s,%s,%d,%s\n", csv_quote(c.id).c_str(),
                csv_quote(c.file).c_str(), csv_quote(c.source).c_str(), csv_quote(c.date).c_str(),
                c.metric.c_str(), c.published, predicted[i], errors[i], csv_quote(c.kind).c_str(),
                csv_quote(c.framework).c_str(), csv_quote(c.gpu).c_str(),
                gpu_generation(c.gpu).c_str(), c.gpus, scale_band(c.gpus).c_str());
  }
}

// `details`: what the model chose for a kernel or collective, beside its prediction.
std::string markdown(const std::vector<PublishedCase>& cases, const std::vector<double>& predicted,
                     const std::vector<std::string>& details, const std::vector<double>& errors,
                     const std::vector<ErrorGroup>& groups) {
  std::string out = "| case | GPUs | published | predicted | error | source (date) |\n";
  out += "|---|---|---|---|---|---|\n";
  char line[1024];
  for (size_t i = 0; i < cases.size(); ++i) {
    const PublishedCase& c = cases[i];
    std::snprintf(line, sizeof line, "| %s | %d %s | %s %s | %s | %s | %s (%s) |\n", c.id.c_str(),
                  c.gpus, c.gpu.c_str(), num(c.published).c_str(), metric_unit(c.metric).c_str(),
                  (num(predicted[i]) + (details[i].empty() ? "" : " (" + details[i] + ")")).c_str(),
                  pct(errors[i]).c_str(), c.file.c_str(), c.date.c_str());
    out += line;
  }
  out += "\n| group | | runs | median \\|error\\| | p90 \\|error\\| | median signed |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const auto& g : groups) {
    std::snprintf(line, sizeof line, "| %s | %s | %d | %s | %s | %s |\n",
                  group_label(g.dimension).c_str(), g.name.c_str(), g.runs,
                  pct(g.median_abs).c_str() + 1, pct(g.p90_abs).c_str() + 1,
                  pct(g.median_signed).c_str());
    out += line;
  }
  out +=
      "\nError: predicted over published minus one for rates, published over predicted minus "
      "one for times; + is too fast.\n";
  return out;
}

int run_accuracy(const AccuracyArgs& a) {
  if (a.csv && a.markdown) throw InputError("--csv and --markdown: choose one output format");
  if (!a.update_doc.empty() && a.block.empty())
    throw InputError("--update-doc " + a.update_doc + ": --block names the block to replace");
  if (a.jobs < 1) throw InputError("-j " + std::to_string(a.jobs) + ": at least 1");
  const std::string dir = a.dir.empty() ? default_dir() : a.dir;
  std::vector<PublishedCase> cases;
  for (auto& c : read_published_cases(dir))
    if (selected(c, a.only)) cases.push_back(std::move(c));
  if (cases.empty()) throw InputError("--only: no case or source file of " + dir + " matches");
  const fs::path base = fs::path(dir).parent_path();

  // Up to `jobs` cases at once, each in its own child process.
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  std::vector<CaseAnswer> answers(cases.size());
  std::vector<std::string> failed(cases.size());
  std::deque<std::pair<size_t, ChildRun>> running;
  size_t next = 0, done = 0;
  auto collect = [&] {
    auto [i, child] = std::move(running.front());
    running.pop_front();
    try {
      answers[i] = decode(child.finish());
      // The groups must say what the case runs.
      if (answers[i].kind != cases[i].kind || answers[i].framework != cases[i].framework)
        failed[i] = "the case says kind " + cases[i].kind + " under " + cases[i].framework +
                    ", it runs as kind " + answers[i].kind + " under " + answers[i].framework;
    } catch (const std::exception& e) {
      failed[i] = e.what();
    }
    ++done;
    std::fprintf(stderr, "accuracy: %zu/%zu %s%s\n", done, cases.size(), cases[i].id.c_str(),
                 failed[i].empty() ? "" : " FAILED");
  };
  while (done < cases.size()) {
    while (next < cases.size() && running.size() < static_cast<size_t>(a.jobs)) {
      const PublishedCase& c = cases[next];
      const std::string what = c.file + ":" + std::to_string(c.line) + " " + c.id;
      if (c.command.empty()) {
        const std::string path = resolve_input_path(base.string(), c.scenario);
        running.emplace_back(next,
                             start_in_child([c, path] { return encode(simulate(c, path)); }, what));
      } else {
        running.emplace_back(
            next, start_in_child([c, self] { return encode(run_case_command(c, self)); }, what));
      }
      ++next;
    }
    collect();
  }
  int bad = 0;
  for (size_t i = 0; i < cases.size(); ++i)
    if (!failed[i].empty()) {
      std::fprintf(stderr, "orrery: error: %s:%d (%s): %s\n", cases[i].file.c_str(), cases[i].line,
                   cases[i].id.c_str(), failed[i].c_str());
      ++bad;
    }
  if (bad > 0) return 2;

  std::vector<double> predicted(cases.size()), errors(cases.size());
  std::vector<std::string> details(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    predicted[i] = answers[i].predicted;
    details[i] = answers[i].detail;
    errors[i] = case_error(cases[i], predicted[i]);
  }
  const auto groups = group_errors(cases, errors);
  if (!a.update_doc.empty()) {
    update_doc_block(a.update_doc, a.block, markdown(cases, predicted, details, errors, groups));
    std::fprintf(stderr, "accuracy: %s, block %s updated\n", a.update_doc.c_str(), a.block.c_str());
  } else if (a.csv) {
    print_csv(cases, predicted, errors);
  } else if (a.markdown) {
    std::fputs(markdown(cases, predicted, details, errors, groups).c_str(), stdout);
  } else {
    print_text(cases, predicted, errors, groups);
  }
  return 0;
}

}  // namespace

void register_accuracy_commands(CLI::App& app, CommandList& out) {
  static AccuracyArgs args;
  CLI::App* cmd = app.add_subcommand(
      "accuracy",
      "Simulate every published run the repository ships (scenarios/validation/published/) and "
      "print each beside its published figure with the signed error, then the median and 90th "
      "percentile of the errors per workload, framework, GPU generation, scale and source");
  cmd->add_option("--dir", args.dir,
                  "Folder of published-measurement CSV files (default: the shipped "
                  "scenarios/validation/published)");
  cmd->add_option("--only", args.only,
                  "Only the cases whose name or source file holds this text (repeatable)");
  cmd->add_flag("--csv", args.csv, "Print the cases as CSV");
  cmd->add_flag("--markdown", args.markdown, "Print the tables as Markdown (docs/validation.md)");
  cmd->add_option("-j,--jobs", args.jobs, "Cases simulated at once (default 1)");
  cmd->add_option("--update-doc", args.update_doc,
                  "Write the Markdown tables into this file, between the lines "
                  "<!-- BLOCK:begin ... --> and <!-- BLOCK:end -->");
  cmd->add_option("--block", args.block, "The block --update-doc replaces");
  out.push_back({cmd, [] { return run_accuracy(args); }});
}

}  // namespace orrery
