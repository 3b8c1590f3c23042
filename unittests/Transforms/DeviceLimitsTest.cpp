//===- DeviceLimitsTest.cpp - Occupancy and register limits of sm_90 ------===//
//
// hfuse::DeviceLimits against what the hardware does: the register caps are
// the ones ptxas 13.0 applies for `.maxntid N` on sm_90a (a Triton matmul
// that needs 209 registers, compiled at each N), and the blocks per SM follow
// CUDA's occupancy calculator (cuda_occupancy.h: registers in units of 256
// per warp, from one of four sub-partitions).
//
//===----------------------------------------------------------------------===//

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
}

} // namespace
