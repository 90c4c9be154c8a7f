#include "models/learned/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/errors.h"
#include "models/learned/rng.h"

namespace orrery {
namespace {

struct Sample {
  std::vector<ParamValue> values;
  double t = 0.0;  // seconds
  double log_t = 0.0;
  std::string key;
};

enum class Split : unsigned char { kTrain, kVal, kTest };

struct Group {
  std::vector<std::string> mode;
  std::vector<size_t> train, val, test;  // sample indices
  size_t size() const { return train.size() + val.size() + test.size(); }
};

// The three datasets of a group for one feature set, standardised on the training rows.
struct Sets {
  Dataset train, val;
  std::vector<double> x_mean, x_scale;
  double y_mean = 0.0, y_scale = 1.0;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pct(double e) { return fmt("%.2f%%", 100.0 * e); }

// Above this many distinct candidates the principal-component search screens them first.
constexpr size_t kScreenAbove = 16;

std::string arch_name(int layers, int neurons) {
  return "L" + std::to_string(layers) + "N" + std::to_string(neurons);
}

class OpTrainer {
 public:
  OpTrainer(const std::vector<ProfileRow>& rows, const TrainerOptions& o) : rows_(rows), o_(o) {}

  OpModel run() {
    if (rows_.empty()) throw InputError("estimator training: no rows");
    m_.op = rows_[0].op;
    m_.device = rows_[0].device;
    m_.rows = rows_.size();
    make_schema_and_samples();
    split();
    classify();
    make_groups();
    search_principal_component();
    m_.input_forms = forms_;
    for (size_t g = 0; g < groups_.size(); ++g) build_group(g);
    if (restarts_)
      log(std::to_string(restarts_) +
          " trainings restarted from other weights (dead network or no improvement)");
    return std::move(m_);
  }

 private:
  void log(const std::string& s) const {
    if (o_.log) o_.log(m_.op + ": " + s);
  }

  // The most common input-rank signature defines the schema; attributes are the union of
  // those its rows name.
  void make_schema_and_samples() {
    std::map<std::vector<int>, size_t> signatures;
    std::vector<ModelOp> ops;
    ops.reserve(rows_.size());
    for (const auto& r : rows_) {
      ops.push_back(op_from_row(r));
      std::vector<int> ranks;
      for (const auto& s : ops.back().inputs) ranks.push_back(static_cast<int>(s.size()));
      ++signatures[ranks];
    }
    std::vector<int> best;
    size_t best_n = 0;
    for (const auto& [sig, n] : signatures)
      if (n > best_n) best = sig, best_n = n;
    std::set<std::string> attrs;
    const ModelOp* example = nullptr;
    for (const auto& op : ops) {
      std::vector<int> ranks;
      for (const auto& s : op.inputs) ranks.push_back(static_cast<int>(s.size()));
      if (ranks != best) continue;
      if (!example) example = &op;
      for (const auto& [k, v] : op.attrs) attrs.insert(k);
    }
    m_.schema = make_schema(*example, {attrs.begin(), attrs.end()});
    // Canonical row order, so the split depends on the set of rows and the seed only.
    std::vector<size_t> order(rows_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return row_key(rows_[a]) < row_key(rows_[b]); });
    for (size_t i : order) {
      auto v = extract_params(m_.schema, ops[i]);
      if (!v) {
        ++m_.skipped_rows;
        continue;
      }
      samples_.push_back(
          {std::move(*v), rows_[i].time_s, std::log(rows_[i].time_s), row_key(rows_[i])});
    }
  }

