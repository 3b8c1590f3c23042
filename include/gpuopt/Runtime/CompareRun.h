//===- CompareRun.h - A kernel against another's outputs --------*- C++ -*-===//
//
// Checks that a transformed kernel (fused, probed) computes what another
// did: after a session's checked launch of one kernel, the other runs with
// the same arguments and launch shape on freshly initialised buffers, and
// every buffer argument is compared (gpu-run --compare).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_COMPARERUN_H
#define GPUOPT_RUNTIME_COMPARERUN_H

#include "gpuopt/Runtime/Compare.h"
#include "gpuopt/Runtime/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuopt::runtime {

class Session;

struct BufferComparison {
  /// The argument's index among the kernel spec's arguments.
  size_t Arg = 0;
  ElemType Type = ElemType::U8;
  CompareResult Result;
};

struct RunComparison {
  /// The other module and kernel.
  std::string Module, Kernel;
  std::vector<BufferComparison> Buffers;
  bool BitIdentical = true;
  /// Bit-identical, or within the tolerance when one was given.
  bool Pass = true;
};

/// Runs kernel OtherKernel of module OtherPath with the arguments of kernel
/// Index of S (after its checked launch; its probe buffers and capacities
/// are not among them) and compares every buffer: the other kernel's
/// outputs against the checked launch's. With Tolerance, a buffer whose
/// relative L2 difference is at most Tolerance and that has no NaN on one
/// side only passes. Afterwards the buffers hold their initial contents
/// again (probe buffers zeros), as before the checked launch.
Expected<RunComparison> compareRun(Session &S, size_t Index,
                                   const std::string &OtherPath,
                                   const std::string &OtherKernel,
                                   std::optional<double> Tolerance);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_COMPARERUN_H
