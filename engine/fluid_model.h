// FluidModel: activities that share resources at rates set by weighted max-min fairness, the
// model SimGrid 3.32 solves for Orrery's platforms (CM02 network with TCP-gamma and weight-S 0,
// Cas01 CPUs), solved by Orrery so that an event costs what it changes, not what is running.
//
// An activity moves `amount` units (bytes, flops) across its resources (links, a host) after a
// latency during which it uses none. While it runs, every resource it crosses bounds it: on a
// resource used by several activities the fair share goes to each in inverse proportion to its
// sharing penalty (SimGrid's: a flow's route latency, 1 for an exec), an activity's own bound
// caps it, and what one activity cannot use goes to the others (progressive filling, as
// SimGrid's lmm::MaxMin). A SHARED resource's users sum to at most its capacity; a FATPIPE
// resource gives each user up to its capacity (scaled by the smallest penalty over its
// penalty, as SimGrid's FATPIPE constraint does).
//
// SimGrid 3.32 (network/optim:Full, the only exact setting, docs/design.md) re-solves every
// running activity and walks all of them at each event; with flows in flight and events both
// growing with the cluster that is quadratic (docs/performance.md). Here an activity keeps its
// rate and its predicted end in a heap until something on a resource it is connected to
// changes; an event re-solves only the connected component of the resources that changed, and
// only activities whose rate moved get a new end date. A resource whose users could not fill it
// even each at its most (its bound, or its smallest resource), or whose users' own narrower
// resources cap them together below its capacity (covers), never saturates and connects
// nothing. Simultaneous events (a ring step finishing on every rank) are one event.
//
// Deterministic: the same calls in the same order give bit-identical dates.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "common/dary_heap.h"

namespace orrery {

class FluidModel {
 public:
  enum class Sharing : uint8_t { kShared, kFatpipe };
  static constexpr double kUnbounded = -1.0;

  // A resource of `capacity` units/s (capacity > 0). Returns its id (0, 1, ...).
  int add_resource(double capacity, Sharing sharing = Sharing::kShared);

  // Starts an activity now: after `latency` seconds it moves `amount` units over `resources`
  // (a resource listed twice is used twice), at most `bound` units/s (kUnbounded: none), with
  // sharing penalty `penalty` > 0. An activity with no resources, or nothing to move, ends when
  // its latency has passed. Returns an id, valid until the activity ends or is cancelled.
  int start(double amount, const std::vector<int>& resources, double latency, double penalty,
            double bound, uint64_t tag);
  // The same with resources[i] used counts[i] >= 1 times: the activity stands for counts[i]
  // alike activities on that resource (flows of mirrored ranks, engine/replay.cc), and gets the
  // rate each of them would, at the cost of one activity. Equal to listing resources[i]
  // counts[i] times up to rounding, and bit for bit where every count is 1.
  int start(double amount, const std::vector<int>& resources, const std::vector<int>& counts,
            double latency, double penalty, double bound, uint64_t tag);

  // Stops a running activity; it ends without being reported.
  void cancel(int id);

  // Advances simulated time to the next date at which activities end or leave their latency,
  // unless that date is past `limit`, and appends the tags of the activities that ended there
  // (in the order they ended; none when only latencies passed). Returns false, leaving time
  // where it was, when nothing would happen before `limit`: nothing runs, or only activities
  // that end later (or never: rates of zero).
  bool advance(double limit, std::vector<uint64_t>* ended);

  double now() const { return now_; }
  int running() const { return running_; }

  // Called with (resource, from, to, rate) each time a resource's total rate changes: its users
  // moved `rate` units/s together over [from, to) (a fat pipe: its busiest user's rate).
  // finish_usage() reports the open intervals.
  std::function<void(int, double, double, double)> on_usage;
  void finish_usage();

  // Re-solves of connected components so far and the activities they visited (for benchmarks).
  int64_t solves() const { return solves_; }
  int64_t solved_activities() const { return solved_activities_; }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  enum class State : uint8_t { kFree, kLatency, kRunning };

