// Error types shared by every module. Exit-status mapping lives in the CLI:
// InputError -> 2 (the user's file or flag is wrong), anything else -> 1.
#pragma once

#include <stdexcept>
#include <string>

namespace orrery {

// Bad user input: a malformed file, an unknown name, an impossible value.
// The message must name the file (or flag), the line or item, and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Well-formed input that asks for what the hardware cannot do: a parallel plan whose degrees
// do not divide the model or the GPUs, or that does not fit the GPUs' memory. A single run
// treats it as bad input (exit 2); a sweep or a plan records the point as infeasible, not
// failed.
class InfeasibleError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace orrery
