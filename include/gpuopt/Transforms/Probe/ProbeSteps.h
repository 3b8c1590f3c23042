//===- ProbeSteps.h - The probe passes' steps on one kernel -----*- C++ -*-===//
//
// What each probe pass does to one kernel, callable apart from the pass so
// that --probe-keep-occupancy can probe a kernel again another way (plan,
// insert and lower with another placement).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBESTEPS_H
#define GPUOPT_TRANSFORMS_PROBE_PROBESTEPS_H

#include "gpuopt/Transforms/Probe/ProbeMaps.h"

#include <map>
#include <memory>
#include <tuple>

namespace gpuopt::probe {

/// The checked probes of each plan (by its specs, carry and names' prefix),
/// read once per pass run.
class ProbeCache {
public:
  mlir::FailureOr<llvm::ArrayRef<CheckedProbe>> get(const ProbePlan &plan,
                                                    mlir::MLIRContext *ctx);

private:
  std::map<std::tuple<std::vector<std::string>, bool, std::string>,
           std::unique_ptr<std::vector<CheckedProbe>>>
      probes;
};

/// --probe-plan on one kernel: checks that it can be probed, lays out its
/// maps, adds the buffer parameters, `gpuopt.probes` and `plan`.
mlir::LogicalResult planKernel(ptx::EntryOp entry,
                               llvm::ArrayRef<CheckedProbe> probes,
                               ProbePlan plan);

/// --probe-insert on one kernel: the points' snippets in `ptx.probe` ops,
/// saves and placeholders left for --probe-lower. Labels are numbered
/// across the kernels one inserter handles.
class ProbeInserter {
public:
  mlir::LogicalResult insert(ptx::EntryOp entry,
                             llvm::ArrayRef<CheckedProbe> probes);

private:
  unsigned labelCounter = 0;
};

/// --probe-lower on one kernel: lib/Transforms/Probe/ProbeLowering.h.

/// Takes a probed kernel back to what it was before --probe-plan (its probe
/// ops, buffer parameters and `gpuopt.probes` removed; the plan kept).
void removeProbes(ptx::EntryOp entry);

} // namespace gpuopt::probe

#endif // GPUOPT_TRANSFORMS_PROBE_PROBESTEPS_H
