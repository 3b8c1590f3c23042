//===- ChipLimits.cpp - Per-SM limits of each target chip -----------------===//
//
// The chip table. Sources, by column:
//
//  - threads, blocks, registers (per SM and per thread) and shared memory
//    (per SM, and per block with the opt-in): the CUDA C++ Programming
//    Guide, "Compute Capabilities", table "Technical Specifications per
//    Compute Capability" (CUDA 13.0), and the tuning guide of each
//    architecture (Volta, Turing, Ampere, Ada, Hopper and Blackwell Tuning
//    Guides, section "Occupancy" / "Shared Memory"); NVIDIA CCCL's
//    `cuda/__device/arch_traits.h` states the same numbers in code.
//  - shared memory reserved per block: 1 KiB from compute capability 8.0 on
//    (the Ampere Tuning Guide: "the CUDA driver reserves 1 KB of shared
//    memory per thread block"), none before; the driver reports it as
//    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK.
//  - register allocation unit (256 registers per warp) and warp allocation
//    granularity (4, one per register file sub-partition): the CUDA
//    Occupancy Calculator (`cuda_occupancy.h`, cudaOccRegAllocationGranularity
//    and cudaOccSubPartitionsPerMultiprocessor) for compute capability 7.0
//    and later.
//  - SMs: the reference part's datasheet or architecture whitepaper, named
//    in the row. Parts of one compute capability differ (an H100 PCIe has
//    114 SMs); when a GPU is present its driver's count replaces the row's.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ChipLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace gpuopt;

static constexpr int64_t KiB = 1024;

// clang-format off
static const ChipLimits kChipLimits[] = {
    // chip, part, SMs, threads/SM, blocks/SM, registers/SM, registers/thread,
    // shared/SM, shared/block (opt-in), reserved/block, register unit,
    // warp granularity.
    //
    // Tesla V100 SXM2: 80 SMs (Volta architecture whitepaper). 96 KiB of
    // shared memory per SM, all of it to one block (Volta Tuning Guide).
    {"sm_70", "Tesla V100 SXM2", 80, 2048, 32, 65536, 255,
     96 * KiB, 96 * KiB, 0, 256, 4},
    // Tesla T4: 40 SMs (T4 datasheet: 2560 CUDA cores, 64 per SM). 1024
    // threads and 16 blocks per SM, 64 KiB of shared memory (Turing Tuning
    // Guide).
    {"sm_75", "Tesla T4", 40, 1024, 16, 65536, 255,
     64 * KiB, 64 * KiB, 0, 256, 4},
    // A100 SXM4: 108 SMs (NVIDIA A100 Tensor Core GPU Architecture
    // whitepaper). 164 KiB of shared memory per SM, 163 KiB per block
    // (Ampere Tuning Guide).
    {"sm_80", "A100 SXM4", 108, 2048, 32, 65536, 255,
     164 * KiB, 163 * KiB, 1 * KiB, 256, 4},
    // A10: 72 SMs (A10 datasheet: 9216 CUDA cores, 128 per SM). 1536
    // threads and 16 blocks per SM, 100 KiB of shared memory, 99 KiB per
    // block (Ampere Tuning Guide, GA10x).
    {"sm_86", "A10", 72, 1536, 16, 65536, 255,
     100 * KiB, 99 * KiB, 1 * KiB, 256, 4},
    // Jetson AGX Orin 64GB: 16 SMs (its datasheet: 2048 CUDA cores, 128 per
    // SM). 1536 threads and 16 blocks per SM; A100's 164 KiB of shared
    // memory (Programming Guide, compute capability 8.7).
    {"sm_87", "Jetson AGX Orin 64GB", 16, 1536, 16, 65536, 255,
     164 * KiB, 163 * KiB, 1 * KiB, 256, 4},
    // L40S: 142 SMs (L40S datasheet: 18176 CUDA cores, 128 per SM). 1536
    // threads and 24 blocks per SM, 100 KiB of shared memory, 99 KiB per
    // block (Ada Tuning Guide).
    {"sm_89", "L40S", 142, 1536, 24, 65536, 255,
     100 * KiB, 99 * KiB, 1 * KiB, 256, 4},
    // H100 SXM5: 132 SMs (NVIDIA H100 Tensor Core GPU Architecture
    // whitepaper). 228 KiB of shared memory per SM, 227 KiB per block
    // (Hopper Tuning Guide).
    {"sm_90", "H100 SXM5", 132, 2048, 32, 65536, 255,
     228 * KiB, 227 * KiB, 1 * KiB, 256, 4},
    // B200: 148 SMs, 74 enabled on each of its two dies (Chips and Cheese,
    // "Nvidia's B200: Keeping the CUDA Juggernaut Rolling", measured on one).
    // 228 KiB of shared memory per SM, 227 KiB per block (Blackwell Tuning
    // Guide, compute capability 10.0).
    {"sm_100", "B200", 148, 2048, 32, 65536, 255,
     228 * KiB, 227 * KiB, 1 * KiB, 256, 4},
    // GeForce RTX 5090: 170 SMs (NVIDIA RTX Blackwell GPU Architecture
    // whitepaper: 21760 CUDA cores, 128 per SM). 1536 threads and 32 blocks
    // per SM, 100 KiB of shared memory, 99 KiB per block (Programming Guide,
    // compute capability 12.0).
    {"sm_120", "GeForce RTX 5090", 170, 1536, 32, 65536, 255,
     100 * KiB, 99 * KiB, 1 * KiB, 256, 4},
};
// clang-format on

llvm::ArrayRef<ChipLimits> gpuopt::getChipLimitsTable() { return kChipLimits; }

std::optional<unsigned> gpuopt::parseChipVersion(llvm::StringRef chip) {
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  if (chip.ends_with("a") || chip.ends_with("f"))
    chip = chip.drop_back();
  unsigned version = 0;
  if (chip.empty() || chip.getAsInteger(10, version) || version < 10)
    return std::nullopt;
  return version;
}

/// A row's version (80 for sm_80).
static unsigned getRowVersion(const ChipLimits &row) {
  return *parseChipVersion(row.chip);
}

const ChipLimits *gpuopt::findChipLimits(llvm::StringRef chip) {
  std::optional<unsigned> version = parseChipVersion(chip);
  if (!version)
    return nullptr;
  for (const ChipLimits &row : kChipLimits)
    if (getRowVersion(row) == *version)
      return &row;
  return nullptr;
}

const ChipLimits *gpuopt::findClosestChipLimits(llvm::StringRef chip) {
  std::optional<unsigned> version = parseChipVersion(chip);
  if (!version)
    return nullptr;
  const ChipLimits *closest = nullptr;
  for (const ChipLimits &row : kChipLimits) {
    unsigned rowVersion = getRowVersion(row);
    if (rowVersion / 10 == *version / 10 && rowVersion <= *version)
      closest = &row;
  }
  return closest;
}

std::string gpuopt::getKnownChipNames() {
  std::string text;
  llvm::raw_string_ostream os(text);
  size_t count = std::size(kChipLimits);
  for (auto [i, row] : llvm::enumerate(kChipLimits))
    os << (i == 0 ? "" : i + 1 == count ? " and " : ", ") << row.chip;
  return text;
}
