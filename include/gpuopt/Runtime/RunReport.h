//===- RunReport.h - The results of a run as JSON ---------------*- C++ -*-===//
//
// What a run measured, as structs and as the JSON report gpu-run --json
// writes (gpu-run --help, "JSON report"): the device, each kernel's launch,
// resources, probe maps and times, the comparison, and each group's times.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_RUNREPORT_H
#define GPUOPT_RUNTIME_RUNREPORT_H

#include "gpuopt/Runtime/CompareRun.h"
#include "gpuopt/Runtime/OccupancySweep.h"
#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/Session.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuopt::runtime {

struct KernelReport {
  std::string Label, Kernel, Module;
  LaunchConfig Config;
  int Registers = 0, StaticSmem = 0, LocalBytes = 0;
  /// The kernel has probe maps (then Probes has one result per map).
  bool Probed = false;
  std::vector<ProbeResult> Probes;
  /// Where its trace was written, or empty.
  std::string TraceDir;
  /// Timed alone.
  std::optional<Stats> Time;
  std::optional<OccupancySweep> Occupancy;

  /// What kernel K, loaded as Fn, is: its label, names, launch
  /// configuration, resources and trace directory (probes and times are
  /// filled in by the run).
  static KernelReport of(const KernelSpec &K, const Function &Fn);
};

/// "serial", "concurrent", "graph", "alone" or "also".
const char *toString(GroupTiming::Mode M);

struct GroupReport {
  std::string Name;
  /// The members' labels.
  std::vector<std::string> Kernels;
  /// The group has the "alone" mode.
  bool Alone = false;
  struct Entry {
    GroupTiming::Mode Mode = GroupTiming::Mode::Serial;
    /// For Alone and Also entries: the kernel's label.
    std::string Label;
    Stats Time;
  };
  std::vector<Entry> Entries;

  /// A session's timing of group G of Spec.
  static GroupReport of(const RunSpec &Spec, const GroupSpec &G,
                        const GroupTiming &Timing);
};

struct RunReport {
  DeviceInfo Device;
  unsigned Warmup = 0, Repeat = 0;
  std::vector<KernelReport> Kernels;
  std::optional<RunComparison> Compare;
  /// Whether timing ran (Repeat > 0): the report then has "groups".
  bool Timed = false;
  std::vector<GroupReport> Groups;
};

/// The report as JSON indented by 2, ending in a newline.
std::string writeRunReport(const RunReport &R);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_RUNREPORT_H
