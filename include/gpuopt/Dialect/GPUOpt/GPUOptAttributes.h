//===- GPUOptAttributes.h - Typed decisions between passes ------*- C++ -*-===//
//
// The gpuopt attributes (GPUOptAttributes.td) and the typed accessors through
// which passes attach and read them, so that no pass names a decision by a
// string key:
//
//   builtin.module  gpuopt.hfuse            #gpuopt.hfuse_plan
//   ptx.entry       gpuopt.fusion           #gpuopt.fusion_info
//   ptx.entry       gpuopt.probes           [#gpuopt.probe_map, ...]
//   ptx.entry       gpuopt.probe_scratch    #gpuopt.probe_scratch
//   ptx.entry       gpuopt.probe_occupancy  #gpuopt.probe_occupancy
//   ptx.entry       gpuopt.probe_plan       #gpuopt.probe_plan
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_H
#define GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include "gpuopt/Dialect/GPUOpt/GPUOptEnums.h.inc"

namespace gpuopt::detail {
/// `[1, 2, 3]`, the list parameters' syntax.
mlir::FailureOr<llvm::SmallVector<int64_t>> parseIntList(mlir::AsmParser &p);
void printIntList(mlir::AsmPrinter &p, llvm::ArrayRef<int64_t> values);
/// `["a", "b"]`.
mlir::FailureOr<llvm::SmallVector<mlir::StringAttr>>
parseStringList(mlir::AsmParser &p);
void printStringList(mlir::AsmPrinter &p,
                     llvm::ArrayRef<mlir::StringAttr> values);
/// `true` or `false`.
mlir::FailureOr<bool> parseBool(mlir::AsmParser &p);

/// `[<...>, <...>]`: nested attributes of the dialect, each without its
/// `#gpuopt.mnemonic` prefix (which the parser also accepts).
template <typename AttrT>
mlir::FailureOr<llvm::SmallVector<AttrT>> parseAttrList(mlir::AsmParser &p) {
  llvm::SmallVector<AttrT> values;
  if (p.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Square, [&] {
        AttrT value;
        if (p.parseCustomAttributeWithFallback(value))
          return mlir::failure();
        values.push_back(value);
        return mlir::success();
      }))
    return mlir::failure();
  return values;
}
template <typename AttrT>
void printAttrList(mlir::AsmPrinter &p, llvm::ArrayRef<AttrT> values) {
  p << '[';
  llvm::interleaveComma(values, p,
                        [&](AttrT value) { p.printStrippedAttrOrType(value); });
  p << ']';
}
} // namespace gpuopt::detail

#define GET_ATTRDEF_CLASSES
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h.inc"

namespace gpuopt {
namespace ptx {
class EntryOp;
} // namespace ptx

/// The plan of `--hfuse-plan` on the builtin module (null if none).
HFusePlanAttr getHFusePlan(mlir::ModuleOp module);
void setHFusePlan(mlir::ModuleOp module, HFusePlanAttr plan);
void removeHFusePlan(mlir::ModuleOp module);

/// What a fused kernel is made of (null if it is not fused).
FusionInfoAttr getFusionInfo(ptx::EntryOp entry);
void setFusionInfo(ptx::EntryOp entry, FusionInfoAttr info);

/// The record buffers of a probed kernel, in parameter order (empty if it
/// is not probed).
llvm::SmallVector<ProbeMapAttr> getProbeMaps(ptx::EntryOp entry);
bool isProbed(ptx::EntryOp entry);
void setProbeMaps(ptx::EntryOp entry, llvm::ArrayRef<ProbeMapAttr> maps);

/// The parameter that holds a probed kernel's buffers when they lie in its
/// last parameter (null when each map has a parameter of its own).
ProbeScratchAttr getProbeScratch(ptx::EntryOp entry);
void setProbeScratch(ptx::EntryOp entry, ProbeScratchAttr scratch);
void removeProbeScratch(ptx::EntryOp entry);

/// The occupancy a probed kernel gave up to keep its registers (null if
/// none).
ProbeOccupancyAttr getProbeOccupancy(ptx::EntryOp entry);
void setProbeOccupancy(ptx::EntryOp entry, ProbeOccupancyAttr occupancy);

/// What --probe-plan decided for a kernel (null if none).
ProbePlanAttr getProbePlanAttr(ptx::EntryOp entry);
void setProbePlanAttr(ptx::EntryOp entry, ProbePlanAttr plan);
void removeProbePlanAttr(ptx::EntryOp entry);

/// The gpu.func a kernel was lowered from by --gpu-to-ptx (null if none).
GPUKernelAttr getGPUKernel(ptx::EntryOp entry);
void setGPUKernel(ptx::EntryOp entry, GPUKernelAttr kernel);

} // namespace gpuopt

#endif // GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_H
