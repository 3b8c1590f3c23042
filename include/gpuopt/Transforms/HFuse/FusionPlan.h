//===- FusionPlan.h - What horizontal fusion builds -------------*- C++ -*-===//
//
// A fusion plan says which kernels become one, by which strategy, with which
// block shapes, grids, thread split or interleave ratio and register cap.
// The decide pass (`--hfuse-plan`) writes it on the builtin module as a
// `#gpuopt.hfuse_plan` (setHFusePlan); the transform (`--hfuse-apply`)
// reads it. Both are testable alone, and a plan can be written by hand in a
// test. FusionPlan is the mutable form the planner and the fusion model
// build candidates in.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_FUSIONPLAN_H
#define GPUOPT_TRANSFORMS_HFUSE_FUSIONPLAN_H

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"

#include "mlir/IR/BuiltinOps.h"

namespace gpuopt::hfuse {

/// How the fused kernel runs its parts: the gpuopt dialect's enum
/// (`thread`, `interleave`, `dynamic`; `stringifyFusionStrategy` and
/// `symbolizeFusionStrategy` convert).
using ::gpuopt::FusionStrategy;

struct PartPlan {
  /// The ptx.module symbol holding the kernel ("" = search all modules).
  std::string module;
  std::string kernel;
  /// The kernel's own block shape and grid.
  Dim3 block = {0, 0, 0};
  Dim3 grid = {0, 0, 0};
  /// Its blocks per dispatch period (interleave, dynamic).
  int64_t ratio = 1;
  /// Bytes of dynamic shared memory it is launched with (-1: unknown).
  int64_t dynamicSmem = 0;

  int64_t getThreads() const { return block[0] * block[1] * block[2]; }
  int64_t getBlocks() const { return grid[0] * grid[1] * grid[2]; }
  bool operator==(const PartPlan &other) const;
};

struct FusionPlan {
  std::string name;
  FusionStrategy strategy = FusionStrategy::Thread;
  /// `.maxnreg` of the fused kernel; 0 for none.
  int64_t maxnreg = 0;
  llvm::SmallVector<PartPlan, 2> parts;

  bool operator==(const FusionPlan &other) const;

  /// The plan as the attribute `--hfuse-apply` reads. The plan must be one
  /// that checkFusionPlan accepts (the attribute's verifier checks shapes).
  HFusePlanAttr toAttr(mlir::MLIRContext *ctx) const;
  static FusionPlan fromAttr(HFusePlanAttr attr);
};

/// How a thread-split plan lays out its parts: the first thread of each part
/// (warp-aligned; 128-aligned for warpgroup code) and the fused block size.
struct ThreadLayout {
  llvm::SmallVector<int64_t, 2> lo;
  int64_t blockThreads = 0;
};
ThreadLayout layoutThreads(const FusionPlan &plan,
                           llvm::ArrayRef<const KernelAnalysis *> analyses);

/// Finds the kernel a part names among the ptx.modules of `root`.
mlir::FailureOr<ptx::EntryOp>
findPartKernel(mlir::ModuleOp root, const PartPlan &part, mlir::Location loc);

/// Checks that `plan` can be built safely; emits the reason and fails if
/// not (hazards of the kernels, block sizes, barrier ids, shared memory).
mlir::LogicalResult checkFusionPlan(mlir::ModuleOp root, const FusionPlan &plan,
                                    mlir::Location loc);

/// Builds the fused kernel: a new ptx.module named after the plan holding one
/// `.entry` that runs every part, every global and device function of the
/// parts' modules (renamed where names clash), and a `#gpuopt.fusion_info`
/// (setFusionInfo) with what the launch manifest and the probes need. The
/// parts' modules are erased. Emits an error and leaves `root` unchanged on
/// failure.
mlir::FailureOr<ptx::PTXModuleOp> buildFusedKernel(mlir::ModuleOp root,
                                                   const FusionPlan &plan);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_FUSIONPLAN_H
