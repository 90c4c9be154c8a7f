#include "sweeps/sweep_driver.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

#include "sweeps/child_pool.h"
#include "sweeps/interrupt.h"
#include "sweeps/point_runner.h"
#include "sweeps/progress.h"

namespace orrery {
namespace {

enum Tag { kRequest = 1, kResult = 2, kAssign = 3, kStop = 4 };

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename T>
std::string pack(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T unpack(const std::string& bytes, size_t offset = 0) {
  if (bytes.size() < offset + sizeof(T)) throw std::runtime_error("short sweep message");
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

void start_point(ChildPool& pool, SweepInput& in, int64_t index) {
  pool.start(index, [&in, index] { return run_point_in_child(in, in.points[index]); });
}

// With other ranks to serve, the loop must look at messages often, but each wake-up polls
// MPI's transports too: while a child of its own runs (whose exit ends the wait at once), a
// few milliseconds are soon enough, since each worker holds one point in reserve.
int wait_ms(const MpiLink& mpi, const ChildPool& pool) {
  if (mpi.size() == 1) return 200;
  return pool.running() > 0 ? 5 : 1;
}

// A child killed by SIGTERM was stopped from outside, not failed: mpirun stops a job by
// signalling each rank's process group, children included, and Slurm signals every process of
// the job, one by one. The child's death may reach this process before its own SIGTERM does,
// so the point goes back to the queue instead of being recorded: once this process sees its
// signal it runs nothing more, and the point runs again on resume. (Children ignore SIGINT.)
bool stopped_from_outside(const ChildExit& e) { return !e.completed && e.signal == SIGTERM; }

}  // namespace

SweepRunStats coordinate_sweep(SweepInput& in, SweepStore& store, const SweepRunOptions& opt,
                               MpiLink& mpi) {
  const auto start = Clock::now();
  SweepRunStats stats;
  stats.ran_by_rank.assign(mpi.size(), 0);

  // One run per distinct scenario: points that hash alike share the outcome.
  std::deque<int64_t> pending;
  std::set<uint64_t> queued;
  for (const auto& p : in.points)
    if (!store.done(p.hash) && queued.insert(p.hash).second) pending.push_back(p.index);

  InterruptGuard guard;
  ChildPool pool(opt.jobs, opt.cpus);
  std::vector<int> wanted(mpi.size(), 0), outstanding(mpi.size(), 0);
  const int total = static_cast<int>(in.points.size());
  Progress progress(opt.progress, total, store.points_done(), opt.progress_interval_s);
  auto last_write = Clock::now(), last_sync = Clock::now();
  double write_cost = 0;

  auto record = [&](const PointOutcome& o, int rank) {
    if (!store.done(o.hash)) store.record(o);
    ++stats.ran;
    ++stats.ran_by_rank[rank];
  };
  auto remote_outstanding = [&] {
    int n = 0;
    for (int v : outstanding) n += v;
    return n;
  };

  while (!InterruptGuard::interrupted()) {
    int source, tag;
    std::string bytes;
    while (mpi.try_receive(&source, &tag, &bytes)) {
      if (tag == kRequest) {
        wanted[source] += unpack<int32_t>(bytes);
      } else if (tag == kResult) {
        PointOutcome o = deserialize_outcome(bytes);
        record(o, source);
        --outstanding[source];
        ++wanted[source];
      }
    }
    for (int w = 1; w < mpi.size(); ++w)
      for (; wanted[w] > 0 && !pending.empty(); --wanted[w], ++outstanding[w]) {
        int64_t index = pending.front();
        pending.pop_front();
        mpi.send(w, kAssign, pack(index) + pack(in.points[index].hash));
      }
    while (!pool.full() && !pending.empty()) {
      start_point(pool, in, pending.front());
      pending.pop_front();
    }
    if (pending.empty() && pool.running() == 0 && remote_outstanding() == 0) break;

    progress.update(store.points_done(), store.points_failed(),
                    pool.running() + remote_outstanding());
    for (const ChildExit& e : pool.wait(wait_ms(mpi, pool))) {
      if (stopped_from_outside(e))
        pending.push_front(e.task);
      else
        record(outcome_of(e, in.points[e.task]), 0);
    }
    if (seconds_since(last_sync) > 0.5) {
      store.sync_journal();
      last_sync = Clock::now();
    }
    // A big file takes a while to write; never spend more than a tenth of the time on it.
    if (store.changed_since_write() &&
        seconds_since(last_write) > std::max(opt.flush_interval_s, 10 * write_cost)) {
      auto t = Clock::now();
      store.write_output_in_child();
      write_cost = seconds_since(t);
      last_write = Clock::now();
    }
  }

  stats.interrupted = InterruptGuard::interrupted();
  if (stats.interrupted) {
    // The file first, and no MPI call: under mpirun the other ranks are being torn down too,
    // and a message to a dead rank aborts this one. mpirun allows about a second.
    pool.kill_all();  // unfinished points are not recorded: they run again on resume
    progress.finish();
    store.sync_journal();
    store.write_output();
  } else {
    for (int w = 1; w < mpi.size(); ++w) mpi.send(w, kStop, "");
    progress.update(store.points_done(), store.points_failed(), 0, true);
    progress.finish();
    if (opt.conclude) opt.conclude();
    store.finish();
  }
  stats.wall_s = seconds_since(start);
  return stats;
}

bool serve_sweep(SweepInput& in, const SweepRunOptions& opt, MpiLink& mpi) {
  InterruptGuard guard;
  ChildPool pool(opt.jobs, opt.cpus);
  std::deque<int64_t> assigned;
  bool stop = false;
  // One point more than the slots: the next one is already here when a child finishes, so a
  // slot never idles for the round trip to rank 0.
  mpi.send(0, kRequest, pack<int32_t>(pool.slots() + 1));
  while (!InterruptGuard::interrupted()) {
    int source, tag;
    std::string bytes;
    while (mpi.try_receive(&source, &tag, &bytes)) {
      if (tag == kStop) {
        stop = true;
      } else if (tag == kAssign) {
        auto index = unpack<int64_t>(bytes);
        auto hash = unpack<uint64_t>(bytes, sizeof index);
        if (index < 0 || index >= static_cast<int64_t>(in.points.size()) ||
            in.points[index].hash != hash)
          throw std::runtime_error("rank " + std::to_string(mpi.rank()) +
                                   " expanded the sweep differently from rank 0 (point " +
                                   std::to_string(index) + ")");
        assigned.push_back(index);
      }
    }
    while (!pool.full() && !assigned.empty()) {
      start_point(pool, in, assigned.front());
      assigned.pop_front();
    }
    if (stop && pool.running() == 0 && assigned.empty()) return true;
    // A running child ends the wait the moment it exits, and the message that matters then (the
    // next point) is already queued: with children running, MPI can wait; idle, poll it often.
    for (const ChildExit& e : pool.wait(pool.running() > 0 ? 100 : 1)) {
      if (stopped_from_outside(e))
        assigned.push_front(e.task);
      else
        mpi.send(0, kResult, serialize_outcome(outcome_of(e, in.points[e.task])));
    }
  }
  pool.kill_all();
  // mpirun stops a job by signalling every rank; leaving at once would make it kill rank 0
  // before rank 0 has saved the results. Wait for mpirun's SIGKILL, or a little while.
  for (int i = 0; i < 50; ++i) ::poll(nullptr, 0, 100);
  return false;
}

}  // namespace orrery