  struct Use {  // an activity on a resource: where each one sits in the other's list
    int resource;
    int slot;        // index in resources_[resource].users
    int count;       // the alike activities it stands for on this resource
    int cover = -1;  // a narrower resource of its own that caps it here, or -1 (covers_)
  };
  struct Activity {
    double remaining = 0;  // units left at `updated`
    double rate = 0;
    double updated = 0;
    double end = kNever;  // predicted date of the event in the heap (latency end or finish)
    double penalty = 1;
    double bound = kUnbounded;
    double reach = 0;  // the most it could ever move per second: its bound, its smallest resource
    double value = 0;  // scratch: the rate being solved
    uint64_t tag = 0;
    uint32_t version = 0;
    State state = State::kFree;
    bool fixed = false;
    std::vector<Use> uses;
    // Bit k: uses[k]'s resource binds (set_binds). A flow crosses ten resources or so and a
    // couple of them bind: solve(), fix() and shadowed() walk these alone. Past kMaskedUses
    // uses, all.
    uint64_t binding_uses = 0;
  };
  static constexpr size_t kMaskedUses = 64;
  struct User {
    int activity;
    int use;    // index in activities_[activity].uses
    int count;  // as the use's
  };
  // What every event reads of a resource, in one cache line: at 16,384 GPUs a ring step touches
  // tens of thousands of resources, and two lines each left the caches.
  struct alignas(64) Resource {
    double capacity = 0;
    std::vector<User> users;  // running activities
    double rate = 0;          // their total rate since `since` (a fat pipe: the busiest one's)
    double since = 0;
    // The sum of its users' reach: at most the capacity, and the resource can never saturate,
    // so it shares nothing and joins no component.
    double reach = 0;
    Sharing sharing = Sharing::kShared;
    bool binds = false;        // binding(), as of its users now
    bool was_binding = false;  // binding when last solved
    bool dirty = false;
    bool seen = false;
    bool marked = false;   // scratch of enter()
    bool covered = false;  // some users have covers: binding() reads covers_ only then
  };
  static_assert(sizeof(Resource) == 64);
  static constexpr int kCovers = 4;  // the most a resource keeps (add_cover)
  // A second cap on what a shared resource's users can move together: each user crosses a
  // narrower shared resource of its own (its cover: the narrowest of its route, the nearest
  // such to this one), and all of them together move at most the sum of their covers'
  // capacities, plus the reach of users without one. The PCIe links both ways between a GPU
  // and its NIC carry the NIC port's flows each way, and at 100 GB/s never fill under two
  // 49.7 GB/s ports: not binding, they join no component. Kept only for resources with covered
  // users: the others' bound is their reach.
  struct Covers {
    int by[kCovers];     // cover resources, by[0] to by[n - 1]
    int users[kCovers];  // the users each covers here
    int n = 0;
    double sum = 0;      // their capacities
    double covered = 0;  // the covered users' reach, which the sum replaces in Resource::reach
  };
  // A resource's state in a filling of more than one activity (fill), apart from the resources.
  struct Filling {
    double left = 0, weight = 0, level = 0;
    double key = 0;      // the key of its live entry in the order: at most `level`
    uint32_t entry = 0;  // which of its entries is live (the others are stale)
    int unfixed = 0;
    bool touched = false;
    bool shadowed = false;  // never first while it has unfixed users (shadowed())
  };
  // A resource in the filling's order, by (level, id): the level when the entry was made.
  struct OrderEntry {
    double level;
    int resource;
    uint32_t entry;
    bool operator<(const OrderEntry& o) const {
      return level != o.level ? level < o.level : resource < o.resource;
    }
  };
  struct Event {
    double date;
    int activity;
    uint32_t version;
    // Earlier first, then by activity: a total order, so simultaneous events come out the same
    // way every run.
    struct Before {
      bool operator()(const Event& x, const Event& y) const {
        return x.date != y.date ? x.date < y.date : x.activity < y.activity;
      }
    };
  };

  void enter(int a);  // joins its resources
  void leave(int a);  // leaves its resources and frees its slot
  void mark_dirty(int r);
  void set_binds(int ri);  // binding() as of its users now, in it and in its users' masks
  template <class F>
  void for_binding_uses(const Activity& a, F f) const;
  void join_component(int r);
  // Whether resource ri could saturate: its users' reach, and their covers' capacities (with
  // the reach of those without), both exceed its capacity. Fat pipes always.
  bool binding(int ri) const;
  void choose_covers(Activity& a);
  void add_cover(int ri, Use& u, double reach, int sign);
  void set_rate(int a, double rate);  // and the totals of its resources
  void solve();
  void fill(size_t acts_from, size_t res_from);
  bool fill_one(int a, size_t res_from);
  bool shadowed(int ri) const;
  void fix(int a, double value);
  void update_levels();
  bool top_level(double* level, int* resource);
  void requeue(int ri);
  bool live(const OrderEntry& e) const;
  static double level_of(const Filling& f);
  double fat_pipe_weight(const Resource& r) const;

  double now_ = 0;
  int running_ = 0;
  std::vector<Resource> resources_;
  std::vector<Filling> filling_;  // per resource
  std::vector<Covers> covers_;    // per resource
  std::vector<Activity> activities_;
  // Per activity: in the component being solved. Apart, where gathering a component of a few
  // dozen flows reads it for each of a few hundred users it finds.
  std::vector<uint8_t> in_component_;
  std::vector<int> free_;
  std::vector<int> dirty_;
  std::vector<int> entered_;  // activities that started moving since the last solve
  DaryHeap<Event, Event::Before> events_;
  // Latencies' ends, apart from the heap: activities that start with one latency end in the
  // order they started, so each latency's ends queue up in date order. Half of all events on
  // NCCL's pipelined trees (a flow's latency, then its end) had gone through the heap.
  struct Delays {
    double latency;
    std::vector<Event> events;  // in date order from `head` on
    size_t head = 0;
  };
  static constexpr size_t kDelayQueues = 16;  // further latencies' ends go to the heap
  std::vector<Delays> delays_;
  std::vector<Event> due_;  // scratch of advance(): latencies' ends at its date
  void schedule_latency(int id, double latency);
  bool stale(const Event& e) const;
  void happen(int id, std::vector<uint64_t>* ended);
  // Scratch of solve().
  std::vector<int> comp_acts_, comp_res_, stack_, bounded_, touched_, narrow_;
  // A filling's resources sorted by level once (order_, from next_ on), and the ones whose
  // level moved since, under their new level (requeued_): a heap of every resource, each moved
  // as its level rose, had been most of a solve of a few thousand flows.
  std::vector<OrderEntry> order_;
  size_t next_ = 0;
  DaryHeap<OrderEntry, std::less<OrderEntry>> requeued_;
  int64_t solves_ = 0, solved_activities_ = 0;
};

}  // namespace orrery
