// Interruptions of a training job by cause, from a published fleet study. Each cause fails at a
// rate per unit and hour, the unit being what the cause grows with: a GPU, a server, a NIC, or
// the job itself. The rates are data (campaigns/reliability/*.yaml, each file naming its study
// and, where the study gives counts, the counts and the unit-hours they were seen over), so a
// user can add a fleet of their own.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace orrery {

struct FailureCause {
  std::string id;    // "gpu", "hbm", "software", ...: a short name for figures
  std::string name;  // as the study names it ("Faulty GPU")
  std::string unit;  // gpu | node | nic | job
  double per_unit_hour = 0;
  // A hardware cause takes a server out: the job restarts on a healthy spare (or waits for one).
  bool hardware = false;
};

struct ReliabilityModel {
  std::string name;
  std::string source;  // the study, as users read it
  std::vector<FailureCause> causes;
};

// Reads a model: `name`, `source`, optional `exposure` ({gpu: unit-hours, node: ...}: what the
// study's counts were seen over) and `causes`, each {id, name, unit, hardware, and count (with
// an exposure for its unit) or per_unit_hour}. InputError naming the origin and key.
ReliabilityModel read_reliability_model(const YAML::Node& root, const std::string& origin);

// The models Orrery ships, by name; InputError listing them for an unknown name.
ReliabilityModel shipped_reliability_model(const std::string& name);
std::vector<std::string> shipped_reliability_names();

// What a job runs on, counted the way the units are.
struct JobParts {
  double gpus = 0;
  double nodes = 0;
  double nics = 0;
};

struct CauseRate {
  std::string id;
  std::string name;
  bool hardware = false;
  double per_hour = 0;  // interruptions of the whole job per hour of running
};

// Each cause's rate for this job: its per-unit rate times the job's units (a `job` cause once).
std::vector<CauseRate> job_failure_rates(const ReliabilityModel& model, const JobParts& parts);

}  // namespace orrery
