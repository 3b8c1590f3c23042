//===- Compare.h - Comparing kernel outputs ---------------------*- C++ -*-===//
//
// A transformed kernel (fused, probed) must compute what the original did.
// The strongest statement is bit identity; where the transformation may
// reorder floating-point work, the differences are summarised as maximum
// absolute and relative error and the relative L2 norm of the difference.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_COMPARE_H
#define GPUOPT_RUNTIME_COMPARE_H

#include "gpuopt/Runtime/ArgSpec.h"

#include <cstdint>

namespace gpuopt::runtime {

struct CompareResult {
  uint64_t Elements = 0;
  /// Elements whose bytes differ.
  uint64_t Mismatches = 0;
  /// Index of the first differing element, when Mismatches > 0.
  uint64_t FirstMismatch = 0;
  /// max |a - b|.
  double MaxAbs = 0;
  /// max |a - b| / max(|a|, |b|) (0 where both are 0).
  double MaxRel = 0;
  /// ||a - b||_2 / ||b||_2 (||a - b||_2 when b is all zero).
  double RelNorm = 0;
  /// Elements where exactly one side is NaN (a NaN on both sides with other
  /// bits counts as a mismatch but not here).
  uint64_t NaNMismatches = 0;

  bool bitIdentical() const { return Mismatches == 0; }
};

/// Compares two buffers of Bytes bytes holding elements of type T.
CompareResult compareBuffers(ElemType T, const uint8_t *A, const uint8_t *B,
                             uint64_t Bytes);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_COMPARE_H
