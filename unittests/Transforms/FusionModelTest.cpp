//===- FusionModelTest.cpp - The fusion model's pieces --------------------===//
//
// hfuse's fusion model (FusionModel.h) on small made-up kernels whose
// predictions can be worked out by hand: each expected number is derived in
// the comment above it. The GPU has 132 SMs throughout.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace gpuopt;
using namespace gpuopt::hfuse;

namespace {

constexpr int64_t SMs = 132;

KernelTimes makeKernel(double ms, int64_t blocksPerSM, int64_t blocks,
                       KernelKind kind = KernelKind::Memory) {
  KernelTimes k;
  k.timeMs = ms;
  k.blocksPerSM = blocksPerSM;
  k.blocks = blocks;
  k.kind = kind;
  k.multiprocessors = SMs;
  return k;
}

TEST(FusionModel, OverlapPenaltyByKinds) {
  using K = KernelKind;
  EXPECT_EQ(getOverlapPenalty({K::Memory, K::Compute}), 0.2);
  // Memory with tensor is no longer 1.0: a gain can be predicted.
  EXPECT_EQ(getOverlapPenalty({K::Memory, K::Tensor}), 0.5);
  EXPECT_EQ(getOverlapPenalty({K::Compute, K::Tensor}), 0.5);
  // Two memory-bound kernels: 0.6, so that the bound allows up to
  // 2 / 1.6 = 1.25x for equal times, beyond min-gain's 10%.
  EXPECT_EQ(getOverlapPenalty({K::Memory, K::Memory}), 0.6);
  EXPECT_EQ(getOverlapPenalty({K::Compute, K::Compute}), 0.85);
  EXPECT_EQ(getOverlapPenalty({K::Tensor, K::Tensor}), 0.85);
}

TEST(FusionModel, TimeWithoutSweepSlowsByKind) {
  // 1 ms at 8 blocks per SM over 8192 blocks (several waves).
  KernelTimes memory = makeKernel(1.0, 8, 8192, KernelKind::Memory);
  KernelTimes compute = makeKernel(1.0, 8, 8192, KernelKind::Compute);
  EXPECT_DOUBLE_EQ(memory.timeAt(8), 1.0);
  EXPECT_DOUBLE_EQ(memory.timeAt(12), 1.0);
  // At 2 blocks: (8 / 2)^0.55 = 4^0.55 = 2.1435; a compute-bound kernel
  // 4^0.10 = 1.1487.
  EXPECT_NEAR(memory.timeAt(2), 2.1435, 1e-4);
  EXPECT_NEAR(compute.timeAt(2), 1.1487, 1e-4);
  // 512 blocks are all resident at 512 / 132 = 3.88 per SM: at 4 it runs as
  // fast as alone, although 4 < 8.
  KernelTimes small = makeKernel(0.2, 8, 512);
  EXPECT_DOUBLE_EQ(small.timeAt(4), 0.2);
}

TEST(FusionModel, TimeFromSweep) {
  KernelTimes k = makeKernel(1.0, 8, 8192);
  k.sweep = {{2, 1.5}, {4, 1.1}};
  // Between 4 (1.1) and 8 (1.0): at 6, 1.05; between 2 and 4: at 3, 1.3.
  EXPECT_NEAR(k.timeAt(6), 1.05, 1e-12);
  EXPECT_NEAR(k.timeAt(3), 1.3, 1e-12);
  // Below the lowest point, as 1/k: at 1, 1.5 * 2 / 1 = 3.0.
  EXPECT_NEAR(k.timeAt(1), 3.0, 1e-12);
}

TEST(FusionModel, ThreadSplitAtOneBlockPerSM) {
  // A prefill (0.297 ms, 512 blocks, 1 block per SM alone: 128 KiB shared)
  // and a decode (0.389 ms alone at 7 blocks per SM, 0.822 at 1, 512
  // blocks). The fused block inherits the prefill's shared memory: one per
  // SM, so the decode part takes its time at 1, 0.822 ms; both grids are
  // 512 over 132 slots, each fused block as long as its decode block:
  // 512 * (0.822 * 132 / 512) / 132 = 0.822 ms, slower than apart
  // (0.297 + 0.389 = 0.686): the model declines what measured 0.874x.
  KernelTimes prefill = makeKernel(0.297, 1, 512, KernelKind::Tensor);
  KernelTimes decode = makeKernel(0.389, 7, 512, KernelKind::Memory);
  decode.sweep = {{1, 0.822}};
  EXPECT_NEAR(predictThreadSplit({prefill, decode}, 1, SMs), 0.822, 1e-9);
  EXPECT_NEAR(predictApart({prefill, decode}, SMs), 0.686, 1e-9);
  // Without the sweep, the decode's fallback at 1: 0.389 * 7^0.55 =
  // 0.389 * 2.9161 = 1.1344.
  decode.sweep.clear();
  EXPECT_NEAR(predictThreadSplit({prefill, decode}, 1, SMs), 1.1344, 1e-4);
}

TEST(FusionModel, ReplicasAreOneBlockOfMoreThreads) {
  // Two copies of a 256-thread block per fused block: the model sees one
  // block of 512 threads over 4096 / 2 blocks. 1 ms at 8 of its blocks per
  // SM is 1 ms at 4 fused blocks (8 copies) and, at 2 (4 copies),
  // 1 * (8 / 4)^0.55 = 1.464 ms.
  KernelTimes k = makeKernel(1.0, 8, 4096);
  KernelTimes two = k.resized(256, 512, 2048);
  EXPECT_EQ(two.blocks, 2048);
  EXPECT_DOUBLE_EQ(two.timeAt(4), 1.0);
  EXPECT_NEAR(two.timeAt(2), std::pow(2.0, 0.55), 1e-12);
  EXPECT_NEAR(k.timeAt(4), two.timeAt(2), 1e-12);
}

TEST(FusionModel, BlockLevelCapsAPartAtItsBlocks) {
  // A: 0.2 ms, 512 blocks (under a wave: 3.88 per SM); B: 0.05 ms, 12544
  // blocks at 8 per SM (11.88 waves, 0.05 / 11.88 = 0.00421 ms per block).
  // 1:1 at 8 slots: by block duration A would take 8 * 0.2 / 0.2042 = 7.84
  // slots, but holds only its 3.88; B gets the other 4.12 and takes
  // 0.05 * (8 / 4.12)^0.55 = 0.0720 ms, during which A (all resident, at
  // its own speed) does 0.072 / 0.2 of its work; then A alone finishes at
  // 0.2 ms: the fused kernel lasts as long as A alone.
  KernelTimes a = makeKernel(0.2, 8, 512);
  KernelTimes b = makeKernel(0.05, 8, 12544);
  EXPECT_NEAR(predictBlockLevel({a, b}, {1, 1}, 8, SMs), 0.2, 1e-9);
}

TEST(FusionModel, ApartSharesTheSlotsASubWaveKernelLeaves) {
  // First 0.2 ms over 512 blocks of 1056 slots (8 per SM): 51.5% of the
  // slots are free, 4.12 blocks per SM of the second (0.34 ms, 131072
  // blocks, 8 per SM), which there takes 0.34 * (8 / 4.12)^0.55 = 0.4897
  // ms. It starts 0.005 ms later: by 0.2 ms it did 0.195 / 0.4897 = 39.8%;
  // the remaining 60.2% at full speed: 0.2 + 0.602 * 0.34 = 0.4046 ms
  // instead of 0.54.
  KernelTimes first = makeKernel(0.2, 8, 512);
  KernelTimes second = makeKernel(0.34, 8, 131072);
  EXPECT_NEAR(predictApart({first, second}, SMs), 0.40460, 1e-4);
  // In waves, or when the first ends before the second starts: the sum.
  EXPECT_NEAR(predictApart({first, second}, SMs, false), 0.54, 1e-12);
  KernelTimes tiny = makeKernel(0.004, 8, 512);
  EXPECT_NEAR(predictApart({tiny, second}, SMs), 0.344, 1e-12);
  // The other order: the first fills every slot; apart is the sum.
  EXPECT_NEAR(predictApart({second, first}, SMs), 0.54, 1e-12);
}

TEST(FusionModel, DispatchCostPerTicket) {
  FusionPlan plan;
  plan.strategy = FusionStrategy::Dynamic;
  plan.parts.resize(2);
  plan.parts[0].grid = {1000, 1, 1};
  plan.parts[1].grid = {320, 1, 1};
  // 1320 fused blocks over 5 x 132 = 660 slots: 2 rounds of tickets,
  // 2 x 0.6 us.
  EXPECT_NEAR(getDispatchCost(plan, 5, SMs, true), 1.2e-3, 1e-12);
  // In waves: 1.2e-3 / 0.046 ms per wave.
  EXPECT_NEAR(getDispatchCost(plan, 5, SMs, false), 1.2e-3 / 0.046, 1e-12);
  // Four units per ticket: ceil(1320 / 4) = 330 fused blocks, one round.
  plan.units = 4;
  EXPECT_NEAR(getDispatchCost(plan, 5, SMs, true), 0.6e-3, 1e-12);
  plan.units = 1;
  plan.strategy = FusionStrategy::Interleave;
  EXPECT_EQ(getDispatchCost(plan, 5, SMs, true), 0.0);
}

TEST(FusionModel, BalancedSplitGivesTheLongerPartMoreThreads) {
  // Two grid-stride memory kernels of 256 threads, 8 blocks per SM alone
  // (2048 threads), 4096 blocks each: A 1 ms, B 0.25 ms. At 32 registers a
  // fused block of N threads fits 2048 / N per SM, so the parts share 2048
  // threads per SM, k_A + k_B = 8 of their own blocks, and each takes
  // T (8 / k)^0.55: equal when k_A / k_B = (1 / 0.25)^(1 / 0.55) = 12.4,
  // i.e. A with 12.4 / 13.4 = 92.5% of the threads.
  KernelTimes a = makeKernel(1.0, 8, 4096);
  KernelTimes b = makeKernel(0.25, 8, 4096);
  DeviceLimits limits;
  llvm::SmallVector<int64_t> split =
      balanceThreadSplit({a, b}, {256, 256}, {true, true}, 32, 0, limits);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0] % 32, 0);
  EXPECT_EQ(split[1] % 32, 0);
  double share = double(split[0]) / double(split[0] + split[1]);
  EXPECT_NEAR(share, 0.925, 0.04) << split[0] << "+" << split[1];
  // And it beats the even split 256 + 256 (4 blocks per SM, each part at
  // 4 of its own: A 1 * 2^0.55 = 1.464 ms).
  int64_t occupancy = limits.occupancy(split[0] + split[1], 32, 0);
  double balanced = predictThreadSplit(
      {a.resized(256, split[0], 4096), b.resized(256, split[1], 4096)},
      occupancy, SMs);
  double even = predictThreadSplit({a, b}, 4, SMs);
  EXPECT_NEAR(even, std::pow(2.0, 0.55), 1e-9);
  EXPECT_LT(balanced, 0.8 * even);
  // A part that may not be resized keeps its threads.
  split = balanceThreadSplit({a, b}, {256, 256}, {false, true}, 32, 0, limits);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0], 256);
}

} // namespace
