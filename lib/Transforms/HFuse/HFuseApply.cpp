//===- HFuseApply.cpp - Fuse kernels by a plan ----------------------------===//
//
// `--hfuse-apply`: reads the `gpuopt.hfuse` plan of the builtin module and
// builds the fused kernel (FuseKernels.cpp). Without a plan it does nothing,
// so it can run in any pipeline.
//
//===----------------------------------------------------------------------===//

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
    Attribute planAttr = root->getAttr(kPlanAttrName);
    if (!planAttr)
      return markAllAnalysesPreserved();
    FailureOr<FusionPlan> plan = FusionPlan::fromAttr(planAttr, root.getLoc());
    if (failed(plan))
      return signalPassFailure();
    if (failed(buildFusedKernel(root, *plan)))
      return signalPassFailure();
    root->removeAttr(kPlanAttrName);
    numFused += plan->parts.size();
  }
};
} // namespace
