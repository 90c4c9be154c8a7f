#include "sweeps/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/errors.h"
#include "common/units.h"

namespace orrery {
namespace {

// Recursive descent over: expr = term {(+|-) term}; term = unary {(*|/) unary};
// unary = -unary | primary; primary = number[unit] | (expr) | fn(expr{, expr}).
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  bool parse(double* out) {
    if (!expr(out)) return false;
    skip();
    return pos_ == s_.size() && operators_ > 0 && std::isfinite(*out);
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool expr(double* v) {
    if (!term(v)) return false;
    for (;;) {
      if (eat('+')) {
        double r;
        if (!term(&r)) return false;
        *v += r;
      } else if (eat('-')) {
        double r;
        if (!term(&r)) return false;
        *v -= r;
      } else {
        return true;
      }
      ++operators_;
    }
  }
  bool term(double* v) {
    if (!unary(v)) return false;
    for (;;) {
      if (eat('*')) {
        double r;
        if (!unary(&r)) return false;
        *v *= r;
      } else if (eat('/')) {
        double r;
        if (!unary(&r)) return false;
        *v /= r;
      } else {
        return true;
      }
      ++operators_;
    }
  }
  bool unary(double* v) {
    if (eat('-')) {
      Nest nest(this);
      if (too_deep_ || !unary(v)) return false;
      *v = -*v;
      return true;
    }
    return primary(v);
  }
  bool primary(double* v) {
    skip();
    if (eat('(')) {
      Nest nest(this);
      return !too_deep_ && expr(v) && eat(')');
    }
    if (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) return call(v);
    return number(v);
  }
  bool call(double* v) {
    size_t start = pos_;
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    std::string fn = s_.substr(start, pos_ - start);
    if (fn != "min" && fn != "max" && fn != "ceil" && fn != "floor") return false;
    if (!eat('(')) return false;
    Nest nest(this);
    if (too_deep_) return false;
    std::vector<double> args(1);
    if (!expr(&args[0])) return false;
    while (eat(',')) {
      args.emplace_back();
      if (!expr(&args.back())) return false;
    }
    if (!eat(')')) return false;
    ++operators_;
    if (fn == "ceil" || fn == "floor") {
      if (args.size() != 1) return false;
      *v = fn == "ceil" ? std::ceil(args[0]) : std::floor(args[0]);
      return true;
    }
    *v = args[0];
    for (double a : args) *v = fn == "min" ? std::min(*v, a) : std::max(*v, a);
    return true;
  }
  bool number(double* v) {
    skip();
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    double x = std::strtod(begin, &end);
    if (end == begin || *begin == '+' || *begin == '-') return false;
    pos_ += static_cast<size_t>(end - begin);
    // A unit: letters, optionally "/letters" ("GB/s"); "10/2" stays a division.
    size_t u = pos_;
    while (u < s_.size() && std::isalpha(static_cast<unsigned char>(s_[u]))) ++u;
    if (u > pos_ && u + 1 < s_.size() && s_[u] == '/' &&
        std::isalpha(static_cast<unsigned char>(s_[u + 1]))) {
      ++u;
      while (u < s_.size() && std::isalpha(static_cast<unsigned char>(s_[u]))) ++u;
    }
    if (u == pos_) {
      *v = x;
      return true;
    }
    std::string text =
        std::string(begin, static_cast<size_t>(end - begin)) + s_.substr(pos_, u - pos_);
    pos_ = u;
    return parse_bandwidth(text, v) || parse_size(text, v) || parse_time(text, v) ||
           parse_flops(text, v);
  }

  // Counts nesting (parentheses, calls, signs) so that "((((..." thousands deep fails with an
  // error instead of overflowing the stack: the parser recurses once per level.
  struct Nest {
    explicit Nest(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxExpressionDepth) p_->too_deep_ = true;
    }
    ~Nest() { --p_->depth_; }
    Parser* p_;
  };

  const std::string& s_;
  size_t pos_ = 0;
  int operators_ = 0;
  int depth_ = 0;
  bool too_deep_ = false;

 public:
  bool too_deep() const { return too_deep_; }
};

}  // namespace

bool evaluate_arithmetic(const std::string& text, double* value) {
  double v = 0;
  Parser parser(text);
  bool ok = parser.parse(&v);
  if (parser.too_deep())
    throw InputError("the expression nests parentheses, calls or signs more than " +
                     std::to_string(kMaxExpressionDepth) + " levels deep");
  if (!ok) return false;
  *value = v;
  return true;
}

std::string format_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
  }
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string evaluate_template(const std::string& tmpl, const Resolver& resolve,
                              const std::string& where, bool* evaluated_arithmetic) {
  if (evaluated_arithmetic) *evaluated_arithmetic = false;
  std::string out;
  int references = 0;
  bool only_reference = false;
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl.compare(i, 2, "${") != 0) {
      out += tmpl[i++];
      continue;
    }
    size_t close = tmpl.find('}', i + 2);
    if (close == std::string::npos)
      throw InputError(where + ": \"" + tmpl + "\": \"${\" without a closing \"}\"");
    std::string name = tmpl.substr(i + 2, close - i - 2);
    std::string text;
    if (name.empty() || !resolve(name, &text))
      throw InputError(where + ": \"" + tmpl + "\": ${" + name +
                       "} has no value (name a key the scenario or the sweep sets, or a named "
                       "axis)");
    only_reference = i == 0 && close + 1 == tmpl.size();
    out += text;
    ++references;
    i = close + 1;
  }
  if (only_reference) return out;
  double v;
  bool evaluated;
  try {
    evaluated = evaluate_arithmetic(out, &v);
  } catch (const InputError& e) {
    throw InputError(where + ": \"" + (tmpl.size() > 60 ? tmpl.substr(0, 60) + "..." : tmpl) +
                     "\": " + e.what());
  }
  if (evaluated) {
    if (evaluated_arithmetic) *evaluated_arithmetic = true;
    return format_number(v);
  }
  // Division by zero and the like: arithmetic that went wrong must not pass as text.
  bool arithmetic_chars = !out.empty();
  for (char c : out)
    if (!(std::isdigit(static_cast<unsigned char>(c)) ||
          std::isspace(static_cast<unsigned char>(c)) ||
          std::string("+-*/().e").find(c) != std::string::npos))
      arithmetic_chars = false;
  if (references > 0 && arithmetic_chars)
    throw InputError(where + ": \"" + tmpl + "\" = \"" + out + "\" does not evaluate to a number");
  return out;
}

}  // namespace orrery
