//===- PTXOps.cpp - ptx op assembly formats, verifiers and helpers --------===//
//
// Statement ops print as their PTX text, quoted, and parse that text back
// with the PTX parser of PTXParser.cpp, so the IR and the importer agree on
// one grammar. The probe rules live in PTXProbeVerifier.cpp.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXParser.h"
#include "ptx/IR/PTXPrinter.h"
#include "ptx/IR/PTXProbeVerifier.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

#define GET_OP_CLASSES
#include "ptx/IR/PTXOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Quoted PTX statements
//===----------------------------------------------------------------------===//

/// Parses `"<ptx text>" attr-dict` and runs `parseText` on the unquoted text
/// with a PTX parser whose diagnostics point into the string literal.
/// Ops with a region take `attributes {...}` so the dictionary is not
/// mistaken for the region.
static ParseResult
parseQuotedPTX(OpAsmParser &parser, OperationState &result,
               llvm::function_ref<ParseResult(Parser &)> parseText,
               bool attrDictWithKeyword = false) {
  SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (parser.parseString(&text))
    return failure();
  const char *base = text.data();
  Parser ptxParser(text, parser.getContext(), [&](const char *ptr) {
    return parser.getEncodedSourceLoc(
        SMLoc::getFromPointer(loc.getPointer() + 1 + (ptr - base)));
  });
  ptxParser.allowEofAsStatementEnd = true;
  ptxParser.allowPlaceholders = true;
  if (parseText(ptxParser))
    return failure();
  if (!ptxParser.getToken().is(Token::eof))
    return ptxParser.emitError("unexpected text after the PTX statement");
  return attrDictWithKeyword
             ? parser.parseOptionalAttrDictWithKeyword(result.attributes)
             : parser.parseOptionalAttrDict(result.attributes);
}

template <typename PrintFn>
static void printQuotedPTX(OpAsmPrinter &p, Operation *op, PrintFn print,
                           bool attrDictWithKeyword = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  p << ' ';
  p.printString(text);
  ArrayRef<NamedAttribute> attrs =
      op->getDiscardableAttrDictionary().getValue();
  if (attrDictWithKeyword)
    p.printOptionalAttrDictWithKeyword(attrs);
  else
    p.printOptionalAttrDict(attrs);
}

ParseResult InstOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    InstructionSyntax syntax;
    if (p.parseInstruction(syntax))
      return failure();
    auto &props = result.getOrAddProperties<Properties>();
    props.guard = syntax.guard;
    if (syntax.guardNegated)
      props.guard_negated = UnitAttr::get(p.getContext());
    props.opcode = syntax.opcode;
    props.modifiers = syntax.modifiers;
    props.ptx_operands = syntax.operands;
    return success();
  });
}

void InstOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printInstruction(*this, os); });
}

ParseResult RegOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    const char *start = p.getToken().getLoc();
    RegisterDeclSyntax syntax;
    if (p.parseRegisterDecl(syntax))
      return failure();
    if (syntax.names.size() != 1)
      return ParseResult(
          p.emitError(start, "ptx.reg declares exactly one register or range"));
    auto &props = result.getOrAddProperties<Properties>();
    props.type = syntax.type;
    props.vector = syntax.vector;
    props.align = syntax.align;
    props.name = syntax.names[0].first;
    props.count = syntax.names[0].second;
    return success();
  });
}

void RegOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printRegisterDecl(*this, os); });
}

/// Parses a variable declaration with exactly one declarator into the
/// properties shared by ptx.global and ptx.var.
template <typename OpT>
static ParseResult parseVariableOp(OpAsmParser &parser,
                                   OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    const char *start = p.getToken().getLoc();
    VariableSyntax syntax;
    if (p.parseVariable(syntax))
      return failure();
    if (syntax.declarators.size() != 1)
      return ParseResult(
          p.emitError(start, "a variable op declares exactly one name"));
    auto &props = result.getOrAddProperties<typename OpT::Properties>();
    if constexpr (std::is_same_v<OpT, GlobalOp>)
      props.sym_name = syntax.declarators[0].name;
    else
      props.name = syntax.declarators[0].name;
    props.dims = syntax.declarators[0].dims;
    props.linkage = syntax.linkage;
    props.space = syntax.space;
    props.align = syntax.align;
    props.vector = syntax.vector;
    props.type = syntax.type;
    props.initializer = syntax.initializer;
    props.var_attributes = syntax.attributes;
    return success();
  });
}

