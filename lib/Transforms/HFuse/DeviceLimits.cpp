//===- DeviceLimits.cpp - The SM limits occupancy is computed with --------===//
//
// Blocks per SM as CUDA's occupancy calculator computes them, and the chip a
// target's limits come from.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/DeviceLimits.h"

#include "gpuopt/Target/PTX/ChipLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;

DeviceLimits DeviceLimits::get(const ChipLimits &row) {
  DeviceLimits limits;
  limits.multiprocessors = row.multiprocessors;
  limits.threadsPerSM = row.threadsPerSM;
  limits.registersPerSM = row.registersPerSM;
  limits.blocksPerSM = row.blocksPerSM;
  limits.sharedPerSM = row.sharedPerSM;
  limits.sharedReservedPerBlock = row.sharedReservedPerBlock;
  limits.subPartitions = row.warpAllocationGranularity;
  limits.registersPerThread = row.registersPerThread;
  limits.registerUnit = row.registerAllocationUnit;
  limits.sharedPerBlock = row.sharedPerBlockOptin;
  return limits;
}

int64_t DeviceLimits::occupancy(int64_t threads, int64_t registers,
                                int64_t sharedBytes) const {
  if (threads <= 0 || sharedBytes > sharedPerBlock)
    return 0;
  int64_t warps = llvm::divideCeil(threads, 32);
  // Registers are allocated per warp in units of 256, from one of the SM's
  // four sub-partitions: a warp's registers never straddle two (CUDA's
  // occupancy calculator, cuda_occupancy.h). 104 registers give 4 warps a
  // sub-partition, 16 an SM, not 65536 / 3328 = 19.
  int64_t perWarp =
      llvm::alignTo(std::max<int64_t>(registers, 1) * 32, registerUnit);
  if (registers > maxRegistersPerThread(threads))
    return 0;
  int64_t warpsByRegisters =
      registersPerSM / subPartitions / perWarp * subPartitions;
  int64_t byRegisters = warpsByRegisters / warps;
  int64_t byThreads = threadsPerSM / (warps * 32);
  // (Before compute capability 8.0 the driver reserves none.)
  int64_t blockShared = sharedBytes + sharedReservedPerBlock;
  int64_t byShared = blockShared > 0 ? sharedPerSM / blockShared : blocksPerSM;
  return std::max<int64_t>(
      0, std::min({byRegisters, byThreads, byShared, blocksPerSM}));
}

int64_t DeviceLimits::maxRegistersPerThread(int64_t threads) const {
  int64_t warps = std::max<int64_t>(llvm::divideCeil(threads, 32), 1);
  // The hardware checks a block's registers as if its warps filled every
  // sub-partition alike (warps rounded up to a multiple of four), and a
  // warp's registers come in units of 256, 8 per thread: 576 threads may
  // have 96, as ptxas caps them, not 65536 / 18 warps = 112.
  int64_t perWarp = registersPerSM / llvm::alignTo(warps, subPartitions) /
                    registerUnit * registerUnit;
  return std::min<int64_t>(registersPerThread, perWarp / 32);
}

std::optional<DeviceLimits> hfuse::lookupDeviceLimits(StringRef chip,
                                                      bool *closest) {
  const ChipLimits *row = findChipLimits(chip);
  if (closest)
    *closest = !row;
  if (!row)
    row = findClosestChipLimits(chip);
  if (!row)
    return std::nullopt;
  return DeviceLimits::get(*row);
}

FailureOr<DeviceLimits> hfuse::getDeviceLimits(StringRef chip, StringRef from,
                                               Location loc) {
  if (findChipLimits(chip))
    return *lookupDeviceLimits(chip);
  if (const ChipLimits *row = findClosestChipLimits(chip)) {
    emitRemark(loc) << "hfuse: the chip table has no row for '" << chip << "' ("
                    << from << "); the model takes " << row->chip
                    << "'s limits (" << row->part << ", "
                    << row->multiprocessors
                    << " SMs), the newest older chip of its family";
    return DeviceLimits::get(*row);
  }
  return emitError(loc)
             << "hfuse: strategy=auto models the SMs of the chip the "
                "kernels run on, but the chip table has no row for '"
             << chip << "' (" << from << "); it knows " << getKnownChipNames()
             << " (each with its a and f targets, and newer chips of those "
                "families); give chip= the chip the kernels will run on, or "
                "measure= on a machine with the GPU, whose driver gives its "
                "limits",
         failure();
}
