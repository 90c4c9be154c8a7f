#include "results/h5_rows.h"

#include <cstddef>

namespace orrery::h5 {

Compound run_row_type(hid_t str, bool with_analytical) {
  Compound c(sizeof(RunRow));
  c.add("name", offsetof(RunRow, name), str)
      .add("iteration_time_s", offsetof(RunRow, iteration_time_s), H5T_NATIVE_DOUBLE)
      .add("compute_s", offsetof(RunRow, compute_s), H5T_NATIVE_DOUBLE)
      .add("comm_s", offsetof(RunRow, comm_s), H5T_NATIVE_DOUBLE)
      .add("io_s", offsetof(RunRow, io_s), H5T_NATIVE_DOUBLE)
      .add("host_s", offsetof(RunRow, host_s), H5T_NATIVE_DOUBLE)
      .add("idle_s", offsetof(RunRow, idle_s), H5T_NATIVE_DOUBLE)
      .add("exposed_comm_s", offsetof(RunRow, exposed_comm_s), H5T_NATIVE_DOUBLE)
      .add("memory_bound_s", offsetof(RunRow, memory_bound_s), H5T_NATIVE_DOUBLE)
      .add("activities", offsetof(RunRow, activities), H5T_NATIVE_INT64)
      .add("wall_s", offsetof(RunRow, wall_s), H5T_NATIVE_DOUBLE);
  if (with_analytical) c.add("analytical_s", offsetof(RunRow, analytical_s), H5T_NATIVE_DOUBLE);
  return c;
}

Compound device_row_type(hid_t str) {
  Compound c(sizeof(DeviceRow));
  c.add("name", offsetof(DeviceRow, name), str)
      .add("busy_compute", offsetof(DeviceRow, busy_compute), H5T_NATIVE_DOUBLE)
      .add("busy_comm", offsetof(DeviceRow, busy_comm), H5T_NATIVE_DOUBLE)
      .add("busy_copy_h2d", offsetof(DeviceRow, busy_copy_h2d), H5T_NATIVE_DOUBLE)
      .add("busy_copy_d2h", offsetof(DeviceRow, busy_copy_d2h), H5T_NATIVE_DOUBLE)
      .add("busy_host", offsetof(DeviceRow, busy_host), H5T_NATIVE_DOUBLE)
      .add("idle", offsetof(DeviceRow, idle), H5T_NATIVE_DOUBLE)
      .add("exposed_comm", offsetof(DeviceRow, exposed_comm), H5T_NATIVE_DOUBLE)
      .add("memory_bound", offsetof(DeviceRow, memory_bound), H5T_NATIVE_DOUBLE)
      .add("ops", offsetof(DeviceRow, ops), H5T_NATIVE_INT64);
  return c;
}

Compound link_row_type(hid_t str) {
  Compound c(sizeof(LinkRow));
  c.add("name", offsetof(LinkRow, name), str)
      .add("bandwidth", offsetof(LinkRow, bandwidth), H5T_NATIVE_DOUBLE)
      .add("latency", offsetof(LinkRow, latency), H5T_NATIVE_DOUBLE)
      .add("bytes", offsetof(LinkRow, bytes), H5T_NATIVE_DOUBLE)
      .add("link_class", offsetof(LinkRow, link_class), str);
  return c;
}

Compound timeline_row_type(hid_t str) {
  Compound c(sizeof(TimelineRowH5));
  c.add("op", offsetof(TimelineRowH5, op), str)
      .add("device", offsetof(TimelineRowH5, device), str)
      .add("stream", offsetof(TimelineRowH5, stream), str)
      .add("phase", offsetof(TimelineRowH5, phase), str)
      .add("start", offsetof(TimelineRowH5, start), H5T_NATIVE_DOUBLE)
      .add("end", offsetof(TimelineRowH5, end), H5T_NATIVE_DOUBLE);
  return c;
}

Compound job_row_type(hid_t str, bool with_best) {
  Compound c(sizeof(JobRow));
  c.add("name", offsetof(JobRow, name), str)
      .add("placement", offsetof(JobRow, placement), str)
      .add("gpus", offsetof(JobRow, gpus), H5T_NATIVE_INT64)
      .add("iterations", offsetof(JobRow, iterations), H5T_NATIVE_INT64)
      .add("mean_s", offsetof(JobRow, mean_s), H5T_NATIVE_DOUBLE)
      .add("min_s", offsetof(JobRow, min_s), H5T_NATIVE_DOUBLE)
      .add("max_s", offsetof(JobRow, max_s), H5T_NATIVE_DOUBLE)
      .add("stdev_s", offsetof(JobRow, stdev_s), H5T_NATIVE_DOUBLE)
      .add("alone_mean_s", offsetof(JobRow, alone_mean_s), H5T_NATIVE_DOUBLE)
      .add("slowdown", offsetof(JobRow, slowdown), H5T_NATIVE_DOUBLE)
      .add("end_s", offsetof(JobRow, end_s), H5T_NATIVE_DOUBLE);
  if (with_best)
    c.add("best_mean_s", offsetof(JobRow, best_mean_s), H5T_NATIVE_DOUBLE)
        .add("placement_cost", offsetof(JobRow, placement_cost), H5T_NATIVE_DOUBLE);
  return c;
}

Compound job_iteration_row_type(hid_t str) {
  Compound c(sizeof(JobIterationRow));
  c.add("job", offsetof(JobIterationRow, job), str)
      .add("iteration", offsetof(JobIterationRow, iteration), H5T_NATIVE_INT64)
      .add("time_s", offsetof(JobIterationRow, time_s), H5T_NATIVE_DOUBLE);
  return c;
}

}  // namespace orrery::h5