ParseResult GlobalOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseVariableOp<GlobalOp>(parser, result);
}
void GlobalOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printVariable(*this, os); });
}
ParseResult VarOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseVariableOp<VarOp>(parser, result);
}
void VarOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printVariable(*this, os); });
}

ParseResult LabelOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    if (!p.getToken().is(Token::identifier) ||
        p.getToken().spelling.starts_with("%"))
      return p.emitExpected("label name");
    result.getOrAddProperties<Properties>().name =
        StringAttr::get(p.getContext(), p.getToken().spelling);
    p.consume();
    return p.expect(Token::colon, "':'");
  });
}
void LabelOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { os << getName() << ':'; });
}

ParseResult LocOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    if (!p.getToken().isDirective(".loc"))
      return p.emitExpected("'.loc'");
    LocSyntax syntax;
    if (p.parseLoc(syntax))
      return failure();
    auto &props = result.getOrAddProperties<Properties>();
    props.file = syntax.file;
    props.line = syntax.line;
    props.column = syntax.column;
    props.extra = syntax.extra;
    return success();
  });
}
void LocOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this, [&](llvm::raw_ostream &os) { printLoc(*this, os); });
}

ParseResult FileOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    if (!p.getToken().isDirective(".file"))
      return p.emitExpected("'.file'");
    FileSyntax syntax;
    if (p.parseFile(syntax))
      return failure();
    auto &props = result.getOrAddProperties<Properties>();
    props.index = syntax.index;
    props.path = syntax.path;
    props.extra = syntax.extra;
    return success();
  });
}
void FileOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printFile(*this, os); });
}

ParseResult SectionOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    if (!p.getToken().isDirective(".section"))
      return p.emitExpected("'.section'");
    auto &props = result.getOrAddProperties<Properties>();
    return p.parseSection(props.name, props.contents);
  });
}
void SectionOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printSection(*this, os); });
}

ParseResult PragmaOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseQuotedPTX(parser, result, [&](Parser &p) -> ParseResult {
    if (!p.getToken().isDirective(".pragma"))
      return p.emitExpected("'.pragma'");
    return p.parsePragma(result.getOrAddProperties<Properties>().values);
  });
}
void PragmaOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this,
                 [&](llvm::raw_ostream &os) { printPragma(*this, os); });
}

ParseResult DirectiveOp::parse(OpAsmParser &parser, OperationState &result) {
  std::string text;
  if (parser.parseString(&text))
    return failure();
  result.getOrAddProperties<Properties>().text =
      parser.getBuilder().getStringAttr(text);
  return parser.parseOptionalAttrDict(result.attributes);
}
void DirectiveOp::print(OpAsmPrinter &p) {
  printQuotedPTX(p, *this, [&](llvm::raw_ostream &os) { os << getText(); });
}

//===----------------------------------------------------------------------===//
// ModuleOp
//===----------------------------------------------------------------------===//

void PTXModuleOp::build(OpBuilder &builder, OperationState &state,
                        StringRef name, StringRef version, ArrayAttr target,
                        IntegerAttr addressSize) {
  auto &props = state.getOrAddProperties<Properties>();
  props.sym_name = builder.getStringAttr(name);
  props.version = builder.getStringAttr(version);
  props.target = target;
  props.address_size = addressSize;
  state.addRegion()->emplaceBlock();
}

StringRef PTXModuleOp::getChip() {
  ArrayAttr target = getTarget();
  return target.empty() ? StringRef() : cast<StringAttr>(target[0]).getValue();
}

//===----------------------------------------------------------------------===//
// EntryOp / FuncOp
//===----------------------------------------------------------------------===//

