//===- DeviceLimitsTest.cpp - Occupancy and register limits per chip ------===//
//
// hfuse::DeviceLimits against what the hardware does: the register caps are
// the ones ptxas 13.0 applies for `.maxntid N` on sm_90a (a Triton matmul
// that needs 209 registers, compiled at each N), and the blocks per SM follow
// CUDA's occupancy calculator (cuda_occupancy.h: registers in units of 256
// per warp, from one of four sub-partitions); other chips by their rows of
// the chip table.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ChipLimits.h"
#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include "gtest/gtest.h"

using namespace gpuopt::hfuse;

namespace {

TEST(DeviceLimits, RegisterCapAsPtxasAppliesIt) {
  DeviceLimits limits;
  // threads -> the cap ptxas reported ("Insufficient registers (N)") or the
  // registers it used when the kernel fit.
  const std::pair<int64_t, int64_t> caps[] = {
      {32, 255}, {160, 255}, {288, 168}, {384, 168}, {544, 96},
      {576, 96}, {640, 96},  {704, 80},  {768, 80},  {800, 72},
      {896, 72}, {1024, 64}};
  for (auto [threads, cap] : caps)
    EXPECT_EQ(limits.maxRegistersPerThread(threads), cap)
        << threads << " threads";
}

TEST(DeviceLimits, BlocksPerSMBySubPartition) {
  DeviceLimits limits;
  // One warp of 104 registers: 3328 per warp, 4 warps in a sub-partition's
  // 16384, 16 on the SM (not 65536 / 3328 = 19).
  EXPECT_EQ(limits.occupancy(32, 104, 0), 16);
  // 256 threads: threads limit at 8 blocks up to 32 registers.
  EXPECT_EQ(limits.occupancy(256, 32, 0), 8);
  EXPECT_EQ(limits.occupancy(256, 40, 0), 6);
  // 672 threads (21 warps): 32 registers fit 3 blocks, 48 only one.
  EXPECT_EQ(limits.occupancy(672, 32, 0), 3);
  EXPECT_EQ(limits.occupancy(672, 48, 0), 1);
  // A block that cannot launch at all.
  EXPECT_EQ(limits.occupancy(1024, 72, 0), 0);
  // Shared memory: 228 KiB per SM, 1 KiB reserved per block.
  EXPECT_EQ(limits.occupancy(128, 32, 48 * 1024), 4);
  EXPECT_EQ(limits.occupancy(0, 32, 0), 0);
  // More than a block may opt in to.
  EXPECT_EQ(limits.occupancy(128, 32, 227 * 1024), 1);
  EXPECT_EQ(limits.occupancy(128, 32, 227 * 1024 + 1), 0);
}

TEST(DeviceLimits, DefaultsAreSm90sRow) {
  DeviceLimits defaults;
  DeviceLimits row = DeviceLimits::get(*gpuopt::findChipLimits("sm_90"));
  EXPECT_EQ(defaults.multiprocessors, row.multiprocessors);
  EXPECT_EQ(defaults.threadsPerSM, row.threadsPerSM);
  EXPECT_EQ(defaults.registersPerSM, row.registersPerSM);
  EXPECT_EQ(defaults.blocksPerSM, row.blocksPerSM);
  EXPECT_EQ(defaults.sharedPerSM, row.sharedPerSM);
  EXPECT_EQ(defaults.sharedReservedPerBlock, row.sharedReservedPerBlock);
  EXPECT_EQ(defaults.subPartitions, row.subPartitions);
  EXPECT_EQ(defaults.registersPerThread, row.registersPerThread);
  EXPECT_EQ(defaults.registerUnit, row.registerUnit);
  EXPECT_EQ(defaults.sharedPerBlock, row.sharedPerBlock);
}

TEST(DeviceLimits, OtherChips) {
  // A100: 108 SMs, 164 KiB of shared memory per SM.
  std::optional<DeviceLimits> a100 = lookupDeviceLimits("sm_80");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->multiprocessors, 108);
  EXPECT_EQ(a100->occupancy(128, 32, 48 * 1024), 3);
  EXPECT_EQ(a100->occupancy(256, 32, 0), 8);
  // GA10x: 1536 threads and 16 blocks per SM.
  std::optional<DeviceLimits> a10 = lookupDeviceLimits("sm_86");
  ASSERT_TRUE(a10);
  EXPECT_EQ(a10->occupancy(256, 32, 0), 6);
  EXPECT_EQ(a10->occupancy(64, 32, 0), 16);
  // Turing: 1024 threads per SM, no block of 1024 threads at 72 registers.
  std::optional<DeviceLimits> t4 = lookupDeviceLimits("sm_75");
  ASSERT_TRUE(t4);
  EXPECT_EQ(t4->occupancy(256, 32, 0), 4);
  EXPECT_EQ(t4->occupancy(1024, 64, 0), 1);
  EXPECT_EQ(t4->occupancy(1024, 72, 0), 0);
}

TEST(DeviceLimits, ChipsWithoutARow) {
  bool closest = false;
  std::optional<DeviceLimits> b300 = lookupDeviceLimits("sm_103a", &closest);
  ASSERT_TRUE(b300);
  EXPECT_TRUE(closest);
  EXPECT_EQ(b300->multiprocessors, 148);
  std::optional<DeviceLimits> h100 = lookupDeviceLimits("sm_90a", &closest);
  ASSERT_TRUE(h100);
  EXPECT_FALSE(closest);
  EXPECT_FALSE(lookupDeviceLimits("sm_61"));
  EXPECT_FALSE(lookupDeviceLimits(""));
}

} // namespace
