// What an existing output path holds, so that writing a result never destroys a file that is not
// one of Orrery's, and never replaces another configuration's result without saying so.
#pragma once

#include <string>

namespace orrery {

enum class OutputKind {
  kAbsent,        // nothing at the path
  kOrreryResult,  // an HDF5 file Orrery wrote (it carries the root attribute orrery_version)
  kOrreryTrace,   // a Chrome trace JSON Orrery wrote
  kOther,         // anything else: another program's file, a directory, a device, unreadable
};

struct ExistingOutput {
  OutputKind kind = OutputKind::kAbsent;
  std::string scenario_text;  // kOrreryResult: its stored scenario text ("" if unreadable)
  std::string what;           // kOther: what it is, for messages ("a directory", "not HDF5")
};

// Looks at `path` without changing it. Never throws: an unreadable or corrupt file is kOther.
ExistingOutput inspect_output(const std::string& path);

// Whether `path` is a readable HDF5 file whose root has attribute `attr` (how Orrery's other
// HDF5 files say what they are: a collective benchmark's "collective", a profile store's
// "format"). Looked at in a child first, as a corrupt file can crash libhdf5. Never throws.
bool hdf5_with_attribute(const std::string& path, const char* attr);

}  // namespace orrery
