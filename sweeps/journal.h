// The sweep journal: an append-only file of point outcomes next to the HDF5 output
// ("OUT.h5.journal"). Each record is written as soon as its point finishes, so a sweep that is
// killed loses no finished point; the HDF5 file is rebuilt from it on resume.
//
// Format: the line "ORRERY-SWEEP-JOURNAL 1\n", then records of
//   u32 magic "OSJR" | u32 payload length | u64 FNV-1a of the payload | payload
// (little-endian; the payload is serialize_outcome()). A record cut short by a crash, or one
// whose checksum does not match, ends the journal: it and anything after it are dropped.
#pragma once

#include <string>
#include <vector>

#include "sweeps/point_outcome.h"

namespace orrery {

class Journal {
 public:
  // Opens (creating when absent) and reads every intact record into `loaded`; a torn tail is
  // cut off so appends follow the last intact record. Throws InputError when `path` exists
  // but is not a journal, std::runtime_error on I/O failures.
  Journal(const std::string& path, std::vector<PointOutcome>* loaded);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Written with write(2) at once: survives the process being killed. Throws on I/O errors.
  void append(const PointOutcome& o);
  // fdatasync: survives the machine going down. Cheap when nothing was appended since.
  void sync();
  const std::string& path() const { return path_; }
  // Number of records dropped on open (torn tail or unreadable).
  int dropped() const { return dropped_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool dirty_ = false;
  int dropped_ = 0;
};

std::string journal_path_for(const std::string& output_h5);

}  // namespace orrery