template <typename OpT>
static ParseResult parseFunctionLike(OpAsmParser &parser,
                                     OperationState &result, bool isEntry) {
  if (parseQuotedPTX(
          parser, result,
          [&](Parser &p) -> ParseResult {
            const char *start = p.getToken().getLoc();
            FunctionHeaderSyntax syntax;
            if (p.parseFunctionHeader(syntax))
              return failure();
            if (syntax.isEntry != isEntry)
              return ParseResult(
                  p.emitError(start, isEntry ? "expected an '.entry' header"
                                             : "expected a '.func' header"));
            auto &props = result.getOrAddProperties<typename OpT::Properties>();
            props.sym_name = syntax.name;
            props.linkage = syntax.linkage;
            props.params = syntax.params;
            props.return_params = syntax.results;
            props.maxntid = syntax.maxntid;
            props.reqntid = syntax.reqntid;
            props.minnctapersm = syntax.minnctapersm;
            props.maxnreg = syntax.maxnreg;
            props.directives = syntax.directives;
            return success();
          },
          /*attrDictWithKeyword=*/true))
    return failure();
  Region *body = result.addRegion();
  OptionalParseResult parsed = parser.parseOptionalRegion(*body);
  if (parsed.has_value()) {
    if (failed(*parsed))
      return failure();
    // `{}` is a definition with an empty body, not a declaration.
    if (body->empty())
      body->emplaceBlock();
    resolveBareIdentifiers(*body);
  }
  return success();
}

template <typename OpT> static void printFunctionLike(OpAsmPrinter &p, OpT op) {
  printQuotedPTX(
      p, op,
      [&](llvm::raw_ostream &os) {
        printFunctionHeader(op, os, /*multiline=*/false);
      },
      /*attrDictWithKeyword=*/true);
  if (!op.hasBody())
    return;
  p << ' ';
  p.printRegion(op.getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false, /*printEmptyBlock=*/false);
}

ParseResult EntryOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseFunctionLike<EntryOp>(parser, result, /*isEntry=*/true);
}
void EntryOp::print(OpAsmPrinter &p) { printFunctionLike(p, *this); }
ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseFunctionLike<FuncOp>(parser, result, /*isEntry=*/false);
}
void FuncOp::print(OpAsmPrinter &p) { printFunctionLike(p, *this); }

/// Calls `fn` on each statement of `block` in order, with the statements of
/// a ptx.probe in place of the op: probe code prints inline, so it shares
/// the enclosing scope's registers and labels. Stops at the first failure.
template <typename Fn>
static LogicalResult forEachStatement(Block &block, Fn &&fn) {
  for (Operation &op : block) {
    if (auto probe = dyn_cast<ProbeOp>(op)) {
      if (failed(forEachStatement(*probe.getBodyBlock(), fn)))
        return failure();
    } else if (failed(fn(op))) {
      return failure();
    }
  }
  return success();
}

namespace {
/// What one `{ }` scope declares: registers (name -> range count, -1 for a
/// single register) and labels.
struct Scope {
  llvm::StringMap<int64_t> registers;
  llvm::DenseSet<StringRef> labels;
};

/// Checks that every register an instruction names is declared, and every
/// label it branches to defined, in the instruction's scope or one enclosing
/// it. Labels are scoped like registers: inlined asm blocks reuse names.
class FunctionBodyVerifier {
public:
  /// With `verifyInstructions`, each instruction's own verifier runs during
  /// the walk (for callers that do not run MLIR's generic verifier).
  FunctionBodyVerifier(Operation *function, bool verifyInstructions = false)
      : function(function), verifyInstructions(verifyInstructions) {}

  LogicalResult verify(Region &body) { return verifyBlock(body.front()); }

private:
  /// The innermost scope that declares register `name`, or -1.
  int findDeclaringScope(StringRef name) {
    for (int i = scopes.size() - 1; i >= 0; --i)
      if (declaresRegister(scopes[i]->registers, name))
        return i;
    return -1;
  }

  bool isDeclared(RegisterAttr reg) {
    if (declaredInFunctionScope.contains(reg))
      return true;
    int scope = findDeclaringScope(reg.getBaseName());
    // The function's own scope outlives the walk, so what it declares can be
    // remembered; most operands are such registers.
    if (scope == 0)
      declaredInFunctionScope.insert(reg);
    return scope >= 0;
  }

  bool isLabel(StringRef name) {
    return llvm::any_of(
        scopes, [&](Scope *scope) { return scope->labels.contains(name); });
  }

