//===- KernelLookup.h - Find a kernel by the name a user gives --*- C++ -*-===//
//
// Users name kernels the way they wrote them (`gelu_forward_kernel2`), PTX
// names them mangled (`_Z20gelu_forward_kernel2PfPKfi`). `--hfuse` and
// `--probe` resolve `kernels=` and the config's names through these helpers,
// so that both accept the same names and say the same things when a name
// matches nothing or more than one entry.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_KERNELLOOKUP_H
#define GPUOPT_ANALYSIS_KERNELLOOKUP_H

#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace gpuopt {

/// The demangled function name of an entry without its parameter list
/// (`ns::kernel<4>` for `_ZN2ns6kernelILi4EEEvPf`), or the name itself when it
/// is not an Itanium-mangled name.
std::string getDemangledKernelName(llvm::StringRef symbol);

/// Finds the one `ptx.entry` with a body that `name` names in the ptx.modules
/// of `root` (only in module `moduleName` when it is not empty). The symbol
/// wins over the function name, and the function name over the base name.
/// Emits an error at `loc` when no entry matches (listing the entries it could
/// have named) or when several do (listing them, with what to write instead),
/// and returns failure.
mlir::FailureOr<ptx::EntryOp> lookupKernel(mlir::ModuleOp root,
                                           llvm::StringRef moduleName,
                                           llvm::StringRef name,
                                           mlir::Location loc);

/// A kernel name as users write it in `kernels=` options, as (module, name)
/// for lookupKernel: `MODULE::NAME` names module MODULE's kernel when MODULE
/// is one of the modules; otherwise the module is empty and the whole name is
/// the kernel's (a demangled `ns::kernel` is not split).
std::pair<llvm::StringRef, llvm::StringRef>
splitModuleName(mlir::ModuleOp root, llvm::StringRef name);

} // namespace gpuopt

#endif // GPUOPT_ANALYSIS_KERNELLOOKUP_H
