//===- PTXPrinter.h - PTX printer -------------------------------*- C++ -*-===//
//
// Prints ptx operand attributes and statement ops as PTX text: the exporter
// writes modules with it, and the ops' custom assembly formats print their
// quoted PTX with it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXPRINTER_H
#define GPUOPT_DIALECT_PTX_IR_PTXPRINTER_H

#include "ptx/IR/PTX.h"

#include "llvm/Support/raw_ostream.h"

namespace gpuopt::ptx {

/// Prints operands and statements as PTX.
void printOperand(mlir::Attribute operand, llvm::raw_ostream &os);
void printInstruction(InstOp op, llvm::raw_ostream &os);
void printRegisterDecl(RegOp op, llvm::raw_ostream &os);
void printVariable(mlir::Operation *globalOrVar, llvm::raw_ostream &os);
void printLoc(LocOp op, llvm::raw_ostream &os);
void printFile(FileOp op, llvm::raw_ostream &os);
void printPragma(PragmaOp op, llvm::raw_ostream &os);
void printSection(SectionOp op, llvm::raw_ostream &os);
/// Prints the header of a .entry/.func; `multiline` puts each parameter on
/// its own line as compilers do.
void printFunctionHeader(mlir::Operation *function, llvm::raw_ostream &os,
                         bool multiline);
/// Prints the prototype a ptx.declare stands for (without the `;`).
void printForwardDecl(ForwardDeclOp decl, llvm::raw_ostream &os);
/// The directives after a function's parameters as PTX text, one string each
/// (`.maxntid 128, 1, 1`, `.noreturn`); null when there are none.
mlir::ArrayAttr getHeaderDirectives(mlir::Operation *function);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXPRINTER_H
