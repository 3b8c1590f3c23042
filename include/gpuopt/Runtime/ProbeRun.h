//===- ProbeRun.h - Probe buffers and traces of a run -----------*- C++ -*-===//
//
// A probed kernel (its manifest lists "probes") has a parameter per probe
// map that receives a record buffer. The launcher sizes each buffer (a map
// of dynamic capacity by a counting launch), allocates, zeroes and binds
// it, reads the overflow counters back after the checked launch and writes
// the records as NumPy files with a trace.json (gpu-run --help, "Probe
// buffers", "Counting run" and --trace).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_PROBERUN_H
#define GPUOPT_RUNTIME_PROBERUN_H

#include "gpuopt/Runtime/RunSpec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuopt::runtime {

class Session;

/// The probe map whose buffer parameter Index receives, if any.
const ProbeBuffer *probeOfParam(const KernelInfo &K, size_t Index);
/// The probe map of dynamic capacity whose capacity parameter Index
/// receives, if any.
const ProbeBuffer *capacityOfParam(const KernelInfo &K, size_t Index);
bool hasDynamicProbes(const KernelInfo &K);

/// Fails unless Dir is absent or an empty directory: a trace never
/// overwrites anything.
Status checkTraceDir(const std::string &Dir);
/// Checks a kernel's trace before the GPU is touched: the kernel has probe
/// maps, each can be written as a .npy file (setting K.ProbeDescrs), and
/// the directory is new or empty.
Status checkKernelTrace(KernelSpec &K);

/// What the counting run chose for one map of dynamic capacity.
struct CountedMap {
  std::string Name;
  /// The most records any slot tried to save: the map's capacity now.
  uint64_t Capacity = 0;
  /// The buffer's bytes at that capacity.
  uint64_t TotalBytes = 0;
};

/// Sizes the dynamic probe maps of kernel Index of S, setting their
/// Capacity, from one launch of a second instance of its module on device
/// copies of its (initialised) buffer arguments.
Expected<std::vector<CountedMap>> countingRun(Session &S, size_t Index);
/// Allocates the kernel's probe buffers (the dynamic maps' with the
/// capacity the counting run chose), failing clearly when one does not fit.
Status allocateProbes(Session &S, size_t Index);

/// One probe map after the checked launch.
struct ProbeResult {
  std::string Name;
  /// The probe spec that defined the map; may be empty.
  std::string Probe;
  uint64_t Slots = 0;
  uint64_t Capacity = 0;
  bool Dynamic = false;
  /// The records dropped because their slots were full, when the map has
  /// an overflow counter.
  std::optional<uint64_t> Overflow;
  /// The records, read only when WithRecords.
  std::vector<uint8_t> Records;
};

/// Reads back each probe map of kernel Index: its overflow counter and,
/// when WithRecords, its records.
Expected<std::vector<ProbeResult>> readProbes(Session &S, size_t Index,
                                              bool WithRecords);
/// Writes the kernel's trace (records read by readProbes with WithRecords)
/// into its TraceDir: manifest.json, MAP.npy, MAP.counts.npy, trace.json.
Status writeTrace(Session &S, size_t Index,
                  const std::vector<ProbeResult> &Probes);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_PROBERUN_H
