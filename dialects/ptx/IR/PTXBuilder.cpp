//===- PTXBuilder.cpp - Typed construction of PTX statements --------------===//
//
// The builder makes the attributes the statement parser makes from the same
// text (see Parser::parseInstruction and Parser::parseOperand), so a built
// instruction and a parsed one are the same op.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXBuilder.h"
#include "ptx/IR/PTXOpcodes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

std::optional<std::string>
gpuopt::ptx::checkInstruction(StringRef opcode, ArrayRef<StringRef> modifiers) {
  if (opcode.empty() || !llvm::isAlpha(opcode.front()))
    return ("opcode must start with a letter, got '" + opcode + "'").str();
  for (StringRef modifier : modifiers)
    if (modifier.empty() || modifier.starts_with("."))
      return ("modifier '" + modifier + "' of '" + opcode +
              "' must be non-empty and without its dot")
          .str();
  const OpcodeInfo *info = lookupOpcode(opcode);
  if (!info || modifiers.empty())
    return std::nullopt;
  if (std::optional<ModifierError> error = checkModifiers(*info, modifiers))
    return error->message;
  return std::nullopt;
}

Attribute Operand::get(MLIRContext *context) const {
  if (attr)
    return attr;
  return IntImmAttr::get(context, value, /*hex=*/false);
}

//===----------------------------------------------------------------------===//
// InstBuilder
//===----------------------------------------------------------------------===//

InstBuilder &InstBuilder::mod(StringRef modifier) {
  modifiers.push_back(StringAttr::get(builder.getContext(), modifier));
  return *this;
}

InstBuilder &InstBuilder::mods(ArrayRef<StringRef> names) {
  for (StringRef name : names)
    mod(name);
  return *this;
}

InstBuilder &InstBuilder::v(unsigned width) {
  assert((width == 2 || width == 4 || width == 8) && "vector width");
  return mod(("v" + llvm::Twine(width)).str());
}

InstBuilder &InstBuilder::type(char kind, unsigned bits) {
  return mod((llvm::Twine(kind) + llvm::Twine(bits)).str());
}

InstBuilder &InstBuilder::guard(RegisterAttr predicate, bool negated) {
  guardReg = predicate;
  guardNegated = negated;
  return *this;
}

std::string InstBuilder::getFullOpcode() const {
  std::string result = opcode.str();
  for (StringAttr modifier : modifiers)
    result += "." + modifier.getValue().str();
  return result;
}

FailureOr<InstOp> InstBuilder::tryCreate(ArrayRef<Attribute> operands) {
  OpBuilder &b = builder.getBuilder();
  SmallVector<StringRef, 6> names;
  SmallVector<Attribute, 6> modifierAttrs;
  for (StringAttr modifier : modifiers) {
    names.push_back(modifier.getValue());
    modifierAttrs.push_back(modifier);
  }
  if (std::optional<std::string> error = checkInstruction(opcode, names)) {
    mlir::emitError(builder.getLoc())
        << "gpu-opt built an invalid instruction '" << getFullOpcode()
        << "': " << *error;
    return failure();
  }
  return InstOp::create(b, builder.getLoc(), guardReg,
                        guardNegated ? b.getUnitAttr() : UnitAttr(),
                        b.getStringAttr(opcode), b.getArrayAttr(modifierAttrs),
                        b.getArrayAttr(operands));
}

InstOp InstBuilder::create(ArrayRef<Attribute> operands) {
  FailureOr<InstOp> op = tryCreate(operands);
  if (failed(op))
    llvm::report_fatal_error(
        llvm::Twine("gpu-opt built an invalid instruction: ") +
        getFullOpcode());
  return *op;
}

InstOp InstBuilder::create(std::initializer_list<Operand> operands) {
  SmallVector<Attribute, 4> attrs;
  for (const Operand &operand : operands)
    attrs.push_back(operand.get(builder.getContext()));
  return create(ArrayRef<Attribute>(attrs));
}

//===----------------------------------------------------------------------===//
// PTXBuilder
//===----------------------------------------------------------------------===//

RegisterAttr PTXBuilder::reg(StringRef type, StringRef name) {
  assert(type.starts_with(".") && "a register type is written with its dot");
  RegOp::create(builder, loc, builder.getStringAttr(type), IntegerAttr(),
                builder.getStringAttr(name), IntegerAttr(), IntegerAttr());
  return reg(name);
}

LabelOp PTXBuilder::label(StringRef name) {
  return LabelOp::create(builder, loc, builder.getStringAttr(name));
}

RegisterAttr PTXBuilder::reg(StringRef name) {
  assert(!isSpecialRegisterName(name) && "use sreg() for special registers");
  return RegisterAttr::get(getContext(), name);
}

SpecialRegisterAttr PTXBuilder::sreg(StringRef name) {
  assert(isSpecialRegisterName(name) && "not a special register");
  return SpecialRegisterAttr::get(getContext(), name);
}

Attribute PTXBuilder::regOrSreg(StringRef name) {
  if (isSpecialRegisterName(name))
    return SpecialRegisterAttr::get(getContext(), name);
  return RegisterAttr::get(getContext(), name);
}

IntImmAttr PTXBuilder::imm(int64_t value, bool hex) {
  return IntImmAttr::get(getContext(), value, hex);
}

FloatImmAttr PTXBuilder::f32(float value) {
  return FloatImmAttr::get(getContext(), llvm::bit_cast<uint32_t>(value), 32);
}

FloatImmAttr PTXBuilder::f64(double value) {
  return FloatImmAttr::get(getContext(), llvm::bit_cast<uint64_t>(value), 64);
}

FlatSymbolRefAttr PTXBuilder::sym(StringRef name) {
  return FlatSymbolRefAttr::get(getContext(), name);
}

AddressAttr PTXBuilder::addr(Attribute base, int64_t offset) {
  return AddressAttr::get(getContext(), base, offset);
}

AddressAttr PTXBuilder::addr(StringRef symbol, int64_t offset) {
  return addr(sym(symbol), offset);
}

LabelRefAttr PTXBuilder::labelRef(StringRef name) {
  return LabelRefAttr::get(getContext(), name);
}

VectorAttr PTXBuilder::vec(ArrayRef<Attribute> elements) {
  return VectorAttr::get(getContext(), builder.getArrayAttr(elements));
}

ListAttr PTXBuilder::list(ArrayRef<Attribute> elements) {
  return ListAttr::get(getContext(), builder.getArrayAttr(elements));
}

NotAttr PTXBuilder::negate(Attribute operand) {
  return NotAttr::get(getContext(), operand);
}

PairAttr PTXBuilder::pair(Attribute first, Attribute second) {
  return PairAttr::get(getContext(), first, second);
}

SinkAttr PTXBuilder::sink() { return SinkAttr::get(getContext()); }