  // Held-out and validation rows are drawn before anything looks at the data.
  void split() {
    std::vector<size_t> idx(samples_.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    Rng rng(derive_seed(o_.seed, 11));
    rng.shuffle(idx);
    size_t n_test = static_cast<size_t>(std::llround(o_.test_fraction * idx.size()));
    size_t n_val = static_cast<size_t>(std::llround(o_.val_fraction * idx.size()));
    split_.assign(samples_.size(), Split::kTrain);
    for (size_t k = 0; k < idx.size(); ++k)
      split_[idx[k]] = k < n_test ? Split::kTest : k < n_test + n_val ? Split::kVal : Split::kTrain;
    for (size_t i = 0; i < samples_.size(); ++i)
      if (split_[i] == Split::kTest) m_.held_out.push_back(samples_[i].key);
  }

  // Pruning rules on the training and validation rows' parameter values.
  void classify() {
    const auto& params = m_.schema.params;
    m_.params.resize(params.size());
    allowed_.resize(params.size());
    for (size_t p = 0; p < params.size(); ++p) {
      std::set<std::string> distinct;
      for (size_t i = 0; i < samples_.size(); ++i)
        if (split_[i] != Split::kTest)
          distinct.insert(param_value_text(params[p], samples_[i].values[p]));
      ParamStats st{params[p].is_string(), params[p].is_dim(), distinct.size()};
      allowed_[p] = allowed_kinds(st);
      m_.params[p].distinct = distinct.size();
      m_.params[p].kind = allowed_[p].size() == 1 ? allowed_[p][0] : ParamKind::kNull;
    }
    candidates_ = enumerate_candidates(allowed_);
    std::string kinds;
    for (size_t p = 0; p < params.size(); ++p) {
      std::string k;
      for (ParamKind a : allowed_[p]) k += (k.empty() ? "" : "/") + std::string(param_kind_name(a));
      kinds += " " + params[p].name + ":" + k;
    }
    log(std::to_string(samples_.size()) + " rows; parameters" + kinds + "; " +
        std::to_string(candidates_.size()) + " candidate complexities");
  }

  void make_groups() {
    std::map<std::vector<std::string>, Group> by_mode;
    for (size_t i = 0; i < samples_.size(); ++i) {
      Group& g = by_mode[m_.mode_of(samples_[i].values)];
      (split_[i] == Split::kTrain ? g.train
       : split_[i] == Split::kVal ? g.val
                                  : g.test)
          .push_back(i);
    }
    for (auto& [mode, g] : by_mode) {
      g.mode = mode;
      if (g.size() < o_.min_group_rows || g.train.empty()) {
        m_.skipped_rows += g.size();
        log("mode " + m_.mode_text(mode) + ": " + std::to_string(g.size()) +
            " rows, too few for a network");
        continue;
      }
      groups_.push_back(std::move(g));
    }
    if (groups_.empty())
      throw InputError("estimator training: op " + m_.op + " on " + m_.device +
                       ": no mode group has " + std::to_string(o_.min_group_rows) + " rows");
    for (const auto& g : groups_) total_train_ += g.train.size();
  }

  Sets make_sets(const Group& g, const Candidate* pc) const {
    Sets s;
    auto feats = [&](size_t i) {
      std::vector<double> f = m_.features(samples_[i].values, pc != nullptr);
      if (pc) f.back() = log_principal_component(*pc, samples_[i].values);
      return f;
    };
    size_t cols = feats(g.train[0]).size();
    s.x_mean.assign(cols, 0.0);
    s.x_scale.assign(cols, 0.0);
    std::vector<std::vector<double>> tf;
    for (size_t i : g.train) tf.push_back(feats(i));
    double n = static_cast<double>(g.train.size());
    for (const auto& f : tf)
      for (size_t c = 0; c < cols; ++c) s.x_mean[c] += f[c] / n;
    for (const auto& f : tf)
      for (size_t c = 0; c < cols; ++c)
        s.x_scale[c] += (f[c] - s.x_mean[c]) * (f[c] - s.x_mean[c]) / n;
    for (double& v : s.x_scale) v = v > 1e-24 ? std::sqrt(v) : 1.0;  // constant: centred only
    for (size_t i : g.train) s.y_mean += samples_[i].log_t / n;
    double var = 0.0;
    for (size_t i : g.train)
      var += (samples_[i].log_t - s.y_mean) * (samples_[i].log_t - s.y_mean) / n;
    s.y_scale = var > 1e-24 ? std::sqrt(var) : 1.0;
    auto fill = [&](const std::vector<size_t>& idx, Dataset* d) {
      d->cols = static_cast<int>(cols);
      for (size_t i : idx) {
        std::vector<double> f = feats(i);
        for (size_t c = 0; c < cols; ++c) d->x.push_back((f[c] - s.x_mean[c]) / s.x_scale[c]);
        d->y.push_back((samples_[i].log_t - s.y_mean) / s.y_scale);
      }
    };
    fill(g.train, &s.train);
    fill(g.val, &s.val);
    return s;
  }

  TrainResult fit(const Sets& s, int layers, int neurons, const TrainOptions& hyper) {
    TrainResult r = train_mlp(layers, neurons, s.train, s.val, s.y_scale, hyper);
    restarts_ += r.restarts;
    return r;
  }

  TrainOptions search_hyper(size_t g) const {
    TrainOptions h = o_.defaults;
    h.seed = derive_seed(o_.seed, 1000 + g);
    return h;
  }

  // Step 3: every candidate with the default network on every group; candidates whose values
  // equal an earlier one's on every row give the same training and share its result.
  void search_principal_component() {
    using In = TrainerOptions::Inputs;
    if (o_.inputs != In::kBest) {
      m_.log_inputs = o_.inputs == In::kLog;
      search_principal_component_in(m_.log_inputs);
      return;
    }
    OpModel log_model = m_;
    std::vector<TrainResult> log_nets;
    double log_err = search_principal_component_in(true);
    std::swap(log_model, m_);
    std::swap(log_nets, default_nets_);
    double lin_err = search_principal_component_in(false);
    if (log_err <= lin_err) {
      m_ = std::move(log_model);
      default_nets_ = std::move(log_nets);
    }
    log(std::string("parameters as ") + (m_.log_inputs ? "logarithms" : "values") +
        " (validation " + pct(std::min(log_err, lin_err)) + " against " +
        pct(std::max(log_err, lin_err)) + ")");
  }

  // The default network trained on every group with one candidate; rows-weighted validation
  // error.
  double try_candidate(const Candidate& cand, const TrainOptions& hyper,
                       std::vector<TrainResult>* nets) {
    double sum = 0.0, weight = 0.0;
    for (size_t g = 0; g < groups_.size(); ++g) {
      Sets s = make_sets(groups_[g], &cand);
      TrainOptions h = hyper;
      h.seed = search_hyper(g).seed;
      TrainResult r = fit(s, o_.default_layers, o_.default_neurons, h);
      double w = static_cast<double>(std::max<size_t>(1, groups_[g].val.size()));
      sum += r.val_error * w;
      weight += w;
      nets->push_back(std::move(r));
    }
    return sum / weight;
  }

  // Step 3 with parameters in one form; returns the best candidate's validation error.
  // Candidates whose values equal an earlier one's on every row give the same training and
  // share its result. With many candidates, a first round trains each for a quarter of the
  // default epochs and only the best quarter (and the no-PC reference) are trained in full
  // (successive halving); the winner is the best fully trained one.
  double search_principal_component_in(bool log_inputs) {
    m_.log_inputs = log_inputs;
    m_.pc_search.clear();
    std::map<std::vector<double>, size_t> seen;  // PC column -> unique index
    std::vector<size_t> same_as(candidates_.size());
    std::vector<size_t> unique;  // candidate indices
    for (size_t c = 0; c < candidates_.size(); ++c) {
      std::vector<double> column;
      if (!candidates_[c].empty())
        for (const auto& smp : samples_)
          column.push_back(log_principal_component(candidates_[c], smp.values));
      auto [it, fresh] = seen.emplace(std::move(column), unique.size());
      if (fresh) unique.push_back(c);
      same_as[c] = it->second;
    }
    std::vector<double> err(unique.size(), 0.0);
    std::vector<bool> full(unique.size(), true);
    std::vector<size_t> finalists(unique.size());
    for (size_t u = 0; u < unique.size(); ++u) finalists[u] = u;
    if (unique.size() > kScreenAbove) {
      TrainOptions screen = o_.defaults;
      screen.max_epochs = std::max(1, screen.max_epochs / 4);
      screen.patience = std::max(1, screen.patience / 4);
      screen.decay_after = std::max(1, screen.decay_after / 4);
      for (size_t u = 0; u < unique.size(); ++u) {
        std::vector<TrainResult> nets;
        err[u] = try_candidate(candidates_[unique[u]], screen, &nets);
        full[u] = false;
      }
      std::stable_sort(finalists.begin(), finalists.end(),
                       [&](size_t a, size_t b) { return err[a] < err[b]; });
      finalists.resize(std::max<size_t>(kScreenAbove / 4, (unique.size() + 3) / 4));
      if (std::find(finalists.begin(), finalists.end(), 0) == finalists.end())
        finalists.push_back(0);  // the all-null candidate: the no-PC reference
      std::sort(finalists.begin(), finalists.end());
    }
    double best = INFINITY;
    size_t best_u = 0;
    for (size_t u : finalists) {
      std::vector<TrainResult> nets;
      err[u] = try_candidate(candidates_[unique[u]], o_.defaults, &nets);
      full[u] = true;
      if (err[u] < best) {
        best = err[u];
        best_u = u;
        default_nets_ = std::move(nets);
      }
    }
    for (size_t c = 0; c < candidates_.size(); ++c)
      m_.pc_search.push_back({candidates_[c], err[same_as[c]], full[same_as[c]]});
    m_.pc = candidates_[unique[best_u]];
    forms_.push_back({log_inputs, m_.pc, best, err[0]});
    for (int i : m_.pc.linear) m_.params[i].kind = ParamKind::kLinear;
    for (int i : m_.pc.inverse) m_.params[i].kind = ParamKind::kInverse;
    log(std::string(log_inputs ? "log" : "linear") +
        " parameters: " + std::to_string(unique.size()) + " distinct candidates, " +
        std::to_string(finalists.size()) + " trained in full; principal component " +
        candidate_text(m_.pc, m_.schema.params) + " (validation " + pct(best) + " with " +
        arch_name(o_.default_layers, o_.default_neurons) + "; no PC " + pct(err[0]) + ")");
    return best;
  }

  ScaledNet scaled(const Sets& s, TrainResult r, const TrainOptions& hyper) const {
    ScaledNet n;
    n.net = std::move(r.net);
    n.x_mean = s.x_mean;
    n.x_scale = s.x_scale;
    n.y_mean = s.y_mean;
    n.y_scale = s.y_scale;
    n.hyper = hyper;
    n.val_error = r.val_error;
    return n;
  }

  double test_error(const Group& g, const ScaledNet& n, bool with_pc) const {
    if (g.test.empty()) return -1;
    double sum = 0.0;
    for (size_t i : g.test) {
      double t = samples_[i].t;
      double p = std::exp(n.predict_log(m_.features(samples_[i].values, with_pc)));
      sum += std::fabs(p - t) / t;
    }
    return sum / static_cast<double>(g.test.size());
  }

  // Steps 4 and 5 for one mode group.
  void build_group(size_t gi) {
    const Group& g = groups_[gi];
    ModeGroup mg;
    mg.mode = g.mode;
    mg.train_rows = g.train.size();
    mg.val_rows = g.val.size();
    mg.test_rows = g.test.size();
    std::vector<int> fp = m_.feature_params();
    mg.lo.assign(fp.size(), INFINITY);
    mg.hi.assign(fp.size(), -INFINITY);
    for (size_t i : g.train)
      for (size_t k = 0; k < fp.size(); ++k) {
        mg.lo[k] = std::min(mg.lo[k], samples_[i].values[fp[k]].value);
        mg.hi[k] = std::max(mg.hi[k], samples_[i].values[fp[k]].value);
      }

    const Sets s = make_sets(g, &m_.pc);
    const int cols = s.train.cols;
    const size_t n = g.train.size();
    double budget =
        o_.budget_s * kNominalWorkRate * static_cast<double>(n) / static_cast<double>(total_train_);
    double search_left = 0.6 * budget;

    struct Run {
      int layers, neurons;
      TrainOptions hyper;
      TrainResult result;
    };
    std::vector<Run> runs;
    // The default architecture was trained in step 3 with these features already.
    runs.push_back(
        {o_.default_layers, o_.default_neurons, search_hyper(gi), std::move(default_nets_[gi])});
    mg.search.push_back(
        {o_.default_layers, o_.default_neurons, runs[0].result.val_error, runs[0].result.epochs});

    std::vector<std::pair<int, int>> archs;
    for (int l = o_.min_layers; l <= o_.max_layers; ++l)
      for (int k = o_.min_neurons; k <= o_.max_neurons; ++k)
        if (l != o_.default_layers || k != o_.default_neurons) archs.emplace_back(l, k);
    Rng rng(derive_seed(o_.seed, 77 + gi));
    rng.shuffle(archs);
    const double cheapest =
        epoch_work(cols, o_.min_layers, o_.min_neurons, n) * o_.defaults.max_epochs;
    for (const auto& [l, k] : archs) {
      if (search_left < cheapest) break;
      double cost = epoch_work(cols, l, k, n) * o_.defaults.max_epochs;
      if (cost > search_left) continue;
      TrainOptions h = search_hyper(gi);
      TrainResult r = fit(s, l, k, h);
      search_left -= r.work;
      mg.search.push_back({l, k, r.val_error, r.epochs});
      runs.push_back({l, k, h, std::move(r)});
    }
    double left = search_left + 0.4 * budget;

    // Fine-tuning of the top_k architectures.
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return runs[a].result.val_error < runs[b].result.val_error;
    });
    order.resize(std::min<size_t>(order.size(), o_.top_k));
    std::vector<std::pair<int, int>> top;
    for (size_t i : order) top.emplace_back(runs[i].layers, runs[i].neurons);
    size_t best = order[0];
    std::vector<Run> tuned;
    for (size_t v = 0; v < o_.fine_tune.size(); ++v)
      for (const auto& [l, k] : top) {
        TrainOptions h = o_.fine_tune[v];
        h.seed = derive_seed(o_.seed, 2000 + 64 * gi + h.seed);
        double cost = epoch_work(cols, l, k, n) * h.max_epochs;
        if (cost > left) continue;
        TrainResult r = fit(s, l, k, h);
        left -= r.work;
        tuned.push_back({l, k, h, std::move(r)});
      }
    const Run* winner = &runs[best];
    for (const auto& r : tuned)
      if (r.result.val_error < winner->result.val_error) winner = &r;

