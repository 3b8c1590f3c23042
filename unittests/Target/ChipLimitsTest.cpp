//===- ChipLimitsTest.cpp - The chip table --------------------------------===//
//
// The rows the fusion model and keep-occupancy compute with: each chip's
// figures as the CUDA C++ Programming Guide's "Technical Specifications per
// Compute Capability" table gives them, the reference parts' SM counts, and
// how a target name finds its row (suffixes, newer chips of a family,
// unknown chips).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ChipLimits.h"

#include <gtest/gtest.h>

using namespace gpuopt;

namespace {

TEST(ChipLimits, ReferencePartsSMs) {
  const std::pair<const char *, int64_t> parts[] = {
      {"sm_70", 80},  {"sm_75", 40},   {"sm_80", 108},
      {"sm_86", 72},  {"sm_87", 16},   {"sm_89", 142},
      {"sm_90", 132}, {"sm_100", 148}, {"sm_120", 170}};
  for (auto [chip, sms] : parts) {
    const ChipLimits *row = findChipLimits(chip);
    ASSERT_NE(row, nullptr) << chip;
    EXPECT_EQ(row->chip, chip);
    EXPECT_EQ(row->multiprocessors, sms) << chip;
  }
  EXPECT_EQ(findChipLimits("sm_80")->part, "A100 SXM4");
  EXPECT_EQ(findChipLimits("sm_90")->part, "H100 SXM5");
}

TEST(ChipLimits, PerSMByComputeCapability) {
  const ChipLimits &a100 = *findChipLimits("sm_80");
  EXPECT_EQ(a100.threadsPerSM, 2048);
  EXPECT_EQ(a100.blocksPerSM, 32);
  EXPECT_EQ(a100.sharedPerSM, 164 * 1024);
  EXPECT_EQ(a100.sharedPerBlockOptin, 163 * 1024);
  EXPECT_EQ(a100.sharedReservedPerBlock, 1024);
  const ChipLimits &ga10x = *findChipLimits("sm_86");
  EXPECT_EQ(ga10x.threadsPerSM, 1536);
  EXPECT_EQ(ga10x.blocksPerSM, 16);
  EXPECT_EQ(ga10x.sharedPerSM, 100 * 1024);
  EXPECT_EQ(findChipLimits("sm_89")->blocksPerSM, 24);
  const ChipLimits &h100 = *findChipLimits("sm_90");
  EXPECT_EQ(h100.sharedPerSM, 228 * 1024);
  EXPECT_EQ(h100.sharedPerBlockOptin, 227 * 1024);
  EXPECT_EQ(findChipLimits("sm_75")->threadsPerSM, 1024);
  EXPECT_EQ(findChipLimits("sm_75")->sharedReservedPerBlock, 0);
  EXPECT_EQ(findChipLimits("sm_120")->threadsPerSM, 1536);
  EXPECT_EQ(findChipLimits("sm_120")->blocksPerSM, 32);
}

TEST(ChipLimits, EveryRowIsConsistent) {
  unsigned last = 0;
  for (const ChipLimits &row : getChipLimitsTable()) {
    std::string chip = row.chip.str();
    // Oldest first, one row per chip.
    unsigned version = *parseChipVersion(chip);
    EXPECT_GT(version, last) << chip;
    last = version;
    // Since Volta: 64K registers, 255 per thread, units of 256, four
    // sub-partitions; a warp is 32 threads; one block's shared memory is
    // the SM's less what the driver reserves.
    EXPECT_EQ(row.registersPerSM, 65536) << chip;
    EXPECT_EQ(row.registersPerThread, 255) << chip;
    EXPECT_EQ(row.registerAllocationUnit, 256) << chip;
    EXPECT_EQ(row.warpAllocationGranularity, 4) << chip;
    EXPECT_EQ(row.threadsPerSM % 32, 0) << chip;
    EXPECT_EQ(row.sharedPerBlockOptin,
              row.sharedPerSM - row.sharedReservedPerBlock)
        << chip;
    EXPECT_GT(row.multiprocessors, 0) << chip;
    EXPECT_FALSE(row.part.empty()) << chip;
  }
}

TEST(ChipLimits, TargetNames) {
  EXPECT_EQ(parseChipVersion("sm_90a"), 90u);
  EXPECT_EQ(parseChipVersion("sm_100f"), 100u);
  EXPECT_EQ(parseChipVersion("sm_120"), 120u);
  EXPECT_EQ(parseChipVersion("compute_90"), std::nullopt);
  EXPECT_EQ(parseChipVersion("sm_"), std::nullopt);
  EXPECT_EQ(parseChipVersion("sm_9x"), std::nullopt);
  // The a and f targets run on their chip.
  EXPECT_EQ(findChipLimits("sm_90a"), findChipLimits("sm_90"));
  EXPECT_EQ(findChipLimits("sm_100a"), findChipLimits("sm_100"));
  EXPECT_EQ(findChipLimits("sm_120f"), findChipLimits("sm_120"));
}

TEST(ChipLimits, NewerChipsOfAFamily) {
  // No row of their own: the newest older chip of the same major version.
  EXPECT_EQ(findChipLimits("sm_103a"), nullptr);
  EXPECT_EQ(findClosestChipLimits("sm_103a"), findChipLimits("sm_100"));
  EXPECT_EQ(findClosestChipLimits("sm_121"), findChipLimits("sm_120"));
  EXPECT_EQ(findClosestChipLimits("sm_88"), findChipLimits("sm_87"));
  // A family the table does not know.
  EXPECT_EQ(findClosestChipLimits("sm_61"), nullptr);
  EXPECT_EQ(findClosestChipLimits("sm_110"), nullptr);
  EXPECT_EQ(findClosestChipLimits("sm_130"), nullptr);
  EXPECT_EQ(findClosestChipLimits("gfx90a"), nullptr);
  EXPECT_EQ(getKnownChipNames(), "sm_70, sm_75, sm_80, sm_86, sm_87, sm_89, "
                                 "sm_90, sm_100 and sm_120");
}

} // namespace
