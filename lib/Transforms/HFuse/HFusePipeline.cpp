//===- HFusePipeline.cpp - The --hfuse pipeline ---------------------------===//
//
// `--hfuse`, the user's entry point: `gpu-opt --hfuse a.ptx b.ptx -o
// fused.ptx` chooses a strategy (`--hfuse-plan`, whose options it takes by
// the same names) and builds the fused kernel (`--hfuse-apply`).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/HFusePipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;

void hfuse::buildHFusePipeline(OpPassManager &pm, const HFuseOptions &options) {
  HFusePlanOptions plan;
  plan.config = options.config;
  plan.strategy = options.strategy;
  plan.kernels.assign(options.kernels.begin(), options.kernels.end());
  plan.blocks.assign(options.blocks.begin(), options.blocks.end());
  plan.grids.assign(options.grids.begin(), options.grids.end());
  plan.runtimeShapes = options.runtimeShapes;
  plan.smem.assign(options.smem.begin(), options.smem.end());
  plan.threads.assign(options.threads.begin(), options.threads.end());
  plan.resizable.assign(options.resizable.begin(), options.resizable.end());
  plan.ratio.assign(options.ratio.begin(), options.ratio.end());
  plan.replicas.assign(options.replicas.begin(), options.replicas.end());
  plan.setmaxnreg.assign(options.setmaxnreg.begin(), options.setmaxnreg.end());
  plan.units = options.units;
  plan.maxnreg = options.maxnreg;
  plan.name = options.name;
  plan.profile = options.profile;
  plan.chip = options.chip;
  plan.ptxas = options.ptxas;
  plan.minGain = options.minGain;
  plan.require = options.require;
  plan.candidatesOut = options.candidatesOut;
  plan.measure = options.measure;
  plan.measureArgs.assign(options.measureArgs.begin(),
                          options.measureArgs.end());
  plan.measureTop = options.measureTop;
  plan.cache = options.cache;
  pm.addPass(createHFusePlanPass(std::move(plan), "hfuse"));
  pm.addPass(createHFuseApply());
}

void gpuopt::registerHFusePipeline() {
  PassPipelineRegistration<HFuseOptions>(
      "hfuse",
      "Fuse kernels horizontally: --hfuse-plan, then --hfuse-apply, with the "
      "options of --hfuse-plan",
      buildHFusePipeline);
}
