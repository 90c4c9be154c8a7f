#include "common/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/errors.h"

namespace orrery {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL could not compute a SHA-256 digest");
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return sha256_hex(ss.str());
}

}  // namespace orrery
