//===- GPUOptDialect.h - Decisions passed between passes --------*- C++ -*-===//
//
// Declares the gpuopt dialect, which holds the attributes in which one pass
// leaves a decision for another (GPUOptAttributes.h), and the discardable
// attribute names they are attached under.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_H
#define GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_H

// The dialect's attribute helpers need the attribute classes complete.
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"

#include "mlir/IR/Dialect.h"

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h.inc"

#endif // GPUOPT_DIALECT_GPUOPT_GPUOPTDIALECT_H
