// Files of the profile database (format in docs/cost-models.md, "Profile database"):
//  - CSV, for contributions: '#' comment lines (provenance), one header line naming columns,
//    one row per measured op. Required columns: op, dtype, device, inputs, output, attrs,
//    time_s; optional: n, m, t_n_s, t_m_s, samples, stdev_s, source. Unknown columns are errors.
//  - HDF5, the compiled store: root attributes format = "orrery-profile", format_version = 1,
//    provenance; one compound dataset /rows with the CSV's columns.
#pragma once

#include <string>
#include <vector>

#include "models/profile_db.h"

namespace orrery {

inline constexpr int kProfileFormatVersion = 1;

// Read errors are InputErrors naming the file, the line (CSV) and the column.
ProfileDb read_profile_csv(const std::string& path);
ProfileDb parse_profile_csv(const std::string& text, const std::string& origin);
// Comment lines (without the leading "# ") are written before the header.
void write_profile_csv(const std::string& path, const ProfileDb& db,
                       const std::vector<std::string>& comments = {});

ProfileDb read_profile_h5(const std::string& path);
// Written atomically; `provenance` (one text, e.g. the import command and its input files) is
// stored as a root attribute.
void write_profile_h5(const std::string& path, const ProfileDb& db, const std::string& provenance);
std::string read_profile_h5_provenance(const std::string& path);

// Reads a CSV or HDF5 profile file, telling them apart by the HDF5 signature.
ProfileDb load_profile_db(const std::string& path);

}  // namespace orrery
