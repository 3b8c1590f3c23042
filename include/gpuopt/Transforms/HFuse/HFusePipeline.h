//===- HFusePipeline.h - The --hfuse pipeline -------------------*- C++ -*-===//
//
// `--hfuse` is `--hfuse-plan` then `--hfuse-apply`, registered as a pass
// pipeline whose options are the plan's (HFusePipeline.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_HFUSEPIPELINE_H
#define GPUOPT_TRANSFORMS_HFUSE_HFUSEPIPELINE_H

#include "gpuopt/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace gpuopt::hfuse {

/// The options of `--hfuse`: those of `--hfuse-plan`, by the same names.
struct HFuseOptions : public mlir::PassPipelineOptions<HFuseOptions> {
  Option<std::string> config{*this, "config",
                             llvm::cl::desc("YAML fusion configuration "
                                            "(configs/hfuse/*.yaml)"),
                             llvm::cl::init("")};
  Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("thread, interleave, dynamic, sm_aware or auto"),
      llvm::cl::init("auto")};
  ListOption<std::string> kernels{
      *this, "kernels",
      llvm::cl::desc("Kernels to fuse, in order, each by its symbol, its "
                     "function name without parameters (demangled) or its "
                     "base name, optionally as MODULE::NAME; default: every "
                     ".entry")};
  ListOption<std::string> blocks{
      *this, "blocks",
      llvm::cl::desc("Block shape of each kernel (256, 16x16); needed "
                     "without .reqntid")};
  ListOption<std::string> grids{
      *this, "grids", llvm::cl::desc("Grid of each kernel (1024, 64x128)")};
  Option<bool> runtimeShapes{
      *this, "runtime-shapes",
      llvm::cl::desc("Launch-agnostic: the fused kernel takes each kernel's "
                     "grid (and dynamic shared memory where the strategy "
                     "allows) as parameters at launch"),
      llvm::cl::init(false)};
  ListOption<int64_t> smem{
      *this, "smem",
      llvm::cl::desc("Dynamic shared memory bytes of each kernel")};
  ListOption<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Thread split: each kernel's threads (only resizable "
                     "kernels may differ from their block)")};
  ListOption<std::string> resizable{
      *this, "resizable",
      llvm::cl::desc("Each kernel: true if it is correct with any 1-D block "
                     "size where the kernel analysis cannot show it (a "
                     "thread split may then resize it, with a warning), else "
                     "false")};
  ListOption<int64_t> ratio{
      *this, "ratio",
      llvm::cl::desc("Interleave/dynamic/sm_aware: each kernel's blocks per "
                     "period")};
  ListOption<int64_t> replicas{
      *this, "replicas",
      llvm::cl::desc("Thread split: how many blocks of each kernel one fused "
                     "block runs side by side (default 1)")};
  ListOption<int64_t> setmaxnreg{
      *this, "setmaxnreg",
      llvm::cl::desc("Thread split on sm_90a: each kernel's registers per "
                     "thread, taken with setmaxnreg (0: none; multiples of 8 "
                     "in 24..256)")};
  Option<int64_t> units{
      *this, "units",
      llvm::cl::desc("Dynamic/sm_aware: work units (blocks of the kernels) a "
                     "fused block takes per ticket and runs one after "
                     "another"),
      llvm::cl::init(1)};
  Option<int64_t> maxnreg{
      *this, "maxnreg",
      llvm::cl::desc("Register cap of the fused kernel (0: none; -1: choose)"),
      llvm::cl::init(-1)};
  Option<std::string> name{
      *this, "name",
      llvm::cl::desc("Name of the fused .entry and of its ptx.module "
                     "(default: the kernels' function names joined by '_', "
                     "then '_fused')"),
      llvm::cl::init("")};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("gpu-run --json report with each kernel's time alone"),
      llvm::cl::init("")};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip for ptxas's resource report (default: the "
                     "modules')"),
      llvm::cl::init("")};
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("ptxas to run for resource reports (default: on PATH, "
                     "or the CUDA toolkit's)"),
      llvm::cl::init("")};
  Option<double> minGain{
      *this, "min-gain",
      llvm::cl::desc("strategy=auto without measure=: accept the model's "
                     "estimate and fuse when the best candidate is predicted "
                     "this fraction faster than the kernels apart (e.g. "
                     "0.10); unset (negative, the default), the unmeasured "
                     "model only ranks and does not fuse"),
      llvm::cl::init(-1.0)};
  Option<bool> require{
      *this, "require",
      llvm::cl::desc("strategy=auto: fail (an error) when no candidate is "
                     "predicted or measured to pay, instead of leaving the "
                     "kernels apart with a remark"),
      llvm::cl::init(false)};
  Option<std::string> candidatesOut{
      *this, "candidates-out",
      llvm::cl::desc("strategy=auto: write every candidate, ranked, as JSON "
                     "(the search tool measures the top ones)"),
      llvm::cl::init("")};
  Option<std::string> measure{
      *this, "measure",
      llvm::cl::desc("strategy=auto: a gpu-run run spec of the kernels "
                     "(launch shapes and arguments, in order); with a GPU, "
                     "the top candidates are timed and checked against the "
                     "kernels apart, and the fastest wins"),
      llvm::cl::init("")};
  ListOption<std::string> measureArgs{
      *this, "measure-args",
      llvm::cl::desc("strategy=auto: instead of measure=, each kernel's "
                     "arguments as gpu-run --arg specs separated by spaces, "
                     "one value per kernel, in braces ({buf:f32:1024:random:1 "
                     "scalar:u32:1024},{...}); the launch shapes are the "
                     "plan's")};
  Option<int64_t> measureTop{
      *this, "measure-top",
      llvm::cl::desc("strategy=auto with measure=: how many of the model's "
                     "best candidates to measure"),
      llvm::cl::init(3)};
  Option<std::string> cache{
      *this, "cache",
      llvm::cl::desc("strategy=auto with measure=: folder of measured "
                     "decisions (default: $XDG_CACHE_HOME/gpu-opt/hfuse, else "
                     "~/.cache/gpu-opt/hfuse; none: no cache)"),
      llvm::cl::init("")};
};

/// Adds `--hfuse-plan` with `options`, then `--hfuse-apply`, to `pm`.
void buildHFusePipeline(mlir::OpPassManager &pm, const HFuseOptions &options);

/// `--hfuse-plan` for a pipeline whose flag is `flag`: errors about an
/// option are located at `--FLAG option 'NAME'`, the option the user gave.
std::unique_ptr<mlir::Pass> createHFusePlanPass(HFusePlanOptions options,
                                                llvm::StringRef flag);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_HFUSEPIPELINE_H
