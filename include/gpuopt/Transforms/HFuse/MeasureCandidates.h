//===- MeasureCandidates.h - Measure auto's top candidates ------*- C++ -*-===//
//
// `--hfuse-plan strategy=auto measure=RUN.json` (or `measure-args=`, each
// kernel's gpu-run `--arg` specs): the model ranks the candidates, the GPU
// decides. The top candidates are built in process,
// loaded through the runtime (lib/Runtime, the CUDA driver opened with
// dlopen), timed with CUDA events next to the kernels apart (serial, two
// streams, a CUDA graph) in interleaved rounds, and checked bit for bit
// against the kernels apart on the run spec's inputs; the fastest checked
// candidate wins if it beats the best way apart. The decision is cached per
// kernels, shapes, options and GPU (a SHA-256 key), so that the next build
// reuses it without a GPU run. Without a GPU the model's choice stands.
// docs/fusion.md ("Measuring in process") describes it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_MEASURECANDIDATES_H
#define GPUOPT_TRANSFORMS_HFUSE_MEASURECANDIDATES_H

#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuopt::runtime {
struct DeviceInfo;
} // namespace gpuopt::runtime

namespace gpuopt::hfuse {

struct MeasureOptions {
  /// A gpu-run run spec of the kernels, in the plan's order: their launch
  /// shapes and arguments (measure=).
  std::string runSpec;
  /// Instead of a run spec: each kernel's arguments as gpu-run `--arg`
  /// specs separated by whitespace, one text per kernel in the plan's order
  /// (measure-args=); the launch shapes are the plan's.
  std::vector<std::string> argSpecs;
  /// How many of the model's best feasible candidates to measure
  /// (measure-top=).
  int64_t top = 3;
  /// Where decisions are cached (cache=): empty for getDefaultCacheDir(),
  /// "none" for no cache.
  std::string cacheDir;
  /// A candidate fuses only when it is at least this fraction faster than
  /// the best way to run the kernels apart (timing noise on an H100 is
  /// below 1%).
  double minSpeedup = 0.01;
  /// Where errors about measure-top= and cache= go (else prepare's `loc`).
  std::optional<mlir::Location> topLoc, cacheLoc;
};

/// The kernels apart, as measured in the candidates' rounds (ms; < 0 when
/// not measured).
struct MeasuredBaselines {
  double serialMs = -1, concurrentMs = -1, graphMs = -1;
  /// The fastest of the modes measured, and its name ("serial", "two
  /// streams", "graph"); -1 and "" when none was.
  double bestMs() const;
  llvm::StringRef bestMode() const;
};

/// One candidate as measured.
struct MeasuredCandidate {
  std::string description;
  /// The `--hfuse` options that build it (Candidate::options()); empty in a
  /// cache entry written before they were recorded.
  std::string options;
  /// Its rank among the model's feasible candidates (0: the model's choice).
  size_t rank = 0;
  /// Median time of the fused kernel; < 0 when it was not timed.
  double medianMs = -1;
  /// Its outputs are bit-identical to those of the kernels apart.
  bool verified = false;
  /// Why it was left out (build, launch, outputs that differ); empty when
  /// it was not.
  std::string excluded;
};

/// The measured candidate that wins: the fastest verified one that is at
/// least `minSpeedup` faster than the best baseline; none when no verified
/// candidate is.
std::optional<size_t> chooseMeasured(const MeasuredBaselines &baselines,
                                     llvm::ArrayRef<MeasuredCandidate> measured,
                                     double minSpeedup);

/// What the GPU decided, measured now or read from the cache.
struct MeasuredDecision {
  /// Fuse by `plan`; otherwise decline.
  bool fuse = false;
  FusionPlan plan;
  /// The chosen candidate as the model saw it (measured now), for the
  /// remark's prediction; absent on a cache hit.
  std::optional<Candidate> predicted;
  MeasuredBaselines baselines;
  std::vector<MeasuredCandidate> measured;
  /// The chosen kernel's time (fuse), or the fastest verified one's
  /// (decline; < 0 when none was verified).
  double fusedMs = -1;
  /// The device name and when it was measured (UTC, ISO 8601).
  std::string gpu, created;
  /// How many candidates the model evaluated (0 on a cache hit).
  size_t evaluated = 0;
  /// The cache file read (fromCache) or written; empty when none.
  std::string cachePath;
  bool fromCache = false;
  /// Why the decision was not cached, when it was not.
  std::string notCached;
};

/// Measures strategy=auto's candidates on the GPU and caches the decision.
class CandidateMeasurement {
public:
  /// Reads the run spec and checks it against `base`'s parts (errors are
  /// the user's and located at `loc`), looks for a GPU and computes the
  /// cache key from the kernels' PTX, the plan's inputs and the GPU. A
  /// missing driver or device is not an error: unmeasuredReason() says it.
  static mlir::FailureOr<std::unique_ptr<CandidateMeasurement>>
  prepare(mlir::ModuleOp root, const FusionPlan &base,
          llvm::ArrayRef<bool> resizable,
          llvm::ArrayRef<KernelProfile> profiles, int64_t cap,
          const ModelOptions &model, const MeasureOptions &options,
          mlir::Location loc);
  ~CandidateMeasurement();

