// Quantities with units, as users write them in YAML: "25Gbps", "10 GB/s", "5us", "25MiB".
// Internally Orrery uses SI base units: seconds, bytes, bytes/s, flop/s.
#pragma once

#include <string>

namespace orrery {

// Each parser accepts a plain number (already in the base unit) or a number with a unit suffix,
// and returns false on anything else (the caller reports the key and file).
// Bandwidth: bps Kbps Mbps Gbps Tbps (bits/s) and Bps KBps MBps GBps TBps, "GB/s", "MB/s"
// (bytes/s).
bool parse_bandwidth(const std::string& text, double* bytes_per_s);
// Time: s ms us ns (also "µs").
bool parse_time(const std::string& text, double* seconds);  // s, ms, us, ns, min, h, d
bool parse_power(const std::string& text, double* watts);   // W, kW, MW
// Size: B KB MB GB TB (powers of 1000) and KiB MiB GiB TiB (powers of 1024).
bool parse_size(const std::string& text, double* bytes);
// Rate of compute: flops Kflops Mflops Gflops Tflops Pflops, also "TFLOP/s", "TF".
bool parse_flops(const std::string& text, double* flop_per_s);
// Frequency: Hz kHz MHz GHz (a GPU's clock, "1410MHz").
bool parse_frequency(const std::string& text, double* hertz);

// Human-readable forms for tables: "25 Gb/s"-style is avoided; we print bytes-based units.
std::string format_bandwidth(double bytes_per_s);  // "3.125 GB/s"
std::string format_time(double seconds);           // "12.3 ms"
std::string format_size(double bytes);             // "25.0 MiB"
std::string format_grouped(double v);              // 1234567.4 -> "1,234,567"
// Every digit a double needs to read back as itself ("%.17g"), for files other programs read.
std::string format_exact(double v);

}  // namespace orrery