    mg.model = scaled(s, winner->result, winner->hyper);
    mg.model.test_error = test_error(g, mg.model, true);
    const Sets s0 = make_sets(g, nullptr);
    mg.no_pc = scaled(s0, fit(s0, winner->layers, winner->neurons, winner->hyper), winner->hyper);
    mg.no_pc.test_error = test_error(g, mg.no_pc, false);
    log("mode " + (g.mode.empty() ? std::string("-") : m_.mode_text(g.mode)) + ": " +
        std::to_string(runs.size()) + " architectures searched, " + std::to_string(tuned.size()) +
        " fine-tuning runs; " + arch_name(winner->layers, winner->neurons) + " validation " +
        pct(mg.model.val_error) + ", held-out " + pct(mg.model.test_error) + " (no PC " +
        pct(mg.no_pc.test_error) + ")");
    m_.groups.push_back(std::move(mg));
  }

  const std::vector<ProfileRow>& rows_;
  const TrainerOptions& o_;
  OpModel m_;
  std::vector<Sample> samples_;
  std::vector<Split> split_;
  std::vector<std::vector<ParamKind>> allowed_;
  std::vector<Candidate> candidates_;
  std::vector<Group> groups_;
  std::vector<TrainResult> default_nets_;  // per group: the default network of the best PC
  std::vector<InputFormTrial> forms_;
  int restarts_ = 0;
  size_t total_train_ = 0;
};

}  // namespace

