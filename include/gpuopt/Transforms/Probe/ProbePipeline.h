//===- ProbePipeline.h - The --probe pipeline -------------------*- C++ -*-===//
//
// `--probe=SPEC[,SPEC...]`: --probe-plan, --probe-insert, --probe-lower and,
// with keep-occupancy, --probe-keep-occupancy.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBEPIPELINE_H
#define GPUOPT_TRANSFORMS_PROBE_PROBEPIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace gpuopt::probe {

/// Where the probe buffers lie (`buffer=`): one new parameter per map, or
/// the kernel's existing last parameter (Triton's profile scratch).
enum class BufferPlace { NewParams, LastParam };

/// The values of `buffer=`, for both --probe and --probe-plan.
#define GPUOPT_PROBE_BUFFER_VALUES                                             \
  ::llvm::cl::values(                                                          \
      clEnumValN(::gpuopt::probe::BufferPlace::NewParams, "new-params",        \
                 "One new .u64 parameter per map (and one per dynamic "        \
                 "capacity)"),                                                 \
      clEnumValN(::gpuopt::probe::BufferPlace::LastParam, "last-param",        \
                 "Every map in the kernel's last .u64 parameter, which the "   \
                 "launcher allocates per block (Triton's profile scratch)"))

/// The options of `--probe`, those of --probe-plan.
struct ProbeOptions : public mlir::PassPipelineOptions<ProbeOptions> {
  ListOption<std::string> specs{*this, "specs",
                                llvm::cl::desc("Probe specs: built-in names "
                                               "or YAML files")};
  ListOption<std::string> kernels{
      *this, "kernels",
      llvm::cl::desc("Probe only these kernels (default: every .entry), "
                     "named as --hfuse names them: the mangled symbol, the "
                     "function name without its parameters, or "
                     "MODULE::NAME; the others are left unchanged")};
  Option<bool> keepOccupancy{
      *this, "keep-occupancy",
      llvm::cl::desc("Ask ptxas for the registers of each kernel before and "
                     "after; when probing would lower its blocks per SM, cap "
                     "it with .maxnreg where that costs no spills"),
      llvm::cl::init(true)};
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("ptxas for keep-occupancy (default: on PATH, or the "
                     "CUDA toolkit's)")};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip for ptxas (default: the module's)")};
  Option<BufferPlace> buffer{
      *this, "buffer",
      llvm::cl::desc("Where the probe buffers lie: new-params (one new "
                     "parameter per map) or last-param (the kernel's last "
                     ".u64 parameter, Triton's profile scratch)"),
      llvm::cl::init(BufferPlace::NewParams), GPUOPT_PROBE_BUFFER_VALUES};
};

/// Adds the probe passes to `pm`.
void buildProbePipeline(mlir::OpPassManager &pm, const ProbeOptions &options);

} // namespace gpuopt::probe

namespace gpuopt {
/// Registers `--probe`.
void registerProbePipeline();
} // namespace gpuopt

#endif // GPUOPT_TRANSFORMS_PROBE_PROBEPIPELINE_H
