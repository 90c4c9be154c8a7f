#include "common/named_set.h"

#include <cctype>

namespace orrery {

std::string name_key(std::string s) {
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == ' ' || c == '_') c = '-';
  }
  return s;
}

}  // namespace orrery
