// CSV fields as spreadsheets and pandas write them: comma-separated, a field may be
// double-quoted, and "" inside quotes is one quote.
#pragma once

#include <string>
#include <vector>

namespace orrery {

// Splits one line (without its newline) into `fields`; false when a quote is left open.
bool split_csv_line(const std::string& line, std::vector<std::string>* fields);

// `field` as one CSV field: quoted when it holds a comma, a quote or a newline.
std::string csv_quote(const std::string& field);

}  // namespace orrery
