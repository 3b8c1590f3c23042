//===- ChipLimits.h - Per-SM limits of each target chip ---------*- C++ -*-===//
//
// What one SM of a chip holds (threads, blocks, registers, shared memory) and
// how many SMs its reference part has: the occupancy and wave figures the
// fusion model and the probes' keep-occupancy compute with, for the chip the
// kernels target (`chip=`, else the module's `.target`). Each number has its
// source beside it in ChipLimits.cpp. When a GPU is present, the driver's
// figures replace these (MeasureCandidates.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_PTX_CHIPLIMITS_H
#define GPUOPT_TARGET_PTX_CHIPLIMITS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace gpuopt {

/// One row of the chip table: a compute capability's limits per SM, and the
/// SM count of the part that stands for it.
struct ChipLimits {
  /// "sm_80": the chip without its `a`/`f` suffix.
  llvm::StringLiteral chip;
  /// The product whose SM count `multiprocessors` is ("A100 SXM4").
  llvm::StringLiteral part;
  int64_t multiprocessors;
  int64_t threadsPerSM;
  int64_t blocksPerSM;
  /// 32-bit registers of one SM, and the most one thread may have.
  int64_t registersPerSM;
  int64_t registersPerThread;
  /// Shared memory of one SM, the most one block may opt in to, and what
  /// the driver reserves per resident block.
  int64_t sharedPerSM;
  int64_t sharedPerBlockOptin;
  int64_t sharedReservedPerBlock;
  /// Registers are allocated per warp in units of this many.
  int64_t registerAllocationUnit;
  /// Warps are allocated registers in groups of this many (one per
  /// register file sub-partition).
  int64_t warpAllocationGranularity;
};

/// Every row, oldest chip first.
llvm::ArrayRef<ChipLimits> getChipLimitsTable();

/// The number XY of a chip named `sm_XY`, `sm_XYa` or `sm_XYf` (90 for
/// "sm_90a", 100 for "sm_100f"); none for another name.
std::optional<unsigned> parseChipVersion(llvm::StringRef chip);

/// `chip`'s row (its `a`/`f` suffix dropped: "sm_90a" is sm_90's); null when
/// the table has none.
const ChipLimits *findChipLimits(llvm::StringRef chip);

/// For a chip without a row: the row of the newest older chip of its family
/// (the same major version: sm_103 -> sm_100, sm_121 -> sm_120), whose SM
/// holds the same; null when the table has none.
const ChipLimits *findClosestChipLimits(llvm::StringRef chip);

/// "sm_70, sm_75, ... and sm_120", for messages.
std::string getKnownChipNames();

} // namespace gpuopt

#endif // GPUOPT_TARGET_PTX_CHIPLIMITS_H
