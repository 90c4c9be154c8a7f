#include "common/csv.h"

namespace orrery {

bool split_csv_line(const std::string& line, std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields->push_back(cur);
      cur.clear();
      was_quoted = false;
    } else {
      cur += c;
    }
  }
  if (quoted) return false;
  fields->push_back(cur);
  return true;
}

std::string csv_quote(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace orrery
