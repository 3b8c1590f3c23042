//===- DeviceLimits.h - SM limits for occupancy ----------------*- C++ -*-===//
//
// Blocks per SM and register caps for the fusion model and the probes'
// keep-occupancy, from the limits of the chip the kernels target (the chip
// table, gpuopt/Target/PTX/ChipLimits.h) or of the GPU they run on (its
// driver, when `--hfuse-plan measure=` finds one).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_DEVICELIMITS_H
#define GPUOPT_TRANSFORMS_HFUSE_DEVICELIMITS_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace gpuopt {
struct ChipLimits;
} // namespace gpuopt

namespace gpuopt::hfuse {

/// Per-SM limits of the target, and its SM count. The defaults are sm_90's
/// row of the chip table (an H100 SXM5).
struct DeviceLimits {
  int64_t multiprocessors = 132;
  int64_t threadsPerSM = 2048;
  int64_t registersPerSM = 65536;
  int64_t blocksPerSM = 32;
  int64_t sharedPerSM = 233472;
  int64_t sharedReservedPerBlock = 1024;
  /// Register file sub-partitions (one per warp scheduler): warps are given
  /// registers in groups of this many.
  int64_t subPartitions = 4;
  /// The most registers of one thread, and the unit a warp's come in.
  int64_t registersPerThread = 255;
  int64_t registerUnit = 256;
  /// The most shared memory one block may have (with the opt-in).
  int64_t sharedPerBlock = 232448;

  /// The limits of a row of the chip table.
  static DeviceLimits get(const ChipLimits &row);

  /// Resident blocks per SM for a block of `threads` threads, `registers`
  /// registers per thread and `sharedBytes` of shared memory.
  int64_t occupancy(int64_t threads, int64_t registers,
                    int64_t sharedBytes) const;
  /// The most registers a thread of a `threads`-thread block can have (what
  /// ptxas caps a kernel to when one block must fit on an SM).
  int64_t maxRegistersPerThread(int64_t threads) const;
};

/// The limits of `chip` (`sm_XY`, with or without its `a`/`f` suffix): its
/// row of the chip table, else the newest older row of its family (sm_103
/// takes sm_100's); none for a chip of a family the table does not know.
/// `closest`, when given, says whether the row is another chip's.
std::optional<DeviceLimits> lookupDeviceLimits(llvm::StringRef chip,
                                               bool *closest = nullptr);

/// lookupDeviceLimits with its diagnostics at `loc`: a remark when another
/// chip's row stands in, an error that names the chips the table knows when
/// none does. `from` says where the chip was named ("chip=", "the kernels'
/// .target").
mlir::FailureOr<DeviceLimits>
getDeviceLimits(llvm::StringRef chip, llvm::StringRef from, mlir::Location loc);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_DEVICELIMITS_H