  LogicalResult verifyOperand(InstOp inst, Attribute operand) {
    if (auto reg = dyn_cast<RegisterAttr>(operand)) {
      if (!isDeclared(reg))
        return inst.emitOpError("uses undeclared register '")
               << reg.getName() << "'";
      return success();
    }
    if (auto label = dyn_cast<LabelRefAttr>(operand)) {
      if (!isLabel(label.getName()))
        return inst.emitOpError("refers to undefined label '")
               << label.getName() << "'";
      return success();
    }
    if (auto addr = dyn_cast<AddressAttr>(operand)) {
      if (failed(verifyOperand(inst, addr.getBase())))
        return failure();
      return addr.getIndices() ? verifyOperand(inst, addr.getIndices())
                               : success();
    }
    auto verifyAll = [&](ArrayAttr elements) {
      for (Attribute element : elements)
        if (failed(verifyOperand(inst, element)))
          return failure();
      return success();
    };
    if (auto vec = dyn_cast<VectorAttr>(operand))
      return verifyAll(vec.getElements());
    if (auto list = dyn_cast<ListAttr>(operand))
      return verifyAll(list.getElements());
    if (auto neg = dyn_cast<NotAttr>(operand))
      return verifyOperand(inst, neg.getOperand());
    if (auto pair = dyn_cast<PairAttr>(operand)) {
      if (failed(verifyOperand(inst, pair.getFirst())))
        return failure();
      return verifyOperand(inst, pair.getSecond());
    }
    return success();
  }

  LogicalResult verifyBlock(Block &block) {
    Scope scope;
    scopes.push_back(&scope);
    llvm::scope_exit popScope([&] { scopes.pop_back(); });
    // Labels may be used before they are defined; collect them first.
    if (failed(forEachStatement(block, [&](Operation &op) -> LogicalResult {
          if (auto label = dyn_cast<LabelOp>(op)) {
            if (!scope.labels.insert(label.getName()).second)
              return label.emitOpError("label '")
                     << label.getName() << "' is defined twice in one scope";
          } else if (auto directive = dyn_cast<DirectiveOp>(op)) {
            // `tbl: .branchtargets ...` defines the label `tbl`.
            StringRef text = directive.getText();
            size_t colon = text.find(':');
            if (colon != StringRef::npos)
              scope.labels.insert(text.take_front(colon).trim());
          }
          return success();
        })))
      return failure();
    return forEachStatement(block, [&](Operation &op) -> LogicalResult {
      if (auto reg = dyn_cast<RegOp>(op)) {
        scope.registers[reg.getName()] =
            reg.getCount() ? int64_t(*reg.getCount()) : -1;
      } else if (auto inst = dyn_cast<InstOp>(op)) {
        if (verifyInstructions && failed(inst.verify()))
          return failure();
        if (RegisterAttr guard = inst.getGuardAttr())
          if (failed(verifyOperand(inst, guard)))
            return failure();
        for (Attribute operand : inst.getPtxOperands())
          if (failed(verifyOperand(inst, operand)))
            return failure();
      } else if (auto nested = dyn_cast<ScopeOp>(op)) {
        if (failed(verifyBlock(*nested.getBodyBlock())))
          return failure();
      } else if (isa<EntryOp, FuncOp, PTXModuleOp, GlobalOp, SectionOp>(op)) {
        return op.emitOpError("is not allowed inside a function body of ")
               << function->getName();
      }
      return success();
    });
  }

  Operation *function;
  bool verifyInstructions;
  SmallVector<Scope *> scopes;
  llvm::DenseSet<Attribute> declaredInFunctionScope;
};
} // namespace

//===----------------------------------------------------------------------===//
// Probe code
//===----------------------------------------------------------------------===//

void ProbeOp::build(OpBuilder &builder, OperationState &state, StringRef point,
                    ArrayAttr buffers) {
  state.getOrAddProperties<Properties>().point = builder.getStringAttr(point);
  if (buffers)
    state.getOrAddProperties<Properties>().buffers = buffers;
  state.addRegion()->emplaceBlock();
}

//===----------------------------------------------------------------------===//
// EntryOp / FuncOp verifiers
//===----------------------------------------------------------------------===//

/// Checks a function's statements: declared registers and defined labels
/// (FunctionBodyVerifier), then the probe rules (PTXProbeVerifier.cpp).
template <typename OpT>
static LogicalResult verifyFunctionLike(OpT op,
                                        bool verifyInstructions = false) {
  if (!op.hasBody())
    return success();
  if (op.getBody().front().getNumArguments() != 0)
    return op.emitOpError("body must not have block arguments");
  if (failed(FunctionBodyVerifier(op, verifyInstructions).verify(op.getBody())))
    return failure();
  return verifyProbeIsolation(op, op.getParams(), op.getBody().front());
}