  /// Empty with a GPU to measure on; else why there is none (the driver's
  /// message).
  llvm::StringRef unmeasuredReason() const { return unmeasured; }
  /// The SHA-256 (hex) of the decision's inputs; empty without a GPU.
  llvm::StringRef cacheKey() const { return key; }
  /// The cache file of this key; empty without a GPU or cache.
  std::string cachePath() const;
  /// The GPU's limits, which the model counts with instead of the chip
  /// table's (getGPUDeviceLimits); none without a GPU.
  const std::optional<DeviceLimits> &deviceLimits() const { return limits; }

  /// The decision cached for this key, if any. An entry that cannot be
  /// read or whose plan no longer applies is ignored with a warning (and
  /// left as it is).
  std::optional<MeasuredDecision> lookup(mlir::ModuleOp root);
  /// Builds the best `top` feasible candidates of `ranked` (the model's
  /// order), times them next to the kernels apart, checks their outputs and
  /// decides; caches the decision. Fails, with an error, when the GPU run
  /// fails as a whole.
  mlir::FailureOr<MeasuredDecision> measure(mlir::ModuleOp root,
                                            llvm::ArrayRef<Candidate> ranked);

private:
  CandidateMeasurement() = default;
  struct State;
  std::unique_ptr<State> state;
  MeasureOptions options;
  mlir::Location loc = mlir::UnknownLoc();
  std::string unmeasured, key, cacheDir;
  std::optional<DeviceLimits> limits;
};

/// Sets the decision's plan on `root` and explains it in a remark at `loc`.
/// A decline sets no plan (the kernels stay apart) and says why in a remark,
/// with the options that fuse by the fastest checked candidate anyway; with
/// `require` it is an error instead, and fails. `fromConfig`: the strategy
/// comes from a config, where those options are written as its keys.
mlir::LogicalResult applyMeasuredDecision(mlir::ModuleOp root,
                                          const MeasuredDecision &decision,
                                          mlir::Location loc, bool require,
                                          bool fromConfig);

/// The limits of the GPU `info` describes: the driver's SM count, threads,
/// blocks, registers and shared memory per SM, shared memory per block and
/// reserved per block; for any the driver does not give (0), its compute
/// capability's row of the chip table (or, for one the table does not
/// know, sm_90's).
DeviceLimits getGPUDeviceLimits(const runtime::DeviceInfo &info);

/// $XDG_CACHE_HOME/gpu-opt/hfuse, else $HOME/.cache/gpu-opt/hfuse; empty
/// when neither is known.
std::string getDefaultCacheDir();

/// The lowercase hex SHA-256 of `text`.
std::string sha256Hex(llvm::StringRef text);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_MEASURECANDIDATES_H
