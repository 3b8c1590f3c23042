//===- PTXNamespace.cpp - Fresh register, label and variable names --------===//
//
// Seeding walks every statement op: the names are few per function next to
// its instructions, so one walk per namespace costs little.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXNamespace.h"
#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

void PTXNamespace::addRange(StringRef prefix, int64_t count) {
  int64_t &known = ranges[prefix];
  known = std::max(known, count);
}

bool PTXNamespace::contains(StringRef name) const {
  return names.contains(name) || declaresRegister(ranges, name);
}

bool PTXNamespace::containsPrefix(StringRef prefix) const {
  for (const auto &name : names)
    if (name.getKey().starts_with(prefix))
      return true;
  for (const auto &range : ranges) {
    StringRef rangePrefix = range.getKey();
    if (range.getValue() <= 0)
      continue;
    if (rangePrefix.starts_with(prefix))
      return true;
    StringRef rest = prefix;
    if (rest.consume_front(rangePrefix) &&
        llvm::all_of(rest, [](char c) { return llvm::isDigit(c); }))
      return true;
  }
  return false;
}

void PTXNamespace::add(Operation *root) {
  auto addOperand = [&](Attribute operand) {
    walkOperandLeaves(operand, [&](Attribute leaf) {
      if (auto reg = dyn_cast<RegisterAttr>(leaf))
        add(reg.getBaseName());
      else if (auto label = dyn_cast<LabelRefAttr>(leaf))
        add(label.getName());
      else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
        add(sym.getValue());
    });
  };
  auto addParams = [&](ArrayAttr params) {
    if (params)
      for (Attribute param : params)
        add(cast<ParamDeclAttr>(param).getName());
  };
  root->walk([&](Operation *op) {
    if (auto symName =
            op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      add(symName.getValue());
    if (auto inst = dyn_cast<InstOp>(op)) {
      if (RegisterAttr guard = inst.getGuardAttr())
        add(guard.getName());
      for (Attribute operand : inst.getPtxOperands())
        addOperand(operand);
    } else if (auto reg = dyn_cast<RegOp>(op)) {
      if (std::optional<int64_t> count = reg.getCount())
        addRange(reg.getName(), *count);
      else
        add(reg.getName());
    } else if (auto label = dyn_cast<LabelOp>(op)) {
      add(label.getName());
    } else if (auto var = dyn_cast<VarOp>(op)) {
      add(var.getName());
    } else if (auto directive = dyn_cast<DirectiveOp>(op)) {
      // `$L_tbl: .branchtargets ...` defines a label.
      StringRef text = directive.getText();
      size_t colon = text.find(':');
      if (colon != StringRef::npos && !text.starts_with("."))
        add(text.take_front(colon).trim());
    } else if (auto entry = dyn_cast<EntryOp>(op)) {
      addParams(entry.getParams());
      addParams(entry.getReturnParamsAttr());
    } else if (auto func = dyn_cast<FuncOp>(op)) {
      addParams(func.getParams());
      addParams(func.getReturnParamsAttr());
    }
  });
}

StringRef PTXNamespace::newName(const llvm::Twine &stem, StringRef separator) {
  llvm::SmallString<64> stemStorage;
  StringRef stemName = stem.toStringRef(stemStorage);
  if (!contains(stemName))
    return names.insert(stemName).first->getKey();
  llvm::SmallString<64> key(stemName);
  key += '\0';
  key += separator;
  unsigned &next = nextSuffix[key];
  for (next = std::max(next, 1u);; ++next) {
    std::string candidate = (stemName + separator + llvm::Twine(next)).str();
    if (!contains(candidate)) {
      ++next;
      return names.insert(candidate).first->getKey();
    }
  }
}

void gpuopt::ptx::renameSymbolUses(
    Operation *root, const llvm::StringMap<std::string> &renames) {
  if (renames.empty())
    return;
  MLIRContext *ctx = root->getContext();
  root->walk([&](Operation *op) {
    if (auto inst = dyn_cast<InstOp>(op)) {
      SmallVector<Attribute> operands;
      for (Attribute operand : inst.getPtxOperands())
        operands.push_back(
            mapOperandLeaves(operand, [&](Attribute leaf) -> Attribute {
              if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
                if (auto it = renames.find(sym.getValue()); it != renames.end())
                  return FlatSymbolRefAttr::get(ctx, it->second);
              return leaf;
            }));
      inst.setPtxOperandsAttr(ArrayAttr::get(ctx, operands));
    } else if (auto decl = dyn_cast<ForwardDeclOp>(op)) {
      if (auto it = renames.find(decl.getFunction()); it != renames.end())
        decl.setFunction(it->second);
    }
  });
}