static LogicalResult verifyEntry(EntryOp op, bool verifyInstructions) {
  if (op.getReturnParams())
    return op.emitOpError("a kernel (.entry) has no return parameters");
  for (ArrayRef<int32_t> dims :
       {op.getMaxntid().value_or(ArrayRef<int32_t>()),
        op.getReqntid().value_or(ArrayRef<int32_t>())}) {
    int64_t threads = 1;
    for (int32_t d : dims) {
      if (d <= 0)
        return op.emitOpError("block dimensions must be positive");
      threads *= d;
    }
    if (threads > 1024)
      return op.emitOpError("block of ") << threads << " threads exceeds 1024";
  }
  return verifyFunctionLike(op, verifyInstructions);
}

LogicalResult EntryOp::verifyRegions() {
  return verifyEntry(*this, /*verifyInstructions=*/false);
}

static LogicalResult verifyFunc(FuncOp op, bool verifyInstructions) {
  if (op.getReqntid() || op.getMaxntid() || op.getMinnctapersm())
    return op.emitOpError("launch bounds apply only to kernels (.entry)");
  return verifyFunctionLike(op, verifyInstructions);
}

LogicalResult FuncOp::verifyRegions() {
  return verifyFunc(*this, /*verifyInstructions=*/false);
}

LogicalResult gpuopt::ptx::verifyImportedModule(PTXModuleOp module) {
  // Unique symbol names, and every ptx.declare names a function. Symbols
  // and their only users (ptx.declare) are direct children of the module,
  // so this is verifySymbolTable without its walk over every statement.
  llvm::DenseMap<StringAttr, Operation *> symbols;
  SymbolTableCollection symbolTables;
  for (Operation &op : *module.getBodyBlock()) {
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())) {
      auto [it, inserted] = symbols.try_emplace(name, &op);
      if (!inserted)
        return op.emitError()
            .append("redefinition of symbol named '", name.getValue(), "'")
            .attachNote(it->second->getLoc())
            .append("see existing symbol definition here");
    }
  }
  for (Operation &op : *module.getBodyBlock()) {
    if (auto decl = dyn_cast<ForwardDeclOp>(op)) {
      if (failed(decl.verifySymbolUses(symbolTables)))
        return failure();
    } else if (auto entry = dyn_cast<EntryOp>(op)) {
      if (failed(verifyEntry(entry, /*verifyInstructions=*/true)))
        return failure();
    } else if (auto func = dyn_cast<FuncOp>(op)) {
      if (failed(verifyFunc(func, /*verifyInstructions=*/true)))
        return failure();
    }
  }
  return success();
}

LogicalResult
ForwardDeclOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *function =
      symbolTable.lookupNearestSymbolFrom(*this, getFunctionAttr());
  if (!isa_and_nonnull<EntryOp, FuncOp>(function))
    return emitOpError("declares '")
           << getFunction() << "', which is not a function of this module";
  if (!function->getRegion(0).empty() &&
      function->getBlock() == (*this)->getBlock() &&
      function->isBeforeInBlock(*this))
    return emitOpError("must come before the definition of '")
           << getFunction() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// InstOp
//===----------------------------------------------------------------------===//

static bool isOperandAttr(Attribute attr) {
  if (isa<RegisterAttr, SpecialRegisterAttr, IntImmAttr, FloatImmAttr,
          FlatSymbolRefAttr, LabelRefAttr, SinkAttr, PlaceholderAttr>(attr))
    return true;
  auto allOperands = [](ArrayAttr elements) {
    return llvm::all_of(elements, isOperandAttr);
  };
  if (auto addr = dyn_cast<AddressAttr>(attr))
    return isa<RegisterAttr, FlatSymbolRefAttr, IntImmAttr>(addr.getBase()) &&
           (!addr.getIndices() || isOperandAttr(addr.getIndices()));
  if (auto vec = dyn_cast<VectorAttr>(attr))
    return allOperands(vec.getElements());
  if (auto list = dyn_cast<ListAttr>(attr))
    return allOperands(list.getElements());
  if (auto neg = dyn_cast<NotAttr>(attr))
    return isOperandAttr(neg.getOperand());
  if (auto pair = dyn_cast<PairAttr>(attr))
    return isOperandAttr(pair.getFirst()) && isOperandAttr(pair.getSecond());
  return false;
}

