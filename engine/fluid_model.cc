#include "engine/fluid_model.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace orrery {

namespace {
// An activity with at most this much left at an event's date ends there with the others: the
// replay's former SimGrid poll used SimGrid's default precision/work-amount the same way, so
// ring steps that finish within a rounding error of each other stay one event.
constexpr double kDoneWork = 1e-5;
}  // namespace

int FluidModel::add_resource(double capacity, Sharing sharing) {
  if (!(capacity > 0)) throw std::invalid_argument("FluidModel: a resource needs a capacity > 0");
  Resource r;
  r.capacity = capacity;
  r.sharing = sharing;
  resources_.push_back(std::move(r));
  filling_.emplace_back();
  covers_.emplace_back();
  return static_cast<int>(resources_.size()) - 1;
}

int FluidModel::start(double amount, const std::vector<int>& resources, double latency,
                      double penalty, double bound, uint64_t tag) {
  return start(amount, resources, {}, latency, penalty, bound, tag);
}

int FluidModel::start(double amount, const std::vector<int>& resources,
                      const std::vector<int>& counts, double latency, double penalty, double bound,
                      uint64_t tag) {
  if (!counts.empty() && counts.size() != resources.size())
    throw std::invalid_argument("FluidModel: one count per resource");
  for (int count : counts)
    if (count < 1) throw std::invalid_argument("FluidModel: a resource's count must be >= 1");
  int id;
  if (free_.empty()) {
    id = static_cast<int>(activities_.size());
    activities_.emplace_back();
    in_component_.push_back(0);
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Activity& a = activities_[id];
  a.remaining = std::max(0.0, amount);
  a.rate = 0;
  a.updated = now_;
  a.penalty = penalty;
  a.bound = bound;
  a.tag = tag;
  a.uses.clear();
  for (size_t k = 0; k < resources.size(); ++k)
    a.uses.push_back({resources[k], -1, counts.empty() ? 1 : counts[k]});
  ++running_;
  if (latency > 0 || a.uses.empty() || a.remaining <= 0) {
    // Ends (or starts moving) when the latency has passed: an event at that date.
    a.state = State::kLatency;
    schedule_latency(id, std::max(0.0, latency));
  } else {
    enter(id);
  }
  return id;
}

void FluidModel::enter(int id) {
  Activity& a = activities_[id];
  a.state = State::kRunning;
  a.rate = 0;
  a.updated = now_;
  a.end = kNever;
  entered_.push_back(id);
  // Its reach when it starts moving, not when it was started: a flow waits out its latency
  // first, and its resources are read here anyway (at 16,384 GPUs reading them twice, a
  // latency apart, missed the cache twice).
  a.reach = a.bound > 0 ? a.bound : kNever;
  for (const Use& u : a.uses) a.reach = std::min(a.reach, resources_[u.resource].capacity);
  choose_covers(a);
  a.binding_uses = 0;
  for (size_t k = 0; k < a.uses.size(); ++k) {
    Resource& r = resources_[a.uses[k].resource];
    a.uses[k].slot = static_cast<int>(r.users.size());
    r.users.push_back({id, static_cast<int>(k), a.uses[k].count});
    r.reach += a.reach * a.uses[k].count;
    add_cover(a.uses[k].resource, a.uses[k], a.reach, 1);
    set_binds(a.uses[k].resource);
    if (r.binds && k < kMaskedUses) a.binding_uses |= uint64_t{1} << k;
    mark_dirty(a.uses[k].resource);
  }
}

// Each use's cover: the narrowest shared resource of the activity's (nearest to the use; the
// earlier on a tie), when it is narrower than the use's resource and the activity crosses it as
// often. None where the activity lists a resource twice.
void FluidModel::choose_covers(Activity& a) {
  const size_t n = a.uses.size();
  if (n < 2) return;
  double narrowest = kNever, widest = 0;
  bool twice = false;
  for (Use& u : a.uses) {
    u.cover = -1;
    Resource& r = resources_[u.resource];
    twice = twice || r.marked;
    r.marked = true;
    widest = std::max(widest, r.capacity);
    if (r.sharing == Sharing::kShared) narrowest = std::min(narrowest, r.capacity);
  }
  for (const Use& u : a.uses) resources_[u.resource].marked = false;
  if (twice || !(narrowest < widest)) return;
  narrow_.clear();
  for (size_t k = 0; k < n; ++k) {
    const Resource& r = resources_[a.uses[k].resource];
    if (r.sharing == Sharing::kShared && r.capacity == narrowest)
      narrow_.push_back(static_cast<int>(k));
  }
  for (size_t k = 0; k < n; ++k) {
    Use& u = a.uses[k];
    if (!(narrowest < resources_[u.resource].capacity)) continue;  // none narrower
    const int at = static_cast<int>(k);
    int c = narrow_[0];
    for (int p : narrow_)
      if (std::abs(p - at) < std::abs(c - at)) c = p;
    if (a.uses[c].count >= u.count) u.cover = a.uses[c].resource;
  }
}

// Joins (sign 1) or leaves (-1) u's resource ri with u's cover (none: its reach alone counts,
// in Resource::reach). A resource keeps at most kCovers of them: a link of a fat tree's core
// carries flows of hundreds of NICs, whose covers sum far past its capacity anyway, and a user
// past them counts its reach (its cover then -1).
void FluidModel::add_cover(int ri, Use& u, double reach, int sign) {
  if (u.cover < 0) return;
  Covers& c = covers_[ri];
  int k = 0;
  while (k < c.n && c.by[k] != u.cover) ++k;
  if (k == c.n && (sign < 0 || k == kCovers)) {
    u.cover = -1;
    return;
  }
  if (k == c.n) {
    c.by[k] = u.cover;
    c.users[k] = 0;
    ++c.n;
  }
  c.users[k] += sign;
  c.covered += sign * reach * u.count;
  if (c.users[k] > 1 || (sign < 0 && c.users[k] > 0)) return;
  if (c.users[k] == 0) {
    --c.n;
    c.by[k] = c.by[c.n];
    c.users[k] = c.users[c.n];
  }
  // Summed again from the list: no rounding left over as covers come and go.
  c.sum = 0;
  for (int j = 0; j < c.n; ++j) c.sum += resources_[c.by[j]].capacity;
  if (c.n == 0) c.covered = 0;
  resources_[ri].covered = c.n > 0;
}

void FluidModel::leave(int id) {
  Activity& a = activities_[id];
  if (a.state == State::kRunning) {
    set_rate(id, 0.0);
    for (Use& u : a.uses) {
      Resource& r = resources_[u.resource];
      r.reach -= a.reach * u.count;
      add_cover(u.resource, u, a.reach, -1);
      auto& users = r.users;
      const User moved = users.back();
      users[u.slot] = moved;
      activities_[moved.activity].uses[moved.use].slot = u.slot;
      users.pop_back();
      if (users.empty()) r.reach = r.rate = 0;  // no rounding left over
      set_binds(u.resource);
      mark_dirty(u.resource);
    }
  }
  a.state = State::kFree;
  ++a.version;
  --running_;
  free_.push_back(id);
}

void FluidModel::cancel(int id) {
  if (id < 0 || static_cast<size_t>(id) >= activities_.size() ||
      activities_[id].state == State::kFree)
    throw std::invalid_argument("FluidModel: cancel of an activity that is not running");
  leave(id);
}

void FluidModel::set_binds(int ri) {
  Resource& r = resources_[ri];
  const bool binds = binding(ri);
  if (binds == r.binds) return;
  r.binds = binds;
  for (const User& v : r.users)
    if (static_cast<size_t>(v.use) < kMaskedUses) {
      const uint64_t bit = uint64_t{1} << v.use;
      uint64_t& mask = activities_[v.activity].binding_uses;
      mask = binds ? mask | bit : mask & ~bit;
    }
}

template <class F>
void FluidModel::for_binding_uses(const Activity& a, F f) const {
  if (a.uses.size() > kMaskedUses) {
    for (const Use& u : a.uses)
      if (resources_[u.resource].binds) f(u);
    return;
  }
  for (uint64_t m = a.binding_uses; m != 0; m &= m - 1) f(a.uses[__builtin_ctzll(m)]);
}

bool FluidModel::binding(int ri) const {
  // With a margin over rounding in the running sums: a resource that might saturate is one.
  const Resource& r = resources_[ri];
  if (r.sharing != Sharing::kShared) return true;
  const double full = r.capacity * (1 - 1e-9);
  if (!(r.reach > full)) return false;
  if (!r.covered) return true;
  const Covers& c = covers_[ri];
  return c.sum + (r.reach - c.covered) > full;
}

void FluidModel::set_rate(int id, double rate) {
  Activity& a = activities_[id];
  if (rate == a.rate) return;
  const double old = a.rate;
  a.rate = rate;
  for (const Use& u : a.uses) {
    Resource& r = resources_[u.resource];
    if (on_usage && r.rate > 0 && now_ > r.since) on_usage(u.resource, r.since, now_, r.rate);
    r.since = now_;
    if (r.sharing == Sharing::kShared) {
      r.rate += (rate - old) * u.count;
      if (r.rate < 0) r.rate = 0;
    } else {
      r.rate = 0;
      for (const User& v : r.users) r.rate = std::max(r.rate, activities_[v.activity].rate);
    }
  }
}

void FluidModel::mark_dirty(int r) {
  if (resources_[r].dirty) return;
  resources_[r].dirty = true;
  dirty_.push_back(r);
}

void FluidModel::schedule_latency(int id, double latency) {
  Activity& a = activities_[id];
  a.end = now_ + latency;
  const Event e{a.end, id, a.version};
  for (Delays& d : delays_)
    if (d.latency == latency) {
      d.events.push_back(e);
      return;
    }
  if (delays_.size() < kDelayQueues) {
    delays_.push_back({latency, {e}, 0});
    return;
  }
  events_.push(e);
}

bool FluidModel::stale(const Event& e) const {
  const Activity& a = activities_[e.activity];
  return a.state == State::kFree || a.version != e.version;
}

// What an event does: a flow leaves its latency and starts moving, or an activity ends.
void FluidModel::happen(int id, std::vector<uint64_t>* ended) {
  Activity& a = activities_[id];
  if (a.state == State::kLatency && !a.uses.empty() && a.remaining > 0) {
    enter(id);
  } else {
    ended->push_back(a.tag);
    leave(id);
  }
}

bool FluidModel::advance(double limit, std::vector<uint64_t>* ended) {
  if (!dirty_.empty()) solve();
  while (!events_.empty() && stale(events_.top())) events_.pop();
  double date = events_.empty() ? kNever : events_.top().date;
  for (Delays& d : delays_) {
    while (d.head < d.events.size() && stale(d.events[d.head])) ++d.head;
    if (d.head == d.events.size()) {
      d.events.clear();
      d.head = 0;
    } else {
      date = std::min(date, d.events[d.head].date);
    }
  }
  if (date == kNever || date > limit) return false;
  now_ = date;
  // The latencies' ends at this date, in the heap's order (by activity) among its own.
  due_.clear();
  for (Delays& d : delays_) {
    for (; d.head < d.events.size() && d.events[d.head].date == date; ++d.head)
      if (!stale(d.events[d.head])) due_.push_back(d.events[d.head]);
    if (d.head > 1024 && d.head * 2 > d.events.size()) {
      d.events.erase(d.events.begin(), d.events.begin() + static_cast<std::ptrdiff_t>(d.head));
      d.head = 0;
    }
  }
  // Activities that started together mostly took their slots from the free list, last freed
  // first: a batch usually comes out of its queue in reverse order.
  if (std::is_sorted(due_.rbegin(), due_.rend(), Event::Before()))
    std::reverse(due_.begin(), due_.end());
  else
    std::sort(due_.begin(), due_.end(), Event::Before());
  size_t next_due = 0;
  while (!events_.empty()) {
    const Event e = events_.top();
    if (stale(e)) {
      events_.pop();
      continue;
    }
    for (; next_due < due_.size() && Event::Before()(due_[next_due], e); ++next_due)
      happen(due_[next_due].activity, ended);
    Activity& a = activities_[e.activity];
    if (e.date > date &&
        !(a.state == State::kRunning && a.remaining - a.rate * (date - a.updated) <= kDoneWork))
      break;
    events_.pop();
    happen(e.activity, ended);
  }
  for (; next_due < due_.size(); ++next_due) happen(due_[next_due].activity, ended);
  return true;
}

double FluidModel::fat_pipe_weight(const Resource& r) const {
  // A fat pipe caps each user, not their sum: its level follows the unfixed user with the
  // smallest penalty.
  double w = 0;
  for (const User& v : r.users)
    if (!activities_[v.activity].fixed) w = std::max(w, 1.0 / activities_[v.activity].penalty);
  return w;
}

double FluidModel::level_of(const Filling& f) {
  // The rate per unit of 1/penalty at which the resource saturates.
  return f.left / f.weight;
}

void FluidModel::fix(int id, double value) {
  Activity& a = activities_[id];
  a.fixed = true;
  a.value = value;
  for_binding_uses(a, [&](const Use& u) {
    const Resource& r = resources_[u.resource];
    if (!r.seen) return;  // not part of this solve
    Filling& f = filling_[u.resource];
    if (f.shadowed) return;  // never comes first: its state is read by nothing
    --f.unfixed;
    if (r.sharing == Sharing::kShared) {
      f.left -= value * u.count;
      f.weight -= u.count / a.penalty;
    }
    if (f.unfixed > 0 && f.left < 0) f.left = 0;
    if (!f.touched) {
      f.touched = true;
      touched_.push_back(u.resource);
    }
  });
}

// The levels of the resources fix() touched, once each however many of their users it fixed
// (a fat pipe's weight, its busiest unfixed user's, read once too). Fixing users raises a level
// (less capacity left, but less weight sharing it), so a resource keeps its place in the order
// under its old, lower key and is moved only if it comes first (top_level): a resource whose
// users others fix is never moved at all. Only a level that fell (rounding, or left clamped at
// 0) gets a new entry at once; the old one is then stale. Keys are never above the levels, so
// the first entry whose key is its level is the lowest level.
void FluidModel::update_levels() {
  for (int ri : touched_) {
    Filling& f = filling_[ri];
    f.touched = false;
    if (f.unfixed <= 0) continue;
    if (resources_[ri].sharing != Sharing::kShared) f.weight = fat_pipe_weight(resources_[ri]);
    f.level = level_of(f);
    if (f.level < f.key) requeue(ri);
  }
  touched_.clear();
}

// A new entry for resource ri under its level; its earlier entries are stale from now on.
void FluidModel::requeue(int ri) {
  Filling& f = filling_[ri];
  f.key = f.level;
  ++f.entry;
  requeued_.push({f.level, ri, f.entry});
}

// The lowest level of the resources with unfixed users and the resource, or false when none is
// left. The candidates are the next entry of the sorted order and the lowest requeued one;
// stale entries and resources with no unfixed users are dropped, and an entry whose key lags
// its level is requeued under the level.
bool FluidModel::top_level(double* level, int* resource) {
  for (;;) {
    while (next_ < order_.size() && !live(order_[next_])) ++next_;
    while (!requeued_.empty() && !live(requeued_.top())) requeued_.pop();
    const bool from_order =
        next_ < order_.size() && (requeued_.empty() || order_[next_] < requeued_.top());
    if (!from_order && requeued_.empty()) return false;
    const OrderEntry e = from_order ? order_[next_] : requeued_.top();
    const Filling& f = filling_[e.resource];
    // Bitwise: a level that is NaN compares unequal to itself.
    if (std::memcmp(&e.level, &f.level, sizeof(double)) != 0) {
      requeue(e.resource);
      continue;
    }
    *level = f.level;
    *resource = e.resource;
    return true;
  }
}

bool FluidModel::live(const OrderEntry& e) const {
  const Filling& f = filling_[e.resource];
  return e.entry == f.entry && f.unfixed > 0;
}

// Adds resource r's users not yet in the component, and the binding resources they cross, to
// the component being gathered (the latter to visit next).
void FluidModel::join_component(int r) {
  for (const User& v : resources_[r].users) {
    if (in_component_[v.activity]) continue;
    in_component_[v.activity] = 1;
    comp_acts_.push_back(v.activity);
    for_binding_uses(activities_[v.activity], [this](const Use& u) {
      Resource& t = resources_[u.resource];
      if (t.seen) return;
      t.seen = true;
      stack_.push_back(u.resource);
    });
  }
}

void FluidModel::solve() {
  ++solves_;
  // The connected components of the resources that changed: activities and resources linked
  // through shared use. Nothing outside them can change rate. Each is filled by itself: the
  // same rates as filling them together (they share nothing), over shorter orders.
  comp_acts_.clear();
  comp_res_.clear();
  for (int start : dirty_) {
    // A change on a resource that never saturates (and did not when last solved) moves no rate.
    const Resource& first = resources_[start];
    if (first.seen || (!first.binds && !first.was_binding)) continue;
    const size_t acts_from = comp_acts_.size(), res_from = comp_res_.size();
    if (first.binds) {
      resources_[start].seen = true;
      stack_.push_back(start);
    } else {
      // No longer binding: its users move again, each as the resources that still bind let
      // it; the resource itself, which cannot saturate, is left out of the filling.
      join_component(start);
    }
    while (!stack_.empty()) {
      const int r = stack_.back();
      stack_.pop_back();
      comp_res_.push_back(r);
      join_component(r);
    }
    if (comp_acts_.size() > acts_from) fill(acts_from, res_from);
  }
  for (int r : dirty_) {
    resources_[r].dirty = false;
    if (!resources_[r].binds) resources_[r].was_binding = false;
  }
  dirty_.clear();
  // An activity on resources none of which can saturate is held back by its bound alone; it
  // is solved by itself, which fixes it at that bound.
  for (int id : entered_) {
    if (activities_[id].state != State::kRunning || in_component_[id]) continue;
    in_component_[id] = 1;
    comp_acts_.push_back(id);
    fill(comp_acts_.size() - 1, comp_res_.size());
  }
  entered_.clear();
  solved_activities_ += static_cast<int64_t>(comp_acts_.size());

  for (int id : comp_acts_) {
    Activity& a = activities_[id];
    in_component_[id] = 0;
    if (a.value == a.rate && a.end != kNever) continue;  // same rate: same end date
    set_rate(id, a.value);
    ++a.version;
    a.end = a.rate > 0 ? now_ + std::max(0.0, a.remaining) / a.rate : kNever;
    if (a.end != kNever) events_.push({a.end, id, a.version});
  }
  for (int ri : comp_res_) {
    Resource& r = resources_[ri];
    r.seen = false;
    r.was_binding = r.binds;
  }
}

// Progressive filling of one component, comp_acts_ from acts_from and comp_res_ from res_from:
// each activity's value.
void FluidModel::fill(size_t acts_from, size_t res_from) {
  // SimGrid's lmm::MaxMin::maxmin_solve: raise a common level; an
  // activity's rate is level / penalty. The lowest of the resources' saturation levels and of
  // the bounded activities' bound x penalty fixes the activities it concerns; repeat.
  const size_t acts = comp_acts_.size() - acts_from;
  if (acts == 0) return;  // a resource its last users left: nothing to share
  if (acts == 1 && fill_one(comp_acts_[acts_from], res_from)) return;
  order_.clear();
  next_ = 0;
  requeued_.clear();
  for (size_t k = acts_from; k < comp_acts_.size(); ++k) {
    Activity& a = activities_[comp_acts_[k]];
    a.fixed = false;
    a.value = 0;
    a.remaining -= a.rate * (now_ - a.updated);
    a.updated = now_;
  }
  for (size_t k = res_from; k < comp_res_.size(); ++k) {
    const int ri = comp_res_[k];
    const Resource& r = resources_[ri];
    Filling& f = filling_[ri];
    f.left = r.capacity;
    f.weight = 0;
    f.unfixed = static_cast<int>(r.users.size());
    if (r.sharing == Sharing::kShared)
      for (const User& v : r.users) f.weight += v.count / activities_[v.activity].penalty;
    else
      f.weight = fat_pipe_weight(r);
    f.shadowed = f.unfixed > 0 && shadowed(ri);
    if (f.unfixed > 0 && !f.shadowed) {
      f.level = f.key = level_of(f);
      order_.push_back({f.level, ri, ++f.entry});
    }
  }
  // Sorted once: most resources never come first again before their users are all fixed (by
  // other resources), and leave the order by a step past them.
  std::sort(order_.begin(), order_.end());
  bounded_.clear();
  for (size_t k = acts_from; k < comp_acts_.size(); ++k)
    if (activities_[comp_acts_[k]].bound > 0) bounded_.push_back(comp_acts_[k]);
  std::sort(bounded_.begin(), bounded_.end(), [this](int x, int y) {
    const double bx = activities_[x].bound * activities_[x].penalty;
    const double by = activities_[y].bound * activities_[y].penalty;
    return bx != by ? bx < by : x < y;
  });
  size_t next_bounded = 0;
  size_t unfixed = comp_acts_.size() - acts_from;
  while (unfixed > 0) {
    while (next_bounded < bounded_.size() && activities_[bounded_[next_bounded]].fixed)
      ++next_bounded;
    double by_resource = kNever;
    int ri = -1;
    top_level(&by_resource, &ri);  // leaves both as they are when no resource is left
    const double by_bound = next_bounded < bounded_.size()
                                ? activities_[bounded_[next_bounded]].bound *
                                      activities_[bounded_[next_bounded]].penalty
                                : kNever;
    if (by_bound < by_resource) {
      fix(bounded_[next_bounded], activities_[bounded_[next_bounded]].bound);
      update_levels();
      --unfixed;
      continue;
    }
    if (ri < 0) break;  // cannot happen: every running activity uses a resource
    const double level = by_resource;
    ++filling_[ri].entry;  // its entry is used up
    // fix() leaves this resource's user list as it is: index, not iterators over a copy.
    const auto& users = resources_[ri].users;
    for (size_t k = 0; k < users.size(); ++k) {
      const int id = users[k].activity;
      if (activities_[id].fixed) continue;
      fix(id, level / activities_[id].penalty);
      --unfixed;
    }
    update_levels();
  }
}

// Whether resource ri (in the component being filled) has a twin that always comes before it
// in the filling's order: a shared resource with the same users in the same order (so the
// same weight, bit for bit, and the same subtractions from what is left, in the same order)
// and less capacity by more than rounding could close, or the same capacity and a lower id.
// What is left of ri's capacity then stays above the twin's, the twin comes first and fixes
// all of their users, and ri is never the resource that fixes anyone: left out of the order,
// the filling makes the same selections in the same order. Most resources of a flow's route
// across servers are such twins (the PCIe links before a NIC carry the NIC's flows): 60% of
// the order on the dp50 traces on DGX H100.
bool FluidModel::shadowed(int ri) const {
  const Resource& r = resources_[ri];
  if (r.sharing != Sharing::kShared) return false;
  const size_t n = r.users.size();
  const User* const mine = r.users.data();
  const double below = r.capacity * (1 - 1e-9);
  bool found = false;
  // A twin is in the component, so it binds: among the first user's binding uses.
  for_binding_uses(activities_[mine[0].activity], [&](const Use& u) {
    const int ti = u.resource;
    const Resource& t = resources_[ti];
    if (found || t.users.size() != n || ti == ri || !t.seen || t.sharing != Sharing::kShared)
      return;
    if (!(t.capacity < below || (t.capacity == r.capacity && ti < ri))) return;
    const User* const theirs = t.users.data();
    size_t k = 0;
    while (k < n && theirs[k].activity == mine[k].activity && theirs[k].count == mine[k].count) ++k;
    found = k == n;
  });
  return found;
}

// A component of one activity (most of them: a flow alone on the links it could fill), whose
// resources it uses once each: the filling above in closed form, with its arithmetic. The
// lowest level among its resources, or its bound when bound x penalty is lower, fixes it.
// False (nothing done) when it uses a resource twice.
bool FluidModel::fill_one(int id, size_t res_from) {
  Activity& a = activities_[id];
  double by_resource = kNever;
  for (size_t k = res_from; k < comp_res_.size(); ++k) {
    const Resource& r = resources_[comp_res_[k]];
    if (r.users.size() != 1) return false;
    const double weight =
        r.sharing == Sharing::kShared ? 0.0 + r.users[0].count / a.penalty : 1.0 / a.penalty;
    by_resource = std::min(by_resource, r.capacity / weight);
  }
  a.remaining -= a.rate * (now_ - a.updated);
  a.updated = now_;
  a.fixed = true;
  if (a.bound > 0 && a.bound * a.penalty < by_resource)
    a.value = a.bound;
  else
    a.value = by_resource == kNever ? 0.0 : by_resource / a.penalty;
  return true;
}

void FluidModel::finish_usage() {
  if (!dirty_.empty()) solve();
  for (size_t ri = 0; ri < resources_.size(); ++ri) {
    Resource& r = resources_[ri];
    if (on_usage && r.rate > 0 && now_ > r.since)
      on_usage(static_cast<int>(ri), r.since, now_, r.rate);
    r.since = now_;
  }
}

}  // namespace orrery
