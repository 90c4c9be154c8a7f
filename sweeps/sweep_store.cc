#include "sweeps/sweep_store.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/errors.h"
#include "engine/run_result_io.h"
#include "sweeps/expression.h"
#include "sweeps/yaml_path.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

bool wants_sensitivity(const SweepInput& in) {
  const YAML::Node out = in.base["output"];
  const YAML::Node flag = out && out.IsMap() ? out["sensitivity"] : YAML::Node();
  bool on = false;
  return flag && flag.IsScalar() && YAML::convert<bool>::decode(flag, on) && on;
}

bool has_sensitivity(const PointOutcome& o) {
  for (const auto& [name, value] : o.metrics)
    if (name.rfind("sensitivity.", 0) == 0) return true;
  return false;
}

}  // namespace

SweepStore::SweepStore(const SweepInput& in, std::string output, ResultFileMeta meta)
    : lock_(), in_(in), output_(std::move(output)), meta_(std::move(meta)) {
  // Which parameters are axes, labels or derived, so readers (the plot scripts) can tell.
  std::string axis_keys, named, derived;
  std::set<std::string> seen;
  for (const auto& axis : in.spec.axes) {
    if (axis.source.rfind("sweep.named.", 0) == 0) {
      named += (named.empty() ? "" : "\n") + axis.source.substr(12);
      continue;
    }
    for (const auto& v : axis.values)
      for (const auto& a : v.sets)
        if (seen.insert(a.key).second) axis_keys += (axis_keys.empty() ? "" : "\n") + a.key;
  }
  for (const auto& d : in.spec.derived) derived += (derived.empty() ? "" : "\n") + d.key;
  status_attrs_["axis_keys"] = axis_keys;
  status_attrs_["named_axes"] = named;
  status_attrs_["derived_keys"] = derived;
}

void SweepStore::keep(PointOutcome o) {
  if (!o.ok) {
    outcomes_[o.hash] = std::move(o);
    return;
  }
  try {
    deserialize_run_result(o.result_bytes);  // written by another version: run it again
  } catch (const std::runtime_error&) {
    return;
  }
  outcomes_[o.hash] = std::move(o);
}

void SweepStore::load_h5() {
  std::error_code ec;
  if (!fs::exists(output_, ec)) return;
  LoadedResults file;
  try {
    file = read_results_h5(output_);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) +
                     "; choose another output or pass --fresh to replace it");
  }
  std::set<uint64_t> wanted;
  for (const auto& p : in_.points) wanted.insert(p.hash);
  int foreign = 0;
  for (auto& run : file.runs) {
    auto hash = run.params.find(kParamHash);
    auto status = run.params.find(kParamStatus);
    if (hash == run.params.end() || status == run.params.end())
      throw InputError(output_ + ": exists and is not the output of a sweep (its runs have no " +
                       kParamHash + "); choose another output or pass --fresh to replace it");
    PointOutcome o;
    o.hash = std::strtoull(hash->second.c_str(), nullptr, 16);
    if (!wanted.count(o.hash)) {
      ++foreign;
      continue;
    }
    o.ok = status->second == "ok";
    o.infeasible = status->second == "infeasible";
    auto error = run.params.find(kParamError);
    if (error != run.params.end()) o.error = error->second;
    if (o.ok) o.result_bytes = serialize_run_result(run.result);
    // The workload's metrics were written as parameters (write_output).
    for (const auto& [key, value] : run.params) {
      if (!is_metric_name(key)) continue;
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (!value.empty() && *end == '\0') o.metrics.emplace_back(key, v);
    }
    keep(std::move(o));
  }
  if (foreign > 0)
    throw InputError(output_ + ": holds " + std::to_string(foreign) +
                     " result(s) of points that are not in this sweep (the scenario or its "
                     "--set overrides changed); choose another output or pass --fresh to "
                     "replace it");
}