LogicalResult InstOp::verify() {
  StringRef opcode = getOpcode();
  if (opcode.empty() || !llvm::isAlpha(opcode.front()))
    return emitOpError("opcode must start with a letter, got '")
           << opcode << "'";
  for (Attribute modifier : getModifiers())
    if (cast<StringAttr>(modifier).getValue().empty())
      return emitOpError("empty opcode modifier");
  for (auto [index, operand] : llvm::enumerate(getPtxOperands()))
    if (!isOperandAttr(operand))
      return emitOpError("operand #")
             << index << " is not a PTX operand: " << operand;
  // A vector load or store moves exactly as many registers as its width.
  unsigned width = getVectorWidth();
  if (width > 1 && (opcode == "ld" || opcode == "ldu" || opcode == "st")) {
    unsigned dataIndex = opcode == "st" ? 1 : 0;
    ArrayAttr operands = getPtxOperands();
    auto vec = operands.size() > dataIndex
                   ? dyn_cast<VectorAttr>(operands[dataIndex])
                   : VectorAttr();
    if (!vec)
      return emitOpError("'.v") << width << "' needs a vector operand";
    if (vec.getElements().size() != width)
      return emitOpError("'.v")
             << width << "' needs " << width << " registers, got "
             << vec.getElements().size();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Operand leaves
//===----------------------------------------------------------------------===//

void gpuopt::ptx::walkOperandLeaves(Attribute operand,
                                    llvm::function_ref<void(Attribute)> fn) {
  if (auto addr = dyn_cast<AddressAttr>(operand)) {
    walkOperandLeaves(addr.getBase(), fn);
    if (addr.getIndices())
      walkOperandLeaves(addr.getIndices(), fn);
    return;
  }
  if (auto vec = dyn_cast<VectorAttr>(operand)) {
    for (Attribute e : vec.getElements())
      walkOperandLeaves(e, fn);
    return;
  }
  if (auto list = dyn_cast<ListAttr>(operand)) {
    for (Attribute e : list.getElements())
      walkOperandLeaves(e, fn);
    return;
  }
  if (auto array = dyn_cast<ArrayAttr>(operand)) {
    for (Attribute e : array)
      walkOperandLeaves(e, fn);
    return;
  }
  if (auto neg = dyn_cast<NotAttr>(operand))
    return walkOperandLeaves(neg.getOperand(), fn);
  if (auto pair = dyn_cast<PairAttr>(operand)) {
    walkOperandLeaves(pair.getFirst(), fn);
    walkOperandLeaves(pair.getSecond(), fn);
    return;
  }
  fn(operand);
}

Attribute
gpuopt::ptx::mapOperandLeaves(Attribute operand,
                              llvm::function_ref<Attribute(Attribute)> fn) {
  MLIRContext *ctx = operand.getContext();
  auto mapArray = [&](ArrayAttr array) {
    SmallVector<Attribute> elements;
    for (Attribute e : array)
      elements.push_back(mapOperandLeaves(e, fn));
    return ArrayAttr::get(ctx, elements);
  };
  if (auto addr = dyn_cast<AddressAttr>(operand)) {
    Attribute indices = addr.getIndices();
    return AddressAttr::get(ctx, mapOperandLeaves(addr.getBase(), fn),
                            addr.getTerms(), addr.getMinus(),
                            indices ? mapOperandLeaves(indices, fn) : indices);
  }
  if (auto vec = dyn_cast<VectorAttr>(operand))
    return VectorAttr::get(ctx, mapArray(vec.getElements()));
  if (auto list = dyn_cast<ListAttr>(operand))
    return ListAttr::get(ctx, mapArray(list.getElements()));
  if (auto array = dyn_cast<ArrayAttr>(operand))
    return mapArray(array);
  if (auto neg = dyn_cast<NotAttr>(operand))
    return NotAttr::get(ctx, mapOperandLeaves(neg.getOperand(), fn));
  if (auto pair = dyn_cast<PairAttr>(operand))
    return PairAttr::get(ctx, mapOperandLeaves(pair.getFirst(), fn),
                         mapOperandLeaves(pair.getSecond(), fn));
  return fn(operand);
}

bool InstOp::hasModifier(StringRef name) {
  return llvm::any_of(getModifiers(), [&](Attribute m) {
    return cast<StringAttr>(m).getValue() == name;
  });
}

StringRef InstOp::getStateSpace() {
  for (Attribute m : getModifiers()) {
    StringRef s = cast<StringAttr>(m).getValue();
    StringRef base = s.take_until([](char c) { return c == ':'; });
    if (base == "global" || base == "shared" || base == "local" ||
        base == "const" || base == "param")
      return s;
  }
  return {};
}

unsigned InstOp::getVectorWidth() {
  for (Attribute m : getModifiers()) {
    StringRef s = cast<StringAttr>(m).getValue();
    if (s == "v2" || s == "v4" || s == "v8")
      return s[1] - '0';
  }
  return 1;
}

static bool isTypeModifier(StringRef s) {
  static const llvm::StringSet<> types = {
      "b8",    "b16",    "b32",    "b64",  "b128",  "u8",     "u16",
      "u32",   "u64",    "s8",     "s16",  "s32",   "s64",    "f16",
      "f16x2", "bf16",   "bf16x2", "f32",  "f64",   "tf32",   "e4m3",
      "e5m2",  "e4m3x2", "e5m2x2", "e2m1", "e2m3",  "e3m2",   "e2m1x2",
      "pred",  "s4",     "u4",     "b1",   "f32x2", "ue8m0x2"};
  return types.contains(s);
}

SmallVector<StringRef> InstOp::getTypeModifiers() {
  SmallVector<StringRef> result;
  for (Attribute m : getModifiers())
    if (isTypeModifier(cast<StringAttr>(m).getValue()))
      result.push_back(cast<StringAttr>(m).getValue());
  return result;
}

StringRef InstOp::getRoundingMode() {
  for (Attribute m : getModifiers()) {
    StringRef s = cast<StringAttr>(m).getValue();
    if (llvm::is_contained(
            {"rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"},
            s))
      return s;
  }
  return {};
}

SmallVector<StringRef> InstOp::getCacheOperators() {
  SmallVector<StringRef> result;
  for (Attribute m : getModifiers()) {
    StringRef s = cast<StringAttr>(m).getValue();
    if (llvm::is_contained({"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"},
                           s) ||
        s.starts_with("L1::") || s.starts_with("L2::"))
      result.push_back(s);
  }
  return result;
}

std::string InstOp::getFullOpcode() {
  std::string result = getOpcode().str();
  for (Attribute m : getModifiers())
    (result += '.') += cast<StringAttr>(m).getValue();
  return result;
}

//===----------------------------------------------------------------------===//
// Bare identifier resolution
//===----------------------------------------------------------------------===//

namespace {
/// Resolves bare names scope by scope: a name is a register or a label only
/// where a declaration of it is visible (its `{ }` scope and those nested in
/// it), so a kernel parameter `p` stays a symbol outside the inline-asm block
/// that declares a predicate `p`.
class BareIdentifierResolver {
public:
  explicit BareIdentifierResolver(const llvm::DenseSet<Operation *> *only)
      : only(only) {}

  void resolveBlock(Block &block) {
    Scope &scope = scopes.emplace_back();
    (void)forEachStatement(block, [&](Operation &op) {
      if (auto label = dyn_cast<LabelOp>(op))
        scope.labels.insert(label.getName());
      else if (auto reg = dyn_cast<RegOp>(op);
               reg && !reg.getName().starts_with("%"))
        scope.registers[reg.getName()] =
            reg.getCount() ? int64_t(*reg.getCount()) : -1;
      return success();
    });
    (void)forEachStatement(block, [&](Operation &op) {
      if (auto nested = dyn_cast<ScopeOp>(op))
        resolveBlock(*nested.getBodyBlock());
      else if (auto inst = dyn_cast<InstOp>(op);
               inst && (!only || only->contains(inst)))
        update(inst);
      return success();
    });
    scopes.pop_back();
  }

private:
  bool isRegister(StringRef name) const {
    return llvm::any_of(scopes, [&](const Scope &scope) {
      return declaresRegister(scope.registers, name);
    });
  }
  bool isLabel(StringRef name) const {
    return llvm::any_of(scopes, [&](const Scope &scope) {
      return scope.labels.contains(name);
    });
  }

  Attribute resolve(Attribute a) {
    if (auto sym = dyn_cast<FlatSymbolRefAttr>(a)) {
      StringRef name = sym.getValue();
      if (isRegister(name.take_until([](char c) { return c == '.'; })))
        return RegisterAttr::get(context, name);
      if (isLabel(name))
        return LabelRefAttr::get(context, name);
      return a;
    }
    auto resolveAll = [&](ArrayAttr elements) {
      SmallVector<Attribute> result;
      for (Attribute e : elements)
        result.push_back(resolve(e));
      return ArrayAttr::get(context, result);
    };
    if (auto addr = dyn_cast<AddressAttr>(a))
      return AddressAttr::get(
          context, resolve(addr.getBase()), addr.getTerms(), addr.getMinus(),
          addr.getIndices() ? resolve(addr.getIndices()) : Attribute());
    if (auto vec = dyn_cast<VectorAttr>(a))
      return VectorAttr::get(context, resolveAll(vec.getElements()));
    if (auto list = dyn_cast<ListAttr>(a))
      return ListAttr::get(context, resolveAll(list.getElements()));
    if (auto neg = dyn_cast<NotAttr>(a))
      return NotAttr::get(context, resolve(neg.getOperand()));
    if (auto pair = dyn_cast<PairAttr>(a))
      return PairAttr::get(context, resolve(pair.getFirst()),
                           resolve(pair.getSecond()));
    return a;
  }

  /// Whether some bare name in `a` names a register or label in scope. Most
  /// bare names are symbols (`ld.param [k_param_0]`), whose operands are
  /// then left as they are instead of being rebuilt and uniqued again.
  bool namesRegisterOrLabel(Attribute a) const {
    if (auto sym = dyn_cast<FlatSymbolRefAttr>(a)) {
      StringRef name = sym.getValue();
      return isRegister(name.take_until([](char c) { return c == '.'; })) ||
             isLabel(name);
    }
    auto any = [&](ArrayAttr elements) {
      return llvm::any_of(elements,
                          [&](Attribute e) { return namesRegisterOrLabel(e); });
    };
    if (auto addr = dyn_cast<AddressAttr>(a))
      return namesRegisterOrLabel(addr.getBase()) ||
             (addr.getIndices() && namesRegisterOrLabel(addr.getIndices()));
    if (auto vec = dyn_cast<VectorAttr>(a))
      return any(vec.getElements());
    if (auto list = dyn_cast<ListAttr>(a))
      return any(list.getElements());
    if (auto neg = dyn_cast<NotAttr>(a))
      return namesRegisterOrLabel(neg.getOperand());
    if (auto pair = dyn_cast<PairAttr>(a))
      return namesRegisterOrLabel(pair.getFirst()) ||
             namesRegisterOrLabel(pair.getSecond());
    return false;
  }

  void update(InstOp inst) {
    ArrayAttr operands = inst.getPtxOperands();
    if (llvm::none_of(operands,
                      [&](Attribute a) { return namesRegisterOrLabel(a); }))
      return;
    context = inst->getContext();
    SmallVector<Attribute> resolved;
    for (Attribute operand : operands)
      resolved.push_back(resolve(operand));
    ArrayAttr result = ArrayAttr::get(context, resolved);
    if (result != operands)
      inst.setPtxOperandsAttr(result);
  }

  struct Scope {
    llvm::StringMap<int64_t> registers;
    llvm::DenseSet<StringRef> labels;
  };
  SmallVector<Scope, 4> scopes;
  const llvm::DenseSet<Operation *> *only;
  MLIRContext *context = nullptr;
};
} // namespace

void gpuopt::ptx::resolveBareIdentifiers(Region &body,
                                         ArrayRef<InstOp> candidates) {
  if (body.empty())
    return;
  llvm::DenseSet<Operation *> only;
  for (InstOp inst : candidates)
    only.insert(inst);
  BareIdentifierResolver(candidates.empty() ? nullptr : &only)
      .resolveBlock(body.front());
}
