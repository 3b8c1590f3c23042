//===- GPUOptDialect.td - Decisions passed between passes --*- tablegen -*-===//
//
// The gpuopt dialect has no ops: it holds the typed attributes in which one
// pass leaves a decision for another (a fusion plan, what a fused kernel is
// made of, the record buffers of a probed kernel), and the names under which
// ops carry them. Its verifier checks that each name holds its attribute.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_TD
#define GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_TD

include "mlir/IR/DialectBase.td"

def GPUOpt_Dialect : Dialect {
  let name = "gpuopt";
  let cppNamespace = "::gpuopt";
  let summary = "Typed decisions that gpu-opt's passes leave for each other";
  let description = [{
    `--hfuse-plan` writes a `#gpuopt.hfuse_plan` on the builtin module, which
    `--hfuse-apply` reads; the fused `ptx.entry` gets a `#gpuopt.fusion_info`
    that the probes and the launch manifest read; a probed entry gets its
    `#gpuopt.probe_map`s, a `#gpuopt.probe_scratch` when they lie in its
    last parameter and, when keeping its registers costs occupancy, a
    `#gpuopt.probe_occupancy`; the probe passes hand each other a
    `#gpuopt.probe_plan`; a kernel lowered from a `gpu.func` by
    `--gpu-to-ptx` keeps where it came from in a `#gpuopt.gpu_kernel`. Each attribute verifies its own parameters;
    the dialect checks that each discardable attribute name below holds the
    attribute it is for, on the op it belongs on.
  }];
  let discardableAttrs = (ins
    "::gpuopt::HFusePlanAttr":$hfuse,
    "::gpuopt::FusionInfoAttr":$fusion,
    "::mlir::ArrayAttr":$probes,
    "::gpuopt::ProbeScratchAttr":$probe_scratch,
    "::gpuopt::ProbeOccupancyAttr":$probe_occupancy,
    "::gpuopt::ProbePlanAttr":$probe_plan,
    "::gpuopt::GPUKernelAttr":$gpu_kernel
  );
  let hasOperationAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_TD
