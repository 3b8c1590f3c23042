//===- GPUObject.h - The #gpu.object of captured kernels --------*- C++ -*-===//
//
// What --gpu-to-ptx and --ptx-to-gpu-binary both put in a gpu.binary.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_GPUTOPTX_GPUOBJECT_H
#define GPUOPT_LIB_CONVERSION_GPUTOPTX_GPUOBJECT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace gpuopt {

/// A `#gpu.object` of `data` (PTX for `Assembly`, a cubin for `Binary`) for
/// `target`. PTX carries the optimization level the driver compiles it at,
/// as upstream's gpu-module-to-binary records it.
inline mlir::gpu::ObjectAttr getGPUObject(mlir::NVVM::NVVMTargetAttr target,
                                          mlir::gpu::CompilationTarget kind,
                                          llvm::StringRef data) {
  mlir::Builder builder(target.getContext());
  mlir::DictionaryAttr properties;
  if (kind == mlir::gpu::CompilationTarget::Assembly)
    properties = builder.getDictionaryAttr(
        builder.getNamedAttr("O", builder.getI32IntegerAttr(target.getO())));
  return mlir::gpu::ObjectAttr::get(target.getContext(), target, kind,
                                    builder.getStringAttr(data), properties,
                                    /*kernels=*/nullptr);
}

} // namespace gpuopt

#endif // GPUOPT_LIB_CONVERSION_GPUTOPTX_GPUOBJECT_H
