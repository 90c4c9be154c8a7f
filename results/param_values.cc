#include "results/param_values.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/units.h"

namespace orrery {

bool parse_param_value(const std::string& text, double* value, std::string* unit) {
  // strtod also reads "inf", "nan" and hex ("0x1p3"); a parameter that looks like a name is not
  // a number, so only decimal numbers are taken.
  size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
  if (first == text.size()) return false;
  const char c = text[first];
  if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != '+' && c != '.') {
    return false;
  }
  if (text.find_first_of("xX") != std::string::npos) return false;
  const char* s = text.c_str() + first;
  char* end = nullptr;
  const double plain = std::strtod(s, &end);
  if (end != s) {
    while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (*end == '\0') {
      if (!std::isfinite(plain)) return false;
      *value = plain;
      *unit = "1";
      return true;
    }
  }
  struct Kind {
    bool (*parse)(const std::string&, double*);
    const char* unit;
  };
  static const Kind kinds[] = {
      {parse_time, "s"}, {parse_size, "B"}, {parse_bandwidth, "B/s"}, {parse_flops, "FLOP/s"}};
  for (const Kind& k : kinds) {
    double v = 0;
    if (k.parse(text, &v) && std::isfinite(v)) {
      *value = v;
      *unit = k.unit;
      return true;
    }
  }
  return false;
}

}  // namespace orrery
