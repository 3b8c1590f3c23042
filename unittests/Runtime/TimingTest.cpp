//===- TimingTest.cpp - Summaries and timed groups ------------------------===//
//
// The statistics every reported time goes through, and the timed modes on
// the stand-in driver that emulates a device in host memory (FakeCuda.c),
// whose fake_add kernel adds its source buffer to its destination: the
// destinations count how often each kernel ran.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Timing.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace gpuopt::runtime;

namespace {

TEST(Stats, OddAndEvenCounts) {
  Stats S = Stats::of({3, 1, 2});
  EXPECT_EQ(S.Median, 2);
  EXPECT_EQ(S.Min, 1);
  EXPECT_EQ(S.Max, 3);
  EXPECT_DOUBLE_EQ(S.Mean, 2);
  EXPECT_DOUBLE_EQ(S.spread(), 1.0);
  // Samples keep their measurement order.
  EXPECT_EQ(S.Samples, (std::vector<double>{3, 1, 2}));

  S = Stats::of({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(S.Median, 2.5);
  EXPECT_DOUBLE_EQ(S.spread(), 3 / 2.5);

  S = Stats::of({});
  EXPECT_EQ(S.Median, 0);
  EXPECT_EQ(S.spread(), 0);
}

/// A context on the emulating stand-in driver with the fake_add kernel, and
/// launches of it that each add a source buffer to a destination.
class EmulatedTiming : public ::testing::Test {
protected:
  static constexpr uint64_t Bytes = 16;

  void SetUp() override {
    Expected<std::unique_ptr<CudaDriver>> LD = CudaDriver::load(
        std::string(FAKE_CUDA_DIR) + "/libfakecuda_emulated.so");
    ASSERT_TRUE(LD) << LD.status().message();
    D = std::move(*LD);
    Expected<std::unique_ptr<Context>> LC = Context::create(*D);
    ASSERT_TRUE(LC) << LC.status().message();
    C = std::move(*LC);
    const char *PTX = ".version 8.0\n.target sm_90\n// fake_add\n";
    Expected<std::unique_ptr<Module>> LM = Module::load(
        *C, std::vector<char>(PTX, PTX + std::strlen(PTX)), true, "add.ptx");
    ASSERT_TRUE(LM) << LM.status().message();
    M = std::move(*LM);
    Expected<Function> LF = M->getFunction("fake_add");
    ASSERT_TRUE(LF) << LF.status().message();
    F = *LF;
    Expected<std::unique_ptr<Stream>> LS = Stream::create(*C);
    ASSERT_TRUE(LS) << LS.status().message();
    S = std::move(*LS);
  }

  /// A launch that adds Bytes bytes of value Add to a zeroed destination.
  LaunchItem addLaunch(uint8_t Add) {
    Expected<DeviceBuffer> Src = DeviceBuffer::allocate(*C, Bytes);
    Expected<DeviceBuffer> Dst = DeviceBuffer::allocate(*C, Bytes);
    EXPECT_TRUE(Src && Dst);
    EXPECT_TRUE(Src->fill(Add).ok());
    EXPECT_TRUE(Dst->fill(0).ok());
    std::vector<ParamInfo> Params = {
        {"src", "u64", 8, 8, 0, ParamKind::Pointer, "global", 0},
        {"dst", "u64", 8, 8, 8, ParamKind::Pointer, "global", 0},
        {"n", "u32", 4, 4, 16, ParamKind::Scalar, "", 0}};
    auto Args = std::make_unique<ArgPack>(Params);
    CUdeviceptr SrcPtr = Src->ptr(), DstPtr = Dst->ptr();
    uint32_t N = Bytes;
    EXPECT_TRUE(Args->set(0, &SrcPtr, 8).ok());
    EXPECT_TRUE(Args->set(1, &DstPtr, 8).ok());
    EXPECT_TRUE(Args->set(2, &N, 4).ok());
    Buffers.push_back(std::move(*Src));
    Buffers.push_back(std::move(*Dst));
    Packs.push_back(std::move(Args));
    LaunchConfig L{Dim3{2, 1, 1}, Dim3{32, 1, 1}, 0};
    return LaunchItem{&F, L, Packs.back().get()};
  }

  /// The destination of the I-th addLaunch, which must hold one value.
  int destination(size_t I) {
    std::vector<uint8_t> Host(Bytes);
    EXPECT_TRUE(Buffers[2 * I + 1].download(Host.data(), Bytes).ok());
    for (uint8_t B : Host)
      EXPECT_EQ(B, Host[0]);
    return Host[0];
  }

  std::unique_ptr<CudaDriver> D;
  std::unique_ptr<Context> C;
  std::unique_ptr<Module> M;
  Function F;
  std::unique_ptr<Stream> S;
  std::vector<DeviceBuffer> Buffers;
  std::vector<std::unique_ptr<ArgPack>> Packs;
};

TEST_F(EmulatedTiming, GraphModeRunsEveryKernelInEveryRound) {
  LaunchItem A = addLaunch(1), B = addLaunch(2), Alone = addLaunch(5);
  // One warm-up and two timed rounds; each round runs the graph (A and B)
  // and the kernel timed alone next to it.
  Expected<std::vector<Stats>> R = timeInterleaved(
      *C, {TimedEntry{{A, B}, GroupMode::Graph}, TimedEntry{{Alone}}},
      {S.get()}, /*Warmup=*/1, /*Repeat=*/2);
  ASSERT_TRUE(R) << R.status().message();
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[0].Samples, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ((*R)[1].Samples, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(destination(0), 3 * 1);
  EXPECT_EQ(destination(1), 3 * 2);
  EXPECT_EQ(destination(2), 3 * 5);
}

TEST_F(EmulatedTiming, EveryModeRunsEveryKernel) {
  LaunchItem A = addLaunch(1), B = addLaunch(2);
  Expected<std::vector<Stats>> R =
      timeInterleaved(*C,
                      {TimedEntry{{A, B}, GroupMode::Serial},
                       TimedEntry{{A, B}, GroupMode::Concurrent},
                       TimedEntry{{A, B}, GroupMode::Graph}},
                      {S.get(), S.get()}, /*Warmup=*/0, /*Repeat=*/3);
  ASSERT_TRUE(R) << R.status().message();
  EXPECT_EQ(destination(0), 3 * 3 * 1);
  EXPECT_EQ(destination(1), 3 * 3 * 2);
}

TEST_F(EmulatedTiming, GraphNodesKeepTheArgumentsTheyWereBuiltWith) {
  LaunchItem A = addLaunch(1), B = addLaunch(2);
  Expected<std::unique_ptr<KernelGraph>> G = KernelGraph::create(*C, {A, B});
  ASSERT_TRUE(G) << G.status().message();
  EXPECT_EQ((*G)->size(), 2u);
  uint32_t Zero = 0;
  ASSERT_TRUE(A.Args->set(2, &Zero, 4).ok());
  ASSERT_TRUE((*G)->launch(S->get()).ok());
  ASSERT_TRUE((*G)->launch(S->get()).ok());
  ASSERT_TRUE(S->synchronize().ok());
  EXPECT_EQ(destination(0), 2 * 1);
  EXPECT_EQ(destination(1), 2 * 2);
}

TEST_F(EmulatedTiming, GraphErrorsNameTheKernel) {
  LaunchItem A = addLaunch(1);
  A.Config.Block = Dim3{2048, 1, 1};
  Expected<std::unique_ptr<KernelGraph>> G = KernelGraph::create(*C, {A});
  ASSERT_FALSE(G);
  EXPECT_EQ(G.status().message().rfind(
                "cuGraphAddKernelNode_v2 of 'fake_add' (grid 2,1,1, block "
                "2048,1,1, 0 bytes dynamic shared memory) failed: ",
                0),
            0u)
      << G.status().message();
  EXPECT_FALSE(KernelGraph::create(*C, {}));
}

} // namespace
