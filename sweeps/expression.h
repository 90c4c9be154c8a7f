// Derived sweep keys: "${platform.servers} * 8", "${gpu}-${platform.servers}x". References are
// replaced by the referenced value's text; if the result is arithmetic (numbers, optionally
// with units, + - * / parentheses, min/max/ceil/floor) it is evaluated, otherwise it is kept
// as text.
#pragma once

#include <functional>
#include <string>

namespace orrery {

// Returns the text of a referenced name, or false when it has no value.
using Resolver = std::function<bool(const std::string& name, std::string* text)>;

// Expands `${name}` references in `tmpl`. A template that is exactly one reference yields the
// referenced text unchanged (so "${a}" keeps "25Gbps" as written). Throws InputError
// "<where>: ..." for an unterminated reference, an unknown name, or an arithmetic expression
// that cannot be evaluated (division by zero). `evaluated_arithmetic`, when given, tells whether
// the result is a number computed by arithmetic (in base units: bytes/s, bytes, s, flop/s).
std::string evaluate_template(const std::string& tmpl, const Resolver& resolve,
                              const std::string& where, bool* evaluated_arithmetic = nullptr);

// Deepest nesting of parentheses, function calls and unary signs an expression may have.
inline constexpr int kMaxExpressionDepth = 100;

// Evaluates an arithmetic expression. A number may carry a unit of bandwidth, size, time or
// compute rate (common/units.h) and then counts in base units (bytes/s, bytes, s, flop/s).
// Returns false when `text` is not such an expression; throws InputError when it nests deeper
// than kMaxExpressionDepth.
bool evaluate_arithmetic(const std::string& text, double* value);

// Shortest text that reads back as exactly `v`; integers without a decimal point.
std::string format_number(double v);

}  // namespace orrery
