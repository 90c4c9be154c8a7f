// SHA-256 of a file's bytes, through OpenSSL's libcrypto: the learned model records the profile
// files it was trained on by hash, so `sha256sum db.csv` tells whether a database is the one a
// model came from.
#pragma once

#include <string>

namespace orrery {

// Lower-case hex digest of `bytes`.
std::string sha256_hex(const std::string& bytes);
// Digest of a file's contents; InputError naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace orrery