void SweepStore::open(bool fresh, bool retry_failed) {
  const std::string jpath = journal_path_for(output_);
  fs::path dir = fs::path(output_).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (!dir.empty() && !fs::is_directory(dir))
    throw InputError(output_ + ": cannot create the directory " + dir.string());
  if (!lock_) lock_ = std::make_unique<OutputLock>(output_);
  // Never remove (or later replace) a device node, a FIFO or a directory of that name.
  require_file_or_absent(output_);
  require_file_or_absent(jpath);
  if (fresh) {
    std::remove(output_.c_str());
    std::remove(jpath.c_str());
  }
  load_h5();
  const size_t from_file = outcomes_.size();
  std::vector<PointOutcome> logged;
  journal_ = std::make_unique<Journal>(jpath, &logged);
  std::set<uint64_t> wanted;
  for (const auto& p : in_.points) wanted.insert(p.hash);
  int foreign = 0;
  for (auto& o : logged) {
    if (!wanted.count(o.hash)) {
      ++foreign;
      continue;
    }
    keep(std::move(o));
  }
  if (foreign > 0)
    throw InputError(jpath + ": holds " + std::to_string(foreign) +
                     " result(s) of points that are not in this sweep (the scenario or its "
                     "--set overrides changed); pass --fresh to start over");
  if (retry_failed)
    for (auto it = outcomes_.begin(); it != outcomes_.end();)
      it = it->second.ok ? std::next(it) : outcomes_.erase(it);
  // The output section is not part of a point's identity, but output.sensitivity adds figures:
  // a point stored without them runs again.
  if (wants_sensitivity(in_))
    for (auto it = outcomes_.begin(); it != outcomes_.end();)
      it = !it->second.ok || has_sensitivity(it->second) ? std::next(it) : outcomes_.erase(it);
  loaded_ = static_cast<int>(outcomes_.size());
  // The file is current when the journal added nothing and no failed point was dropped.
  file_current_ = logged.empty() && outcomes_.size() == from_file && fs::exists(output_);
}

void SweepStore::record(const PointOutcome& o) {
  journal_->append(o);
  keep(o);
  changed_ = true;
  file_current_ = false;
}

void SweepStore::sync_journal() {
  if (journal_) journal_->sync();
}

const PointOutcome* SweepStore::outcome(uint64_t hash) const {
  auto it = outcomes_.find(hash);
  return it == outcomes_.end() ? nullptr : &it->second;
}

int SweepStore::points_done() const {
  int n = 0;
  for (const auto& p : in_.points) n += outcomes_.count(p.hash) ? 1 : 0;
  return n;
}

int SweepStore::points_infeasible() const {
  int n = 0;
  for (const auto& p : in_.points) {
    const PointOutcome* o = outcome(p.hash);
    n += o && o->infeasible ? 1 : 0;
  }
  return n;
}

int SweepStore::points_failed() const {
  int n = 0;
  for (const auto& p : in_.points) {
    const PointOutcome* o = outcome(p.hash);
    n += o && !o->ok && !o->infeasible ? 1 : 0;
  }
  return n;
}

void SweepStore::write_output() {
  std::vector<RunRecord> runs;
  for (const auto& p : in_.points) {
    const PointOutcome* o = outcome(p.hash);
    if (!o) continue;
    RunRecord r;
    r.name = in_.name + "/" + std::to_string(p.index);
    r.params = p.params;
    r.params[kParamIndex] = std::to_string(p.index);
    r.params[kParamHash] = hash_hex(p.hash);
    r.params[kParamStatus] = o->ok ? "ok" : o->infeasible ? "infeasible" : "failed";
    r.params[kParamError] = o->error;
    if (o->ok) r.result = deserialize_run_result(o->result_bytes);
    for (const auto& [name, value] : o->metrics) r.params[name] = format_number(value);
    if (decorate_) decorate_(p, o, &r.params);
    runs.push_back(std::move(r));
  }
  SweepFileStatus status;
  status.points_total = static_cast<int>(in_.points.size());
  status.points_done = points_done();
  status.points_failed = points_failed();
  status.complete = status.points_done == status.points_total;
  status.attrs = status_attrs_;
  write_sweep_h5(output_, meta_, runs, status);
  changed_ = false;
  file_current_ = true;
}

void SweepStore::write_output_in_child() {
  const pid_t parent = ::getpid();
  run_in_child(
      [this, parent] {
        // A writer that outlived a killed sweep would hold the output's lock and could rename
        // its older file over a resumed run's.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(125);
        write_output();
        return std::string();
      },
      "writing " + output_);
  changed_ = false;
  file_current_ = true;
}

void SweepStore::finish() {
  sync_journal();
  if (!file_current_ || decorate_) write_output();
  if (points_done() == static_cast<int>(in_.points.size())) {
    journal_.reset();
    std::remove(journal_path_for(output_).c_str());
  }
}

}  // namespace orrery
