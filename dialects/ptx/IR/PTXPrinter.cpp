//===- PTXPrinter.cpp - PTX printer ---------------------------------------===//
//
// Prints operands and statements as the PTX they stand for, in the spelling
// the parser (PTXParser.cpp) reads back.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXPrinter.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

void gpuopt::ptx::printOperand(Attribute operand, llvm::raw_ostream &os) {
  if (auto reg = dyn_cast<RegisterAttr>(operand)) {
    os << reg.getName();
  } else if (auto addr = dyn_cast<AddressAttr>(operand)) {
    os << '[';
    printOperand(addr.getBase(), os);
    for (auto [i, term] : llvm::enumerate(addr.getTerms()))
      os << (addr.isSubtracted(i) ? '-' : '+') << term;
    if (Attribute indices = addr.getIndices()) {
      os << ", ";
      printOperand(indices, os);
    }
    os << ']';
  } else if (auto imm = dyn_cast<IntImmAttr>(operand)) {
    if (imm.getHex())
      os << llvm::format_hex(uint64_t(imm.getValue()), 0);
    else
      os << imm.getValue();
  } else if (auto sreg = dyn_cast<SpecialRegisterAttr>(operand)) {
    os << sreg.getName();
  } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(operand)) {
    os << sym.getValue();
  } else if (auto label = dyn_cast<LabelRefAttr>(operand)) {
    os << label.getName();
  } else if (auto fp = dyn_cast<FloatImmAttr>(operand)) {
    if (fp.getWidth() == 32)
      os << "0f" << llvm::format_hex_no_prefix(fp.getBits(), 8, true);
    else
      os << "0d" << llvm::format_hex_no_prefix(fp.getBits(), 16, true);
  } else if (auto vec = dyn_cast<VectorAttr>(operand)) {
    os << '{';
    llvm::interleave(
        vec.getElements(), os, [&](Attribute a) { printOperand(a, os); }, ", ");
    os << '}';
  } else if (auto list = dyn_cast<ListAttr>(operand)) {
    os << '(';
    llvm::interleave(
        list.getElements(), os, [&](Attribute a) { printOperand(a, os); },
        ", ");
    os << ')';
  } else if (auto placeholder = dyn_cast<PlaceholderAttr>(operand)) {
    os << '{' << placeholder.getName() << '}';
  } else if (isa<SinkAttr>(operand)) {
    os << '_';
  } else if (auto neg = dyn_cast<NotAttr>(operand)) {
    os << '!';
    printOperand(neg.getOperand(), os);
  } else if (auto pair = dyn_cast<PairAttr>(operand)) {
    printOperand(pair.getFirst(), os);
    os << '|';
    printOperand(pair.getSecond(), os);
  } else {
    // The verifier rejects other attributes; never print silently wrong PTX.
    os << "<<invalid operand>>";
  }
}

void gpuopt::ptx::printInstruction(InstOp op, llvm::raw_ostream &os) {
  if (RegisterAttr guard = op.getGuardAttr()) {
    os << (op.getGuardNegated() ? "@!" : "@") << guard.getName() << ' ';
  }
  os << op.getOpcode();
  for (Attribute modifier : op.getModifiers())
    os << '.' << cast<StringAttr>(modifier).getValue();
  ArrayAttr operands = op.getPtxOperands();
  if (operands.empty())
    return;
  os << ' ';
  llvm::interleave(
      operands, os, [&](Attribute a) { printOperand(a, os); }, ", ");
}

void gpuopt::ptx::printRegisterDecl(RegOp op, llvm::raw_ostream &os) {
  os << ".reg ";
  if (auto align = op.getAlign())
    os << ".align " << *align << ' ';
  if (auto vector = op.getVector())
    os << ".v" << *vector << ' ';
  os << op.getType() << ' ' << op.getName();
  if (auto count = op.getCount())
    os << '<' << *count << '>';
}

template <typename OpT>
static void printVariableFields(OpT op, StringRef name, llvm::raw_ostream &os) {
  if (auto linkage = op.getLinkage())
    os << *linkage << ' ';
  os << op.getSpace();
  if (auto attrs = op.getVarAttributes()) {
    os << " .attribute(";
    llvm::interleave(
        *attrs, os, [&](Attribute a) { os << cast<StringAttr>(a).getValue(); },
        ", ");
    os << ')';
  }
  if (auto align = op.getAlign())
    os << " .align " << *align;
  if (auto vector = op.getVector())
    os << " .v" << *vector;
  os << ' ' << op.getType() << ' ' << name;
  for (int64_t dim : op.getDims()) {
    if (dim)
      os << '[' << dim << ']';
    else
      os << "[]";
  }
  if (auto init = op.getInitializer())
    os << " = " << *init;
}

void gpuopt::ptx::printVariable(Operation *op, llvm::raw_ostream &os) {
  if (auto global = dyn_cast<GlobalOp>(op))
    printVariableFields(global, global.getSymName(), os);
  else
    printVariableFields(cast<VarOp>(op), cast<VarOp>(op).getName(), os);
}

void gpuopt::ptx::printLoc(LocOp op, llvm::raw_ostream &os) {
  os << ".loc " << op.getFile() << ' ' << op.getLine() << ' ' << op.getColumn();
  if (auto extra = op.getExtra())
    os << ", " << *extra;
}

void gpuopt::ptx::printFile(FileOp op, llvm::raw_ostream &os) {
  os << ".file " << op.getIndex() << " \"" << op.getPath() << '"';
  if (auto extra = op.getExtra())
    os << ", " << *extra;
}

