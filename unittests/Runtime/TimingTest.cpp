//===- TimingTest.cpp - Summaries of repeated measurements ----------------===//
//
// The statistics every reported time goes through.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Timing.h"

#include <gtest/gtest.h>

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

} // namespace
