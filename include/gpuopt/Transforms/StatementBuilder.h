//===- StatementBuilder.h - PTX statements from text -------------*- C++
//-*-===//
//
// The transforms (fusion, probes) write the PTX they add as text and build
// the statement ops through the importer's parser, so that generated code
// reads like PTX and cannot take a form imported PTX could not.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_STATEMENTBUILDER_H
#define GPUOPT_TRANSFORMS_STATEMENTBUILDER_H

#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXSyntax.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/ErrorHandling.h"

namespace gpuopt {

/// Creates statement ops from PTX text that a pass writes itself, through
/// the same parser as imported PTX, so generated code reads like PTX.
class StatementBuilder {
public:
  StatementBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  /// Later statements get `loc`.
  void setLoc(mlir::Location newLoc) { loc = newLoc; }

  ptx::InstOp inst(const llvm::Twine &text) {
    std::string str = text.str();
    ptx::Parser parser(str, builder.getContext(),
                       [&](const char *) { return loc; });
    parser.allowEofAsStatementEnd = true;
    ptx::InstructionSyntax syntax;
    if (failed(parser.parseInstruction(syntax)))
      llvm::report_fatal_error(llvm::Twine("gpu-opt generated invalid PTX: ") +
                               str);
    return ptx::InstOp::create(
        builder, loc, syntax.guard,
        syntax.guardNegated ? builder.getUnitAttr() : mlir::UnitAttr(),
        syntax.opcode, syntax.modifiers, syntax.operands);
  }

  /// `.reg .TYPE NAME`.
  void reg(llvm::StringRef type, llvm::StringRef name) {
    ptx::RegOp::create(builder, loc, builder.getStringAttr(type),
                       mlir::IntegerAttr(), builder.getStringAttr(name),
                       mlir::IntegerAttr(), mlir::IntegerAttr());
  }

  void label(llvm::StringRef name) {
    ptx::LabelOp::create(builder, loc, builder.getStringAttr(name));
  }

  mlir::OpBuilder &getBuilder() { return builder; }

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

} // namespace gpuopt

#endif // GPUOPT_TRANSFORMS_STATEMENTBUILDER_H
