// The docs say what the code does: the files they name exist, the figures a sweep stores are
// all listed, and the worked examples' numbers are what the simulator prints today. Example
// numbers are regenerated, not edited by hand: run this suite with ORRERY_UPDATE_DOCS=1 and it
// writes the current figures into the docs (then review the diff); without it, a stale figure
// fails and the message gives the sentence as it should read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/units.h"
#include "scenario/job_report.h"
#include "scenario/llm_figures.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

using testing::read_file;
using testing::source_path;
using testing::write_file;

std::vector<std::string> doc_files() {
  std::vector<std::string> out = {source_path("README.md")};
  for (const auto& e : fs::directory_iterator(source_path("docs")))
    if (e.path().extension() == ".md") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every source, script or scenario path a doc names in backquotes or prose exists; examples
// whose names stand for the reader's own files are the exceptions listed.
TEST(Docs, EveryFileTheyNameExists) {
  const std::set<std::string> placeholders = {
      "tests/fuzz/NAME_fuzz.cc",      "models/profiles/mine.h",
      "models/profiles/my-gpu.h",     "scenarios/validation/m-gloo.yaml",
      "scenarios/validation/m.yaml",  "platforms/presets/NAME.yaml"};
  const std::regex path(
      R"((^|[^\w/.-])((common|platforms|engine|workloads|models|strategies|results|scenario|sweeps|cli|python|scripts|tests|bench|scenarios)/[\w./-]+\.(h|cc|py|yaml|md|json|csv|sh|proto)))");
  for (const std::string& doc : doc_files()) {
    const std::string text = read_file(doc);
    for (std::sregex_iterator it(text.begin(), text.end(), path), end; it != end; ++it) {
      const std::string p = (*it)[2];
      if (placeholders.count(p)) continue;
      EXPECT_TRUE(fs::exists(source_path(p))) << doc << " names " << p << ", which does not exist";
    }
  }
}

// Every figure a sweep stores with a point is in docs/sweeps.md's list of parameters.
TEST(Docs, SweepsListEveryStoredFigure) {
  const std::string doc = read_file(source_path("docs/sweeps.md"));
  LlmFigures llm;
  llm.train_days = 1;  // so the training-run figures are among them
  std::vector<std::pair<std::string, double>> names = llm_metrics(llm);
  for (const auto& m : cluster_metrics(ClusterFigures{})) names.push_back(m);
  for (const auto& [name, value] : names)
    EXPECT_NE(doc.find("`" + name + "`"), std::string::npos)
        << name << " is stored with sweep points but docs/sweeps.md does not list it";
}

// Finds the sentence `words` (spaces match any run of white space, each "{}" a number) in
// `doc` and checks it reads `want`; with ORRERY_UPDATE_DOCS set, writes `want` in its place.
void expect_sentence(const std::string& doc, const std::string& words, const std::string& want) {
  std::string pattern;
  for (size_t i = 0; i < words.size(); ++i) {
    const char c = words[i];
    if (words.compare(i, 2, "{}") == 0) {
      pattern += "[0-9][0-9.,]*";
      ++i;
    } else if (c == ' ') {
      pattern += "\\s+";
    } else if (std::string("()[]{}.*+?^$|\\").find(c) != std::string::npos) {
      pattern += std::string("\\") + c;
    } else {
      pattern += c;
    }
  }
  const std::string path = source_path(doc);
  std::string text = read_file(path);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(pattern)))
      << doc << " has no sentence like \"" << words << "\"";
  std::string found = m.str();
  std::string flat;  // the doc's words without its line breaks
  for (char c : found)
    if (!(std::isspace(static_cast<unsigned char>(c)) && !flat.empty() && flat.back() == ' '))
      flat += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  if (flat == want) return;
  if (std::getenv("ORRERY_UPDATE_DOCS")) {
    // Word for word where the sentence keeps its shape, so the doc keeps its line breaks.
    std::vector<std::string> words_want;
    for (size_t a = 0, b; a < want.size(); a = b + 1) {
      b = want.find(' ', a);
      if (b == std::string::npos) b = want.size();
      words_want.push_back(want.substr(a, b - a));
    }
    std::string rewritten;
    size_t k = 0;
    for (size_t a = 0; a < found.size();) {
      const size_t b = std::min(found.find_first_of(" \n", a), found.size());
      rewritten += k < words_want.size() ? words_want[k] : "";
      ++k;
      const size_t next = std::min(found.find_first_not_of(" \n", b), found.size());
      rewritten += found.substr(b, next - b);
      a = next;
    }
    text.replace(static_cast<size_t>(m.position()), found.size(),
                 k == words_want.size() ? rewritten : want);
    write_file(path, text);
    return;
  }
  ADD_FAILURE() << doc << " says\n  " << flat << "\nbut the simulator gives\n  " << want
                << "\n(run this test with ORRERY_UPDATE_DOCS=1 to write it)";
}

std::string fixed(double v, int decimals) {
  char s[32];
  std::snprintf(s, sizeof s, "%.*f", decimals, v);
  return s;
}

// The LLaMA-2 70B example of docs/strategies.md, run as the shipped scenario with 2T tokens.
TEST(Docs, Llama70bExampleIsWhatTheSimulatorPrints) {
  Scenario sc = load_scenario(source_path("scenarios/llm/llama2-70b-64xh100.yaml"),
                              {"workload.train_tokens=2T"});
  RunOptions options;
  options.isolated = true;
  options.replay.record_timeline = false;
  const ScenarioRun run = run_scenario(sc, options);
  ASSERT_TRUE(run.llm);
  const LlmFigures& f = *run.llm;
  const LlmBreakdown& b = f.breakdown;
  const ParallelPlan& p = f.plan;
  const int m = p.global_batch / (p.micro_batch * p.dp);
  ASSERT_EQ(p.tp * p.pp * p.dp, 64);
  const double busy = b.compute + b.recompute;
  expect_sentence(
      "docs/strategies.md", "LLaMA-2 70B on 64 H100s: {} days, {} GPU-hours for 2T tokens",
      "LLaMA-2 70B on 64 H100s: " + fixed(f.train_days, 0) + " days, " +
          format_grouped(std::round(f.gpu_hours / 1000) * 1000) + " GPU-hours for 2T tokens");
  expect_sentence("docs/strategies.md",
                  "LLaMA-2 70B on 64 H100s (TP {} x PP {} x DP {}, {} micro-batches): {} s "
                  "compute, {} s recomputation, {} s exposed TP, {} s PP, {} s DP, {} s bubble of "
                  "{} s, against a bubble of (p - 1)/m x {} s = {} s for the pipeline alone.",
                  "LLaMA-2 70B on 64 H100s (TP " + std::to_string(p.tp) + " x PP " +
                      std::to_string(p.pp) + " x DP " + std::to_string(p.dp) + ", " +
                      std::to_string(m) + " micro-batches): " + fixed(b.compute, 2) +
                      " s compute, " + fixed(b.recompute, 2) + " s recomputation, " +
                      fixed(b.tp, 2) + " s exposed TP, " + fixed(b.pp, 2) + " s PP, " +
                      fixed(b.dp, 2) + " s DP, " + fixed(b.bubble, 2) + " s bubble of " +
                      fixed(f.iteration_s, 2) + " s, against a bubble of (p - 1)/m x " +
                      fixed(busy, 2) + " s = " + fixed((p.pp - 1.0) / m * busy, 2) +
                      " s for the pipeline alone.");
}

}  // namespace
}  // namespace orrery