void gpuopt::ptx::printPragma(PragmaOp op, llvm::raw_ostream &os) {
  os << ".pragma ";
  llvm::interleave(
      op.getValues(), os,
      [&](Attribute a) { os << '"' << cast<StringAttr>(a).getValue() << '"'; },
      ", ");
}

void gpuopt::ptx::printSection(SectionOp op, llvm::raw_ostream &os) {
  os << ".section " << op.getName() << "\n{" << op.getContents() << "}";
}

static void printParam(ParamDeclAttr param, llvm::raw_ostream &os) {
  os << param.getSpace();
  if (param.getAlign())
    os << " .align " << param.getAlign();
  os << ' ' << param.getType();
  if (param.getIsPtr()) {
    os << " .ptr";
    if (!param.getPtrSpace().empty())
      os << ' ' << param.getPtrSpace();
    if (param.getPtrAlign())
      os << " .align " << param.getPtrAlign();
  }
  if (!param.getName().empty())
    os << ' ' << param.getName();
  if (param.getArraySize() > 0)
    os << '[' << param.getArraySize() << ']';
  else if (param.getArraySize() == 0)
    os << "[]";
}

static void printParamList(ArrayAttr params, llvm::raw_ostream &os,
                           bool multiline) {
  os << '(';
  if (multiline && !params.empty()) {
    llvm::interleave(
        params, os,
        [&](Attribute a) {
          os << "\n\t";
          printParam(cast<ParamDeclAttr>(a), os);
        },
        ",");
    os << "\n)";
    return;
  }
  llvm::interleave(
      params, os, [&](Attribute a) { printParam(cast<ParamDeclAttr>(a), os); },
      ", ");
  os << ')';
}

/// Calls `print` once per directive after a function's parameters (launch
/// bounds, then the rest as kept), with a printer of its text.
template <typename OpT>
static void forEachHeaderDirective(
    OpT op,
    llvm::function_ref<void(llvm::function_ref<void(llvm::raw_ostream &)>)>
        print) {
  auto printDims = [&](StringRef name, ArrayRef<int32_t> dims) {
    print([&](llvm::raw_ostream &os) {
      os << name << ' ';
      llvm::interleave(dims, os, ", ");
    });
  };
  if (auto maxntid = op.getMaxntid())
    printDims(".maxntid", *maxntid);
  if (auto reqntid = op.getReqntid())
    printDims(".reqntid", *reqntid);
  if (auto min = op.getMinnctapersm())
    print([&](llvm::raw_ostream &os) { os << ".minnctapersm " << *min; });
  if (auto maxnreg = op.getMaxnreg())
    print([&](llvm::raw_ostream &os) { os << ".maxnreg " << *maxnreg; });
  if (auto directives = op.getDirectives())
    for (Attribute d : *directives)
      print(
          [&](llvm::raw_ostream &os) { os << cast<StringAttr>(d).getValue(); });
}

template <typename OpT>
static void printHeader(OpT op, bool isEntry, llvm::raw_ostream &os,
                        bool multiline,
                        std::optional<StringRef> linkage = std::nullopt,
                        bool withDirectives = true) {
  if (!linkage)
    linkage = op.getLinkage();
  if (linkage && !linkage->empty())
    os << *linkage << ' ';
  os << (isEntry ? ".entry " : ".func ");
  if (auto results = op.getReturnParams()) {
    printParamList(*results, os, false);
    os << ' ';
  }
  os << op.getSymName();
  if (!op.getParams().empty() || isEntry)
    printParamList(op.getParams(), os, multiline);
  if (withDirectives)
    forEachHeaderDirective(op, [&](auto printDirective) {
      os << (multiline ? '\n' : ' ');
      printDirective(os);
    });
}

void gpuopt::ptx::printFunctionHeader(Operation *function,
                                      llvm::raw_ostream &os, bool multiline) {
  if (auto entry = dyn_cast<EntryOp>(function))
    printHeader(entry, true, os, multiline);
  else
    printHeader(cast<FuncOp>(function), false, os, multiline);
}

void gpuopt::ptx::printForwardDecl(ForwardDeclOp decl, llvm::raw_ostream &os) {
  Operation *function =
      SymbolTable::lookupNearestSymbolFrom(decl, decl.getFunctionAttr());
  // The prototype's linkage, which may differ from the definition's.
  StringRef linkage = decl.getLinkage().value_or("");
  if (auto entry = dyn_cast_or_null<EntryOp>(function))
    printHeader(entry, true, os, /*multiline=*/false, linkage,
                /*withDirectives=*/false);
  else if (auto func = dyn_cast_or_null<FuncOp>(function))
    printHeader(func, false, os, /*multiline=*/false, linkage,
                /*withDirectives=*/false);
  if (auto directives = decl.getDirectives())
    for (Attribute d : *directives)
      os << ' ' << cast<StringAttr>(d).getValue();
}

ArrayAttr gpuopt::ptx::getHeaderDirectives(Operation *function) {
  MLIRContext *context = function->getContext();
  SmallVector<Attribute> result;
  auto collect = [&](llvm::function_ref<void(llvm::raw_ostream &)> print) {
    std::string text;
    llvm::raw_string_ostream os(text);
    print(os);
    result.push_back(StringAttr::get(context, text));
  };
  if (auto entry = dyn_cast<EntryOp>(function))
    forEachHeaderDirective(entry, collect);
  else
    forEachHeaderDirective(cast<FuncOp>(function), collect);
  return result.empty() ? ArrayAttr() : ArrayAttr::get(context, result);
}
