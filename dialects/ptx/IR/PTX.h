//===- PTX.h - The ptx dialect ----------------------------------*- C++ -*-===//
//
// Declares the ptx dialect, its operand attributes and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTX_H
#define GPUOPT_DIALECT_PTX_IR_PTX_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ptx/IR/PTXDialect.h.inc"

namespace gpuopt::ptx {
/// The memory that probe code reads and writes: its record buffers and local
/// variables, disjoint from every buffer the kernel uses.
struct ProbeBufferResource
    : public mlir::SideEffects::Resource::Base<ProbeBufferResource> {
  llvm::StringRef getName() final { return "ProbeBuffer"; }
};
} // namespace gpuopt::ptx

#define GET_ATTRDEF_CLASSES
#include "ptx/IR/PTXAttrs.h.inc"

#define GET_OP_CLASSES
#include "ptx/IR/PTXOps.h.inc"

namespace gpuopt::ptx {

/// Classifies names that the statement parser could not classify alone:
/// a bare name used as an operand is a symbol unless the enclosing function
/// declares a register or a label of that name. Rewrites the operands of the
/// given instructions (all instructions in `body` when empty).
void resolveBareIdentifiers(mlir::Region &body,
                            llvm::ArrayRef<InstOp> candidates = {});

/// Verifies a module that the PTX importer built: what PTX input can get
/// wrong (unique symbols, forward declarations, launch bounds, declared
/// registers, defined labels, instruction operands and vector widths). The
/// importer creates every op through its typed builder, so the per-op ODS
/// invariants that MLIR's generic verifier rechecks op by op hold by
/// construction; skipping that walk saves a fifth of the import time.
mlir::LogicalResult verifyImportedModule(PTXModuleOp module);

/// Calls `fn` on every operand leaf of `operand`: registers, special
/// registers, symbols, immediates, labels, looking through addresses,
/// vectors, lists, negations and pairs.
void walkOperandLeaves(mlir::Attribute operand,
                       llvm::function_ref<void(mlir::Attribute)> fn);

/// Rebuilds `operand` with every leaf replaced by `fn(leaf)` (which returns
/// the leaf itself to keep it).
mlir::Attribute
mapOperandLeaves(mlir::Attribute operand,
                 llvm::function_ref<mlir::Attribute(mlir::Attribute)> fn);

/// True if `name` (with `%`, without a `.x` suffix) is a PTX special register.
bool isSpecialRegisterName(llvm::StringRef name);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTX_H
