//===- MeasureCandidatesTest.cpp - Measured choice and its cache key ------===//
//
// The pieces of `--hfuse-plan measure=` that need no GPU: which measured
// candidate wins (the fastest checked one, and only when it beats the best
// way to run the kernels apart by the threshold), the SHA-256 the cache is
// keyed by, and where the cache lives by default. The GPU run itself is
// tested with the runtime's stand-in driver (test/Transforms/HFuse/
// hfuse-measure.test) and on a GPU (hfuse-measure-gpu.test).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/MeasureCandidates.h"
#include "gpuopt/Runtime/Device.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace gpuopt::hfuse;

namespace {

MeasuredCandidate candidate(double ms, bool verified,
                            std::string excluded = "") {
  MeasuredCandidate c;
  c.medianMs = ms;
  c.verified = verified;
  c.excluded = std::move(excluded);
  return c;
}

TEST(MeasureCandidates, BestBaselineIsTheFastestModeMeasured) {
  MeasuredBaselines b;
  EXPECT_EQ(b.bestMs(), -1);
  EXPECT_EQ(b.bestMode(), "");
  b.serialMs = 2.0;
  b.concurrentMs = 1.5;
  b.graphMs = 1.6;
  EXPECT_EQ(b.bestMs(), 1.5);
  EXPECT_EQ(b.bestMode(), "two streams");
  b.concurrentMs = -1;
  EXPECT_EQ(b.bestMode(), "graph");
}

TEST(MeasureCandidates, FastestCheckedCandidateWins) {
  MeasuredBaselines b;
  b.serialMs = 2.0;
  b.graphMs = 1.0;
  // The fastest fails its check: the next fastest checked one wins.
  std::vector<MeasuredCandidate> measured = {
      candidate(0.90, true), candidate(0.70, false, "outputs differ"),
      candidate(0.80, true), candidate(-1, false, "not built")};
  EXPECT_EQ(chooseMeasured(b, measured, 0.01), std::optional<size_t>(2));
}

TEST(MeasureCandidates, DeclinesWithinTheThreshold) {
  MeasuredBaselines b;
  b.serialMs = 1.0;
  // 0.995 ms is faster than 1.0 ms apart, but by less than 1%.
  std::vector<MeasuredCandidate> measured = {candidate(0.995, true),
                                             candidate(1.2, true)};
  EXPECT_EQ(chooseMeasured(b, measured, 0.01), std::nullopt);
  EXPECT_EQ(chooseMeasured(b, measured, 0.0), std::optional<size_t>(0));
  measured[0].medianMs = 0.99;
  EXPECT_EQ(chooseMeasured(b, measured, 0.01), std::optional<size_t>(0));
  // Without a baseline nothing can win.
  EXPECT_EQ(chooseMeasured(MeasuredBaselines(), measured, 0.01), std::nullopt);
}

TEST(MeasureCandidates, UncheckedCandidatesNeverWin) {
  MeasuredBaselines b;
  b.serialMs = 1.0;
  std::vector<MeasuredCandidate> measured = {candidate(0.5, false),
                                             candidate(0.6, true, "differs")};
  EXPECT_EQ(chooseMeasured(b, measured, 0.01), std::nullopt);
}

TEST(MeasureCandidates, LimitsFromTheDriver) {
  // An A100 PCIe as its driver describes it: the driver's figures win.
  gpuopt::runtime::DeviceInfo info;
  info.ComputeMajor = 8;
  info.ComputeMinor = 0;
  info.Multiprocessors = 108;
  info.ThreadsPerMultiprocessor = 2048;
  info.BlocksPerMultiprocessor = 32;
  info.RegistersPerMultiprocessor = 65536;
  info.SharedPerMultiprocessor = 167936;
  info.MaxSharedPerBlockOptin = 166912;
  info.ReservedSharedPerBlock = 1024;
  DeviceLimits limits = getGPUDeviceLimits(info);
  EXPECT_EQ(limits.multiprocessors, 108);
  EXPECT_EQ(limits.sharedPerSM, 167936);
  EXPECT_EQ(limits.sharedPerBlock, 166912);
  // A driver that gives only some (the stand-in gives the SM count and the
  // opt-in): the rest from its compute capability's row, here sm_86's.
  gpuopt::runtime::DeviceInfo partial;
  partial.ComputeMajor = 8;
  partial.ComputeMinor = 6;
  partial.Multiprocessors = 4;
  DeviceLimits fromRow = getGPUDeviceLimits(partial);
  EXPECT_EQ(fromRow.multiprocessors, 4);
  EXPECT_EQ(fromRow.threadsPerSM, 1536);
  EXPECT_EQ(fromRow.blocksPerSM, 16);
  EXPECT_EQ(fromRow.sharedPerSM, 100 * 1024);
  // A compute capability the table does not know: sm_90's defaults.
  gpuopt::runtime::DeviceInfo unknown;
  unknown.ComputeMajor = 6;
  unknown.ComputeMinor = 1;
  unknown.Multiprocessors = 28;
  DeviceLimits fallback = getGPUDeviceLimits(unknown);
  EXPECT_EQ(fallback.multiprocessors, 28);
  EXPECT_EQ(fallback.threadsPerSM, 2048);
}

TEST(MeasureCandidates, KeyIsSHA256) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(MeasureCandidates, DefaultCacheFollowsXDG) {
  const char *old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(getDefaultCacheDir(), "/somewhere/cache/gpu-opt/hfuse");
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

} // namespace
