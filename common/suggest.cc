#include "common/suggest.h"

#include <algorithm>
#include <cctype>

namespace orrery {
namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance with adjacent transpositions counted as one edit ("nmae" -> "name").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::string did_you_mean(const std::string& given, const std::vector<std::string>& known) {
  // Long inputs are not names anyone mistyped; skip the quadratic distance.
  if (given.empty() || given.size() > 200) return "";
  const std::string g = lower(given);
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, given.size() / 3));
  const std::string* best = nullptr;
  std::size_t best_d = limit + 1;
  for (const auto& k : known) {
    if (k == given) continue;
    std::size_t d = lower(k) == g ? 0 : edit_distance(g, lower(k));
    if (d < best_d) {
      best_d = d;
      best = &k;
    }
  }
  return best ? " (did you mean \"" + *best + "\"?)" : "";
}

std::string join_names(const std::vector<std::string>& known) {
  std::string out;
  for (const auto& k : known) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace orrery
