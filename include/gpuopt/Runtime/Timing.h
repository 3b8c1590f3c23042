//===- Timing.h - Timing launches with CUDA events --------------*- C++ -*-===//
//
// Baselines for fusion are a kernel alone, two kernels back to back on one
// stream (serial), two kernels on two streams (concurrent), and two kernels
// as independent nodes of one CUDA graph (graph). All are timed the same way:
// events recorded on one stream around the group, every repetition enqueued
// without host synchronisation in between so that launch latency overlaps the
// previous repetition, warm-up repetitions first and discarded, then the median
// of the rest. Modes that are compared with each other are interleaved round by
// round (timeInterleaved): measured one after the other, a GPU's clock drift
// under a long tensor-core load showed up as a difference between the modes.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_TIMING_H
#define GPUOPT_RUNTIME_TIMING_H

#include "gpuopt/Runtime/Device.h"

#include <vector>

namespace gpuopt::runtime {

/// Summary of repeated measurements, in milliseconds.
struct Stats {
  std::vector<double> Samples;
  double Median = 0, Min = 0, Max = 0, Mean = 0;

  /// (Max - Min) / Median: the relative spread of the samples.
  double spread() const { return Median > 0 ? (Max - Min) / Median : 0; }
  static Stats of(std::vector<double> Samples);
};

enum class GroupMode {
  /// Every item on the first stream, one after the other.
  Serial,
  /// Item i on stream i, all released by one event and joined by another.
  Concurrent,
  /// The items as independent kernel nodes of one CUDA graph (KernelGraph),
  /// built and instantiated once before the first round; each repetition
  /// launches the executable graph on the first stream.
  Graph,
};

/// A group of launches and how they run.
struct TimedEntry {
  std::vector<LaunchItem> Items;
  GroupMode Mode = GroupMode::Serial;
};

/// Times several entries in interleaved rounds: every round enqueues one
/// repetition of each entry in order, so that slow drifts of clock or
/// temperature affect all entries alike and the GPU never idles between
/// them. The first Warmup rounds are not timed. Returns one Stats per entry
/// over Repeat rounds. Concurrent entries need one stream per item; all
/// entries use Streams[0] as the main stream.
Expected<std::vector<Stats>>
timeInterleaved(const Context &C, const std::vector<TimedEntry> &Entries,
                const std::vector<const Stream *> &Streams, unsigned Warmup,
                unsigned Repeat);

/// Times one group alone: timeInterleaved with a single entry.
Expected<Stats> timeGroup(const Context &C,
                          const std::vector<LaunchItem> &Items, GroupMode Mode,
                          const std::vector<const Stream *> &Streams,
                          unsigned Warmup, unsigned Repeat);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_TIMING_H
