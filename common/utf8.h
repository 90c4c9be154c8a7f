// UTF-8 validation for text users give (scenarios, names): names end up in result files, whose
// readers (h5py, pandas) decode them as UTF-8 and fail on anything else.
#pragma once

#include <cstddef>
#include <string>

namespace orrery {

// The byte offset of the first byte that does not start or continue a valid UTF-8 sequence
// (overlong forms, surrogates and code points past U+10FFFF are invalid, as the standard
// says), or std::string::npos when all of `s` is valid.
size_t invalid_utf8_at(const std::string& s);

}  // namespace orrery
