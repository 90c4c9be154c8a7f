#include "workloads/model_graph_check.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/suggest.h"
#include "workloads/op_counts.h"

namespace orrery {

namespace {

std::string op_label(const ModelGraph& g, size_t i) {
  return "ops[" + std::to_string(i) + "] \"" + g.ops[i].name + "\"";
}

// Iterative DFS; returns a cycle in dependency order, or empty.
std::vector<int> find_cycle(const ModelGraph& g) {
  const int n = static_cast<int>(g.ops.size());
  std::vector<char> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<int, size_t>> stack;
  for (int root = 0; root < n; ++root) {
    if (state[root]) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const auto& deps = g.ops[v].deps;
      if (next == deps.size()) {
        state[v] = 2;
        stack.pop_back();
        continue;
      }
      int d = deps[next++];
      if (state[d] == 0) {
        state[d] = 1;
        stack.push_back({d, 0});
      } else if (state[d] == 1) {
        // Each stack entry depends on the one above it, so walking from the top down to d lists
        // the cycle in dependency order (each op depends on the one before it).
        std::vector<int> cycle;
        for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
          cycle.push_back(it->first);
          if (it->first == d) break;
        }
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        return cycle;
      }
    }
  }
  return {};
}

}  // namespace

void check_model_graph(const ModelGraph& g, const std::string& origin) {
  auto fail = [&](const std::string& what) { throw InputError(origin + ": " + what); };
  if (!limits::kBatch.contains(static_cast<double>(g.batch)))
    fail("batch " + out_of_range(static_cast<double>(g.batch), limits::kBatch));
  std::unordered_set<std::string> names;
  const int n = static_cast<int>(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ModelOp& op = g.ops[i];
    if (op.name.empty()) fail("ops[" + std::to_string(i) + "]: empty name");
    if (!names.insert(op.name).second) fail(op_label(g, i) + ": duplicate op name");
    if (!is_known_op_type(op.type))
      fail(op_label(g, i) + ": unknown op type \"" + op.type + "\"" +
           did_you_mean(op.type, known_op_types()) + " (known: " + join_names(known_op_types()) +
           ")");
    auto check_shape = [&](const Shape& s, const std::string& what) {
      for (int64_t d : s)
        if (d < 0) fail(op_label(g, i) + ": " + what + " has a negative dimension");
      try {
        numel(s);
      } catch (const InputError& e) {
        fail(op_label(g, i) + ": " + what + ": " + e.what());
      }
    };
    for (size_t k = 0; k < op.inputs.size(); ++k)
      check_shape(op.inputs[k], "input " + std::to_string(k));
    check_shape(op.output, "output");
    // Elements of one parameter or gradient tensor: 1e15 is 4 PB of fp32.
    constexpr Range kElements{0, 1e15, Quantity::kCount};
    const std::pair<const char*, std::pair<double, const Range*>> amounts[] = {
        {"flops", {op.flops, &limits::kOpFlops}},
        {"bytes", {op.bytes, &limits::kBytes}},
        {"params", {op.params, &kElements}},
        {"grads", {op.grads, &kElements}}};
    for (const auto& [key, value] : amounts)
      if (!value.second->contains(value.first))
        fail(op_label(g, i) + ": " + key + " " + out_of_range(value.first, *value.second));
    for (int d : op.deps) {
      if (d < 0 || d >= n)
        fail(op_label(g, i) + ": dependency index " + std::to_string(d) + " out of range");
      if (d == static_cast<int>(i)) fail(op_label(g, i) + ": depends on itself");
    }
  }
  std::vector<int> cycle = find_cycle(g);
  if (!cycle.empty()) {
    std::string text;
    for (int v : cycle) text += g.ops[v].name + " -> ";
    fail("dependency cycle: " + text + g.ops[cycle.front()].name);
  }
}

}  // namespace orrery
