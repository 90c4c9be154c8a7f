// Power of a training job, from what its GPUs do in a step: each GPU draws its idle power plus,
// for the share of the step it computes, the rest up to its board power (TDP) when the kernels
// are compute-bound and stated fractions of it when they are memory-bound or only communicate.
// The server around the GPUs (CPUs, memory, fans, NICs) draws a share of the server's power
// taken from measurement, the network a per-port figure of its parts, the facility a PUE on
// top. Energy and cost follow from the campaign's time.
#pragma once

namespace orrery {

// Where an average GPU's step goes, as fractions of the step (the rest is idle).
struct StepActivity {
  double compute_bound = 0;
  double memory_bound = 0;
  double communication = 0;  // communication with no kernel running beside it
};

struct PowerSpec {
  double gpu_tdp_w = 0;
  // An idle GPU of a running job (memory held, clocks up) as a fraction of its TDP: an
  // assumption between the measurements docs/campaigns.md lists (11% to 37%).
  double gpu_idle_fraction = 0.2;
  // Of the way from idle to TDP, what memory-bound kernels and communication alone draw:
  // assumptions (docs/campaigns.md), to override.
  double memory_bound_draw = 0.6;
  double communication_draw = 0.35;
  // The server's share outside its GPUs, with the GPUs at TDP: "GPUs consume ~70% of the power of
  // the entire server when training" (Zeus, You, Chung, Chowdhury, NSDI 2023; ML.ENERGY).
  double other_share = 0.3;
  int gpus = 0;
  int gpus_per_node = 8;
  int nodes = 0;
  double nic_ports = 0;  // network ports of the job's servers
  int fabric_tiers = 1;  // switch levels a port's traffic climbs (1: one switch; 2: leaf, spine)
  // Per link end: a 400 Gb/s OSFP transceiver, 9 W (NVIDIA MMS4X00-NS400 specification); per
  // switch port, half of a twin-port cage's class-8 budget, 8.5 W (NVIDIA QM97XX user manual).
  double transceiver_w = 9;
  double switch_port_w = 8.5;
  double pue = 1.1;  // Google's fleet in 2023 (1.10); the Uptime Institute's industry mean 1.58
  double cap_w = 0;  // per-GPU power limit; 0: none
};

struct PowerFigures {
  double gpu_train_w = 0;       // an average GPU while training
  double gpu_idle_w = 0;        // while checkpoints and restarts pause it
  double server_other_w = 0;    // one server outside its GPUs
  double network_w = 0;         // the job's network
  double it_train_w = 0;        // the job's IT power while training (GPUs, servers, network)
  double it_paused_w = 0;       // while paused
  double facility_train_w = 0;  // with the PUE
  double facility_paused_w = 0;
};

PowerFigures power_figures(const PowerSpec& spec, const StepActivity& step);

// The clock, as a fraction of its unlimited value, at which a GPU that draws `train_w` without
// a limit stays within `cap_w`: dynamic power grows with frequency times voltage squared and
// voltage with frequency, so the draw above idle scales with the cube of the clock (the
// first-order CMOS rule; the board lowers clocks to hold a power limit, NVML's
// "SwPowerCap"). 1 when the draw is under the cap.
double capped_clock(double train_w, double idle_w, double cap_w);

}  // namespace orrery
