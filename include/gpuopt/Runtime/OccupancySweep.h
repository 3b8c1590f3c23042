//===- OccupancySweep.h - Kernel time by blocks per SM ----------*- C++ -*-===//
//
// The profile gpu-opt's fusion planner reads (profile=): a kernel timed
// alone with fewer of its blocks per SM, as when a fused kernel's other part
// holds the rest of the SM, limited by padding its dynamic shared memory
// (gpu-run --occupancy-sweep).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_OCCUPANCYSWEEP_H
#define GPUOPT_RUNTIME_OCCUPANCYSWEEP_H

#include "gpuopt/Runtime/Status.h"
#include "gpuopt/Runtime/Timing.h"

#include <functional>
#include <vector>

namespace gpuopt::runtime {

class Session;

struct OccupancyPoint {
  int BlocksPerSM = 0;
  /// The padded dynamic shared memory that limits the kernel to it.
  uint64_t DynamicSmem = 0;
  Stats Time;
};

struct OccupancySweep {
  /// The blocks per SM the kernel's own launch gets.
  int BlocksPerSM = 0;
  /// False when the driver does not report shared memory per SM: no sweep.
  bool SharedPerSMKnown = true;
  /// Fewer blocks per SM, most first (1, 2, 3, 4, 6, 8, ... below what
  /// fits), each confirmed by the driver's occupancy calculator.
  std::vector<OccupancyPoint> Points;
};

/// Sweeps kernel Index of S (after its checked launch), calling OnPoint
/// with the sweep so far as each point is measured (the new one last).
Expected<OccupancySweep>
sweepOccupancy(Session &S, size_t Index,
               const std::function<void(const OccupancySweep &)> &OnPoint = {});

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_OCCUPANCYSWEEP_H
