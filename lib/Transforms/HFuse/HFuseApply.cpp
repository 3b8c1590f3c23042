//===- HFuseApply.cpp - Fuse kernels by a plan ----------------------------===//
//
// `--hfuse-apply`: reads the `#gpuopt.hfuse_plan` of the builtin module and
// builds the fused kernel (FuseKernels.cpp). Without a plan it does nothing,
// so it can run in any pipeline.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Transforms/HFuse/FusionPlan.h"
#include "gpuopt/Transforms/Passes.h"

namespace gpuopt {
#define GEN_PASS_DEF_HFUSEAPPLY
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;

namespace {
struct HFuseApplyPass : public gpuopt::impl::HFuseApplyBase<HFuseApplyPass> {
  void runOnOperation() override {
    ModuleOp root = getOperation();
    HFusePlanAttr planAttr = getHFusePlan(root);
    if (!planAttr)
      return markAllAnalysesPreserved();
    FusionPlan plan = FusionPlan::fromAttr(planAttr);
    if (failed(buildFusedKernel(root, plan)))
      return signalPassFailure();
    removeHFusePlan(root);
    numFused += plan.parts.size();
  }
};
} // namespace
