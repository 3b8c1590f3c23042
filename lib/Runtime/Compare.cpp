//===- Compare.cpp - Comparing kernel outputs -----------------------------===//

#include "gpuopt/Runtime/Compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace gpuopt::runtime;

CompareResult gpuopt::runtime::compareBuffers(ElemType T, const uint8_t *A,
                                              const uint8_t *B,
                                              uint64_t Bytes) {
  CompareResult R;
  const uint64_t Size = elemSize(T);
  R.Elements = Bytes / Size;
  double DiffSq = 0, RefSq = 0;
  for (uint64_t I = 0; I < R.Elements; ++I) {
    const uint8_t *PA = A + I * Size, *PB = B + I * Size;
    double VB = loadAsDouble(T, B, I);
    if (std::isfinite(VB))
      RefSq += VB * VB;
    if (std::memcmp(PA, PB, Size) == 0)
      continue;
    if (R.Mismatches++ == 0)
      R.FirstMismatch = I;
    double VA = loadAsDouble(T, A, I);
    if (std::isnan(VA) != std::isnan(VB)) {
      ++R.NaNMismatches;
      continue;
    }
    if (std::isnan(VA))
      continue; // Two NaNs with different payloads.
    double Diff = std::fabs(VA - VB);
    if (std::isnan(Diff)) // inf - inf of the same sign cannot differ here.
      Diff = INFINITY;
    R.MaxAbs = std::max(R.MaxAbs, Diff);
    double Scale = std::max(std::fabs(VA), std::fabs(VB));
    if (Scale > 0)
      R.MaxRel = std::max(R.MaxRel, Diff / Scale);
    DiffSq += Diff * Diff;
  }
  R.RelNorm =
      RefSq > 0 ? std::sqrt(DiffSq) / std::sqrt(RefSq) : std::sqrt(DiffSq);
  return R;
}
