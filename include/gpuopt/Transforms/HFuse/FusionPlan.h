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
/// (`thread`, `interleave`, `dynamic`, `sm_aware`; `stringifyFusionStrategy`
/// and `symbolizeFusionStrategy` convert).
using ::gpuopt::FusionStrategy;

struct PartPlan {
  /// The ptx.module symbol holding the kernel ("" = search all modules).
  std::string module;
  std::string kernel;
  /// The kernel's own block shape and grid. Under runtime shapes the grid
  /// is a default, {0, 0, 0} when none is known.
  Dim3 block = {0, 0, 0};
  Dim3 grid = {0, 0, 0};
  /// Its blocks per dispatch period (interleave, dynamic, sm_aware).
  int64_t ratio = 1;
  /// Bytes of dynamic shared memory it is launched with (-1: unknown).
  int64_t dynamicSmem = 0;
  /// Thread split: how many of its blocks one fused block runs side by side
  /// (copy c on its own thread range, as block `fused block * replicas + c`).
  int64_t replicas = 1;
  /// Thread split, sm_90a-class targets: the registers per thread its warps
  /// take with `setmaxnreg` on entry (0: none; they keep the launch count).
  int64_t setmaxnreg = 0;

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
  /// Launch-agnostic: the fused kernel takes each part's grid (and, where
  /// getRuntimeSmemParts says, its dynamic shared memory) as parameters.
  bool runtimeShapes = false;
  /// Work units (blocks of the parts) a fused block takes per ticket and
  /// runs one after another (dynamic, sm_aware); see getFusedGridBlocks.
  int64_t units = 1;

  bool operator==(const FusionPlan &other) const;

  /// The plan as the attribute `--hfuse-apply` reads. The plan must be one
  /// that checkFusionPlan accepts (the attribute's verifier checks shapes).
  HFusePlanAttr toAttr(mlir::MLIRContext *ctx) const;
  static FusionPlan fromAttr(HFusePlanAttr attr);
};

/// How a thread-split plan lays out its parts: the first thread of each part
/// (warp-aligned; 128-aligned for warpgroup code, for a part with a
/// `setmaxnreg` budget and for the part after one) and the fused block size.
/// A part spans replicas x its threads.
struct ThreadLayout {
  llvm::SmallVector<int64_t, 2> lo;
  int64_t blockThreads = 0;
};
ThreadLayout layoutThreads(const FusionPlan &plan,
                           llvm::ArrayRef<const KernelAnalysis *> analyses);

/// Under runtime shapes, the parts whose dynamic shared memory is given at
/// launch: block-level strategies, every part that declares an `.extern
/// .shared` array (all parts start at offset 0); the thread split, only the
/// last such part, since each part's size places the parts after it. Empty
/// for compile-time shapes.
llvm::SmallVector<bool>
getRuntimeSmemParts(const FusionPlan &plan,
                    llvm::ArrayRef<const KernelAnalysis *> analyses);

/// The `.maxnreg` the fused kernel is launched with: the plan's cap, or,
/// when parts take their own budgets with `setmaxnreg` and no cap is given,
/// the smallest multiple of 8 whose pool (registers x fused block threads)
/// holds every part's budget (parts without one keep the launch count).
/// 0: none.
int64_t getLaunchRegisters(const FusionPlan &plan);

/// The `.maxnreg` of the fused `.entry`: getLaunchRegisters's count where it
/// gives one (a `maxnreg` cap, or the pool of `setmaxnreg` budgets), a cap no
/// larger than what a thread of the fused block of `blockThreads` may have
/// (DeviceLimits::maxRegistersPerThread); without one, that most, so that
/// ptxas allocates up to what the block allows and states it. 0 (none) where
/// the block allows ptxas's own maximum (255), and for a part that changes
/// its own budget with `setmaxnreg` (ptxas honours it only under
/// `.maxnreg`), which the plan checks refuse a cap for.
int64_t getFusedRegisterCap(const FusionPlan &plan, int64_t blockThreads,
                            llvm::ArrayRef<KernelAnalysis> analyses);

/// The fused kernel's grid (blocks): the largest part's for a thread split
/// (a part with replicas r needs ceil(blocks / r) fused blocks),
/// the parts' sum for interleave, ceil(sum / units) for dynamic dispatch
/// (a block takes `units` consecutive tickets), and the sum over the parts
/// of ceil(blocks / units) for sm_aware dispatch (a block takes `units`
/// consecutive blocks of one part). Parts' grids must be known.
int64_t getFusedGridBlocks(const FusionPlan &plan);

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