std::vector<TrainOptions> TrainerOptions::default_fine_tune() {
  auto v = [](double lr, int batch, uint64_t seed) {
    TrainOptions t;
    t.lr = lr;
    t.batch = batch;
    t.seed = seed;
    t.max_epochs = 800;
    t.patience = 120;
    t.decay_after = 40;
    return t;
  };
  return {v(3e-3, 32, 1), v(1e-3, 32, 2), v(3e-3, 16, 3),
          v(1e-2, 64, 4), v(1e-3, 16, 5), v(3e-3, 64, 6)};
}

OpModel train_op_model(const std::vector<ProfileRow>& rows, const TrainerOptions& options) {
  return OpTrainer(rows, options).run();
}

LearnedModel train_learned_model(const ProfileDb& db, const std::vector<std::string>& ops,
                                 const TrainerOptions& options) {
  std::map<std::pair<std::string, std::string>, std::vector<ProfileRow>> by_key;
  for (const auto& r : db.rows())
    if (ops.empty() || std::find(ops.begin(), ops.end(), r.op) != ops.end())
      by_key[{r.op, r.device}].push_back(r);
  LearnedModel m;
  m.seed = options.seed;
  m.budget_s = options.budget_s;
  m.test_fraction = options.test_fraction;
  m.val_fraction = options.val_fraction;
  for (const auto& [key, rows] : by_key) {
    // An op with too few rows (a handful measured for the database) is left to the analytic
    // model rather than failing the whole file.
    try {
      m.ops.push_back(train_op_model(rows, options));
    } catch (const InputError& e) {
      if (options.log) options.log(key.first + " on " + key.second + ": skipped: " + e.what());
    }
  }
  return m;
}

}  // namespace orrery
