//===- ProbePipeline.cpp - The --probe pipeline ---------------------------===//
//
// `--probe`, the user's entry point: `gpu-opt k.ptx --probe=block_sched -o
// k.probed.ptx --manifest k.json` plans (`--probe-plan`, whose options it
// takes by the same names), inserts (`--probe-insert`) and lowers
// (`--probe-lower`) the probes, then keeps the kernels' occupancy
// (`--probe-keep-occupancy`) unless keep-occupancy=false.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/Probe/ProbePipeline.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::probe;

void probe::buildProbePipeline(OpPassManager &pm, const ProbeOptions &options) {
  ProbePlanOptions plan;
  plan.specs.assign(options.specs.begin(), options.specs.end());
  plan.kernels.assign(options.kernels.begin(), options.kernels.end());
  plan.keepOccupancy = options.keepOccupancy;
  plan.ptxas = options.ptxas;
  plan.chip = options.chip;
  plan.buffer = options.buffer;
  pm.addPass(createProbePlan(std::move(plan)));
  pm.addPass(createProbeInsert());
  pm.addPass(createProbeLower());
  if (options.keepOccupancy) {
    ProbeKeepOccupancyOptions keep;
    keep.ptxas = options.ptxas;
    keep.chip = options.chip;
    pm.addPass(createProbeKeepOccupancy(std::move(keep)));
  }
}

void gpuopt::registerProbePipeline() {
  // Registered by hand rather than with PassPipelineRegistration so that
  // `--probe=block_sched,my.yaml`, as users write it, means
  // `--probe="specs=block_sched,my.yaml"`.
  registerPassPipeline(
      "probe",
      "Instrument kernels with probes that record into buffers: "
      "--probe-plan, --probe-insert, --probe-lower and, with "
      "keep-occupancy, --probe-keep-occupancy",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::string optionsText = text.str();
        if (!text.empty() && !text.contains('='))
          optionsText = "specs=" + optionsText;
        ProbeOptions options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        buildProbePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(ProbeOptions());
      });
}
