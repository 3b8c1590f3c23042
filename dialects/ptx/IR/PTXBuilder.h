//===- PTXBuilder.h - Typed construction of PTX statements ------*- C++ -*-===//
//
// Passes build the instructions they add from an opcode, its modifiers and
// typed operand attributes, without writing PTX text and parsing it back:
//
//   PTXBuilder pb(builder, loc);
//   pb.inst("ld").mod("global").v(2).f(32).create(
//       {pb.vec({pb.reg("%f1"), pb.reg("%f2")}), pb.addr(pb.reg("%rd1"), 8)});
//   pb.inst("bra").guard(pb.reg("%p1"), /*negated=*/true)
//       .create({pb.labelRef("$L__BB0_2")});
//
// A built op is the op the statement parser makes from the same PTX (same
// attributes, printed the same). Opcode and modifiers are checked against the
// opcode table (PTXOpcodes.h) as the parser checks them, so a wrong modifier
// fails the pass's tests instead of producing PTX that ptxas refuses.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXBUILDER_H
#define GPUOPT_DIALECT_PTX_IR_PTXBUILDER_H

#include "ptx/IR/PTX.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace gpuopt::ptx {

/// Checks an opcode base and its modifiers (without dots) against the opcode
/// table, as the statement parser does; returns ptxas's objection, if any.
/// Opcodes missing from the table pass (as they import with a warning).
std::optional<std::string>
checkInstruction(llvm::StringRef opcode,
                 llvm::ArrayRef<llvm::StringRef> modifiers);

/// An instruction operand: an operand attribute, or an integer written as a
/// decimal immediate (`create({dst, src, 4})`).
class Operand {
public:
  Operand(mlir::Attribute attr) : attr(attr) {}
  Operand(int64_t value) : value(value) {}
  Operand(int value) : value(value) {}
  Operand(unsigned value) : value(value) {}
  Operand(uint64_t value) : value(int64_t(value)) {}

  /// The attribute: `attr`, or `#ptx.int<value>`.
  mlir::Attribute get(mlir::MLIRContext *context) const;

private:
  mlir::Attribute attr;
  int64_t value = 0;
};

class PTXBuilder;

/// One instruction being built: the opcode, then its modifiers in the order
/// PTX writes them, an optional guard, then the operands in `create`.
class InstBuilder {
public:
  /// A modifier, without its dot: `global`, `lo`, `L1::evict_last`.
  InstBuilder &mod(llvm::StringRef modifier);
  InstBuilder &mods(llvm::ArrayRef<llvm::StringRef> modifiers);
  /// `.v2`, `.v4`, `.v8`.
  InstBuilder &v(unsigned width);
  /// Type modifiers: `.b32`, `.u64`, `.s16`, `.f32`.
  InstBuilder &b(unsigned bits) { return type('b', bits); }
  InstBuilder &u(unsigned bits) { return type('u', bits); }
  InstBuilder &s(unsigned bits) { return type('s', bits); }
  InstBuilder &f(unsigned bits) { return type('f', bits); }
  /// `.pred`.
  InstBuilder &pred() { return mod("pred"); }
  /// `@%p` or, negated, `@!%p`.
  InstBuilder &guard(RegisterAttr predicate, bool negated = false);

  /// Creates the instruction at the builder's insertion point. Modifiers the
  /// opcode table refuses are a bug of the pass: a fatal error, after the
  /// diagnostic at the builder's location.
  InstOp create(llvm::ArrayRef<mlir::Attribute> operands);
  InstOp create(std::initializer_list<Operand> operands = {});
  /// As create, but a refused modifier is reported (at the builder's
  /// location) and gives failure.
  mlir::FailureOr<InstOp> tryCreate(llvm::ArrayRef<mlir::Attribute> operands);

  /// The full opcode, e.g. "ld.global.v2.f32", for messages.
  std::string getFullOpcode() const;

private:
  friend class PTXBuilder;
  InstBuilder(PTXBuilder &builder, llvm::StringRef opcode)
      : builder(builder), opcode(opcode) {}
  InstBuilder &type(char kind, unsigned bits);

  PTXBuilder &builder;
  llvm::StringRef opcode;
  llvm::SmallVector<mlir::StringAttr, 6> modifiers;
  RegisterAttr guardReg;
  bool guardNegated = false;
};

/// Builds PTX statements (instructions, register declarations, labels) and
/// operand attributes at an OpBuilder's insertion point.
class PTXBuilder {
public:
  PTXBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::MLIRContext *getContext() { return builder.getContext(); }
  mlir::Location getLoc() const { return loc; }
  /// Later statements get `loc`.
  void setLoc(mlir::Location newLoc) { loc = newLoc; }

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  /// Starts an instruction with opcode base `opcode` (`ld`, `mad`, `bra`).
  InstBuilder inst(llvm::StringRef opcode) {
    return InstBuilder(*this, opcode);
  }

  /// `.reg TYPE NAME`, with the type's dot (`.b32`, `.pred`); returns the
  /// register as an operand.
  RegisterAttr reg(llvm::StringRef type, llvm::StringRef name);
  /// The label `NAME:`.
  LabelOp label(llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // Operands
  //===--------------------------------------------------------------------===//

  /// A register, named with its `%` when it has one (`%r1`, `p`).
  RegisterAttr reg(llvm::StringRef name);
  /// A special register, `%tid.x`.
  SpecialRegisterAttr sreg(llvm::StringRef name);
  /// What the parser makes of `%name`: a special register or a register.
  mlir::Attribute regOrSreg(llvm::StringRef name);
  /// An integer immediate; `hex` prints it in hexadecimal.
  IntImmAttr imm(int64_t value, bool hex = false);
  /// `0fXXXXXXXX` and `0dXXXXXXXXXXXXXXXX`.
  FloatImmAttr f32(float value);
  FloatImmAttr f64(double value);
  /// A variable, parameter or function.
  mlir::FlatSymbolRefAttr sym(llvm::StringRef name);
  /// `[base+offset]` (`[base]` for 0); base is a register, symbol or
  /// integer.
  AddressAttr addr(mlir::Attribute base, int64_t offset = 0);
  /// `[symbol+offset]`.
  AddressAttr addr(llvm::StringRef symbol, int64_t offset = 0);
  /// A branch target.
  LabelRefAttr labelRef(llvm::StringRef name);
  /// `{a, b, ...}`.
  VectorAttr vec(llvm::ArrayRef<mlir::Attribute> elements);
  /// `(a, b, ...)`, as in call sequences.
  ListAttr list(llvm::ArrayRef<mlir::Attribute> elements);
  /// `!%p`.
  NotAttr negate(mlir::Attribute operand);
  /// `%p|%q`.
  PairAttr pair(mlir::Attribute first, mlir::Attribute second);
  /// `_`.
  SinkAttr sink();

private:
  friend class InstBuilder;
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXBUILDER_H
