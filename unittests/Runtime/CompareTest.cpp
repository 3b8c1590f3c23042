//===- CompareTest.cpp - Comparing kernel outputs -------------------------===//
//
// --compare decides whether a transformed kernel is accepted; these pin what
// counts as a difference (bits, NaNs, signed zeros) and how it is measured.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace gpuopt::runtime;

namespace {

CompareResult compareFloats(const std::vector<float> &A,
                            const std::vector<float> &B) {
  return compareBuffers(
      ElemType::F32, reinterpret_cast<const uint8_t *>(A.data()),
      reinterpret_cast<const uint8_t *>(B.data()), A.size() * sizeof(float));
}

TEST(Compare, Identical) {
  std::vector<float> A = {1, -2, 3.5f, 0};
  CompareResult R = compareFloats(A, A);
  EXPECT_TRUE(R.bitIdentical());
  EXPECT_EQ(R.Elements, 4u);
  EXPECT_EQ(R.MaxAbs, 0);
  EXPECT_EQ(R.RelNorm, 0);
}

TEST(Compare, Differences) {
  std::vector<float> Ref = {1, 2, 4, 0};
  std::vector<float> Got = {1, 2.5f, 4, 0.25f};
  CompareResult R = compareFloats(Got, Ref);
  EXPECT_FALSE(R.bitIdentical());
  EXPECT_EQ(R.Mismatches, 2u);
  EXPECT_EQ(R.FirstMismatch, 1u);
  EXPECT_DOUBLE_EQ(R.MaxAbs, 0.5);
  EXPECT_DOUBLE_EQ(R.MaxRel, 1.0); // 0.25 against 0.
  EXPECT_DOUBLE_EQ(R.RelNorm, std::sqrt(0.25 + 0.0625) / std::sqrt(21.0));
}

TEST(Compare, SignedZeroAndNaN) {
  std::vector<float> A = {0.0f}, B = {-0.0f};
  CompareResult R = compareFloats(A, B);
  EXPECT_EQ(R.Mismatches, 1u); // Bits differ...
  EXPECT_EQ(R.MaxAbs, 0);      // ...values do not.

  float NaN = std::numeric_limits<float>::quiet_NaN();
  R = compareFloats({NaN, 1}, {1, 1});
  EXPECT_EQ(R.NaNMismatches, 1u);
  R = compareFloats({NaN}, {NaN});
  EXPECT_TRUE(R.bitIdentical());
}

TEST(Compare, IntegersAndHalves) {
  std::vector<uint8_t> A = {1, 0, 0, 0, 5, 0, 0, 0};
  std::vector<uint8_t> B = {1, 0, 0, 0, 7, 0, 0, 0};
  CompareResult R = compareBuffers(ElemType::U32, A.data(), B.data(), 8);
  EXPECT_EQ(R.Mismatches, 1u);
  EXPECT_DOUBLE_EQ(R.MaxAbs, 2);

  uint16_t H[2] = {floatToHalf(1.0f), floatToHalf(2.0f)};
  uint16_t G[2] = {floatToHalf(1.0f), floatToHalf(2.5f)};
  R = compareBuffers(ElemType::F16, reinterpret_cast<uint8_t *>(G),
                     reinterpret_cast<uint8_t *>(H), 4);
  EXPECT_DOUBLE_EQ(R.MaxAbs, 0.5);
  EXPECT_DOUBLE_EQ(R.MaxRel, 0.2);
}

} // namespace
