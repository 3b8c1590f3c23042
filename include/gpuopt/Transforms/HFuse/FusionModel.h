//===- FusionModel.h - Predict which fusion wins ----------------*- C++ -*-===//
//
// The cost model behind `--hfuse-plan strategy=auto`: every candidate
// (strategy x split x ratio x register cap) is built, ptxas reports its
// registers, spills and shared memory, and an occupancy and wave model
// predicts its time from each kernel's time alone. docs/fusion.md explains
// the model; the search tool measures the top candidates.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H
#define GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H

#include "gpuopt/Transforms/HFuse/FusionPlan.h"

namespace gpuopt::hfuse {

struct ModelOptions {
  std::string chip;
  std::string ptxas;
  /// Where errors about the kernels as a whole go (the config, the kernels=
  /// option); the root's location when unset.
  std::optional<mlir::Location> loc;
};

/// Per-SM limits of the target (sm_90 unless told otherwise).
struct DeviceLimits {
  int64_t multiprocessors = 132;
  int64_t threadsPerSM = 2048;
  int64_t registersPerSM = 65536;
  int64_t blocksPerSM = 32;
  int64_t sharedPerSM = 233472;
  int64_t sharedReservedPerBlock = 1024;
  /// Register file sub-partitions (one per warp scheduler).
  int64_t subPartitions = 4;

  /// Resident blocks per SM for a block of `threads` threads, `registers`
  /// registers per thread and `sharedBytes` of shared memory.
  int64_t occupancy(int64_t threads, int64_t registers,
                    int64_t sharedBytes) const;
  /// The most registers a thread of a `threads`-thread block can have (what
  /// ptxas caps a kernel to when one block must fit on an SM).
  int64_t maxRegistersPerThread(int64_t threads) const;
};

/// One kernel alone, from a `gpu-run --json` profile: its time at its own
/// occupancy and, with `--occupancy-sweep`, at fewer blocks per SM.
struct KernelProfile {
  /// Median time alone; < 0 when unknown.
  double timeMs = -1;
  /// Blocks per SM alone (the driver's count); 0 when unknown.
  int64_t blocksPerSM = 0;
  /// (blocks per SM, ms) measured below blocksPerSM, ascending.
  std::vector<std::pair<int64_t, double>> sweep;
};

struct Candidate {
  FusionPlan plan;
  bool feasible = true;
  /// Why it cannot be built, when not feasible.
  std::string reason;
  int64_t registers = 0, sharedBytes = 0, spillBytes = 0, occupancy = 0;
  double predictedMs = 0, baselineMs = 0;
  /// What predictedMs and baselineMs count: "ms" when every kernel has a
  /// time alone, "waves" (each kernel's number of waves) when none has.
  std::string unit = "ms";
  std::string explanation;
  /// Per part: whether the split runs it with other threads than its block.
  /// options() then marks it resizable, so that replaying them (hfuse_search)
  /// builds the same kernel; auto resizes only kernels the analysis shows
  /// resizable or the user marked.
  llvm::SmallVector<bool> resized;

  /// "thread split 256+128, maxnreg 64", "interleave 3:1".
  std::string describe() const;
  /// The `--hfuse` options that build it (with blocks/grids given apart).
  std::string options() const;
};

/// Builds and predicts every candidate around `base` (whose parts have their
/// blocks, grids and a fitted ratio). `resizable[i]` allows other splits of
/// kernel i; `profiles[i]` is what is known of kernel i alone (without a
/// time, its number of waves stands in); `cap >= 0` fixes the register cap.
/// Sorted by predicted time.
mlir::FailureOr<std::vector<Candidate>>
evaluateCandidates(mlir::ModuleOp root, const FusionPlan &base,
                   llvm::ArrayRef<bool> resizable,
                   llvm::ArrayRef<KernelProfile> profiles, int64_t cap,
                   const ModelOptions &options);

/// For a plan the user chose (no model): builds it on a copy of `root` and
/// asks ptxas to assemble it. When ptxas rejects the fused kernel but not the
/// kernels alone, emits an error at `loc` that names the registers each
/// kernel needs and what the fused block allows, and fails. Returns whether
/// ptxas checked the plan: false when there is no ptxas, or when it rejects
/// a kernel alone too (then a warning says so).
mlir::FailureOr<bool> checkPlanWithPtxas(mlir::ModuleOp root,
                                         const FusionPlan &plan,
                                         const ModelOptions &options,
                                         mlir::Location loc);

/// Writes the candidates as a JSON array to `path`.
mlir::LogicalResult writeCandidates(llvm::ArrayRef<Candidate> candidates,
                                    llvm::StringRef path, mlir::Location loc);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H
