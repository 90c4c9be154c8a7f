// Where a sweep's finished points live: in memory keyed by point hash, in the journal as soon
// as they finish, and in the HDF5 output, rewritten atomically from them in point order (so
// the file does not depend on the order points finished in). Resuming reads the output and the
// journal back and skips every point whose hash is already there.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "results/h5_store.h"
#include "results/output_lock.h"
#include "sweeps/journal.h"
#include "sweeps/point_outcome.h"
#include "sweeps/sweep_h5.h"
#include "sweeps/sweep_input.h"

namespace orrery {

class SweepStore {
 public:
  SweepStore(const SweepInput& in, std::string output, ResultFileMeta meta);

  // Takes the output's lock (results/output_lock.h: a second sweep writing the same output
  // refuses, naming the first), loads what an earlier run of this sweep finished (from `output`
  // and its journal) and opens the journal for appending. `fresh` discards both first;
  // `retry_failed` forgets failed points so they run again. Throws InputError when the output holds
  // points that are not in this sweep (the scenario changed) or is not a sweep results file.
  void open(bool fresh, bool retry_failed);

  bool done(uint64_t hash) const { return outcomes_.count(hash) > 0; }
  // Appends to the journal (write now, fsync in batches) and keeps the outcome.
  void record(const PointOutcome& o);
  void sync_journal();

  // Rewrites the HDF5 output from every finished point, in point order.
  void write_output();
  // The same, written by a forked child: the rows, HDF5's buffers and what they free stay out of
  // this process's heap, whose pages every later forked point would otherwise fault in one copy
  // at a time (a plan search of 1,000 points ran 1.5x longer). Throws like write_output.
  void write_output_in_child();
  // The final write: the output, then the journal is removed (it holds nothing more).
  void finish();

  // Extra parameters for each point (e.g. a plan's cost), applied when the output is written.
  using Decorator = std::function<void(const SweepPoint&, const PointOutcome*,
                                       std::map<std::string, std::string>*)>;
  void set_decorator(Decorator d) { decorate_ = std::move(d); }
  std::map<std::string, std::string>& file_attrs() { return status_attrs_; }

  const PointOutcome* outcome(uint64_t hash) const;
  int points_done() const;                // points (indices) with an outcome
  int points_failed() const;              // of which failed
  int points_infeasible() const;          // of which infeasible (not failed)
  int loaded() const { return loaded_; }  // outcomes found on open
  bool changed_since_write() const { return changed_; }
  const std::string& output() const { return output_; }

 private:
  void load_h5();
  void keep(PointOutcome o);

  std::unique_ptr<OutputLock> lock_;  // first: released after the journal is closed
  const SweepInput& in_;
  std::string output_;
  ResultFileMeta meta_;
  std::map<uint64_t, PointOutcome> outcomes_;
  std::unique_ptr<Journal> journal_;
  Decorator decorate_;
  std::map<std::string, std::string> status_attrs_;
  int loaded_ = 0;
  bool changed_ = false;
  bool file_current_ = false;  // the output already holds every outcome
};

}  // namespace orrery
