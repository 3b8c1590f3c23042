//===- PTXOps.cpp - ptx op assembly formats, verifiers and helpers --------===//
//
// Statement ops print as their PTX text, quoted, and parse that text back
// with the PTX parser of PTXSyntax.cpp, so the IR and the importer agree on
// one grammar.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXSyntax.h"

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
    auto popScope = llvm::make_scope_exit([&] { scopes.pop_back(); });
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

bool ProbeOp::isForbiddenOpcode(StringRef opcode) {
  static constexpr StringLiteral forbidden[] = {"ld",
                                                "ldu",
                                                "st",
                                                "atom",
                                                "red",
                                                "bar",
                                                "barrier",
                                                "bra",
                                                "brx",
                                                "call",
                                                "ret",
                                                "exit",
                                                "trap",
                                                "membar",
                                                "fence",
                                                "mbarrier",
                                                "cp",
                                                "tensormap",
                                                "wgmma",
                                                "setmaxnreg",
                                                "stmatrix",
                                                "ldmatrix",
                                                "prefetch",
                                                "prefetchu",
                                                "discard",
                                                "applypriority",
                                                "createpolicy",
                                                "multimem",
                                                "griddepcontrol",
                                                "elect",
                                                "vote",
                                                "shfl",
                                                "match",
                                                "redux",
                                                "activemask",
                                                "nanosleep",
                                                "pmevent",
                                                "suld",
                                                "sust",
                                                "sured",
                                                "tex",
                                                "tld4",
                                                "txq",
                                                "suq",
                                                "istypep",
                                                "alloca",
                                                "stackrestore",
                                                "stacksave",
                                                "clusterlaunchcontrol",
                                                "tcgen05",
                                                "mma",
                                                "wmma",
                                                "movmatrix",
                                                "brkpt",
                                                "addc",
                                                "subc",
                                                "madc"};
  return llvm::is_contained(forbidden, opcode);
}

/// The name a `bra` goes to, whether the parser took it for a label or a
/// symbol.
static StringRef getBranchTarget(InstOp inst) {
  ArrayAttr operands = inst.getPtxOperands();
  if (operands.empty())
    return {};
  if (auto label = dyn_cast<LabelRefAttr>(operands[0]))
    return label.getName();
  if (auto sym = dyn_cast<FlatSymbolRefAttr>(operands[0]))
    return sym.getValue();
  return {};
}

/// Whether `callee` is probe code: a `.func` without results whose body is
/// one ptx.probe followed by `ret` (the exit function --probe builds).
static bool isProbeFunction(Operation *callee) {
  auto func = dyn_cast_or_null<FuncOp>(callee);
  if (!func || !func.hasBody() || func.getReturnParams())
    return false;
  SmallVector<Operation *> statements;
  for (Operation &op : *func.getBodyBlock())
    if (!isa<LocOp>(op))
      statements.push_back(&op);
  auto ret =
      statements.size() == 2 ? dyn_cast<InstOp>(statements[1]) : InstOp();
  return isa<ProbeOp>(statements[0]) && ret && ret.getOpcode() == "ret" &&
         !ret.getGuard();
}

/// Only probe code calls probe functions (or names them at all): they store
/// through their buffer parameters, which their callers must fill with the
/// probe's buffers (verifyProbeAddresses checks those calls).
LogicalResult PTXModuleOp::verifyRegions() {
  llvm::StringSet<> probeFunctions;
  for (FuncOp func : getBody().getOps<FuncOp>())
    if (isProbeFunction(func))
      probeFunctions.insert(func.getSymName());
  if (probeFunctions.empty())
    return success();
  WalkResult result = walk([&](InstOp inst) -> WalkResult {
    if (inst->getParentOfType<ProbeOp>())
      return WalkResult::advance();
    StringRef named;
    walkOperandLeaves(inst.getPtxOperandsAttr(), [&](Attribute leaf) {
      if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf);
          sym && probeFunctions.contains(sym.getValue()))
        named = sym.getValue();
    });
    if (named.empty())
      return WalkResult::advance();
    inst.emitOpError("names the probe function '")
        << named << "' outside probe code; only probes call probe functions";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Checks the statements of a probe (and of `{ }` scopes in it, which hold
/// call sequences) on their own; what they may touch is checked for the
/// whole function (verifyProbeIsolation), which knows the probe's
/// registers. `labels`: the probe's labels visible in `block` (its own and
/// those of the enclosing blocks up to the probe: a label inside a `{ }`
/// is not visible outside it, where a branch to its name would reach a
/// kernel label).
static LogicalResult verifyProbeStatements(Block &block,
                                           llvm::DenseSet<StringRef> labels) {
  for (LabelOp label : block.getOps<LabelOp>())
    labels.insert(label.getName());
  for (Operation &op : block) {
    if (auto scope = dyn_cast<ScopeOp>(op)) {
      if (failed(verifyProbeStatements(*scope.getBodyBlock(), labels)))
        return failure();
      continue;
    }
    if (auto var = dyn_cast<VarOp>(op)) {
      if (var.getSpace() != ".local" && var.getSpace() != ".param")
        return var.emitOpError("in a probe declares ")
               << var.getSpace()
               << " memory; probe code declares only .local variables and "
                  ".param call arguments";
      continue;
    }
    if (isa<RegOp, LabelOp>(op))
      continue;
    auto inst = dyn_cast<InstOp>(op);
    if (!inst)
      return op.emitOpError("is not allowed in a probe: probe code holds only "
                            "instructions, register and variable "
                            "declarations, labels and call scopes");
    StringRef opcode = inst.getOpcode();
    StringRef space = inst.getStateSpace();
    if (opcode == "bra") {
      if (!labels.contains(getBranchTarget(inst)))
        return inst.emitOpError("in a probe branches outside it: probe code "
                                "may branch only to its own labels, so that "
                                "the kernel's control flow stays as it is");
      continue;
    }
    if (opcode == "call") {
      ArrayAttr operands = inst.getPtxOperands();
      auto callee = operands.empty() ? FlatSymbolRefAttr()
                                     : dyn_cast<FlatSymbolRefAttr>(operands[0]);
      if (!callee ||
          !isProbeFunction(SymbolTable::lookupNearestSymbolFrom(inst, callee)))
        return inst.emitOpError("in a probe calls something other than probe "
                                "code: probe code calls only functions whose "
                                "body is one ptx.probe and `ret`, and that "
                                "return nothing");
      continue;
    }
    if ((opcode == "st" &&
         (space == "global" || space == "local" || space == "param")) ||
        (opcode == "red" && space == "global") ||
        (opcode == "ld" && (space == "param" || space == "local")))
      continue;
    if (inst.hasModifier("cc"))
      return inst.emitOpError("'")
             << inst.getFullOpcode()
             << "' is not allowed in a probe: it writes the carry flag, which "
                "the kernel's addc/subc/madc may read";
    if (ProbeOp::isForbiddenOpcode(opcode))
      return inst.emitOpError("'")
             << inst.getFullOpcode()
             << "' is not allowed in a probe: it touches memory, synchronises, "
                "acts on the whole warp or changes control flow, which the "
                "kernel could observe";
  }
  return success();
}

LogicalResult ProbeOp::verifyRegions() {
  return verifyProbeStatements(*getBodyBlock(), {});
}

/// The registers an instruction of probe code writes: its first operand,
/// unless it is a store or a branch.
static Attribute getWrittenOperand(InstOp inst) {
  StringRef opcode = inst.getOpcode();
  ArrayAttr operands = inst.getPtxOperands();
  if (operands.empty() || opcode == "st" || opcode == "red" || opcode == "bra")
    return {};
  return operands[0];
}

/// Checks that probe code stores to global memory only through addresses
/// derived from its buffers: the largest set of registers each of whose
/// writes in probe code loads a buffer parameter (or a .local variable that
/// only such addresses are stored to), converts one to global, adds an
/// offset to one (`add`, `mad` into it), or keeps one or 0 (`selp`, `mov`).
/// A register copied from the kernel's (an `{addr}` operand) is not one.
static LogicalResult
verifyProbeAddresses(Block &body, const llvm::StringSet<> &buffers,
                     llvm::function_ref<bool(RegisterAttr)> isProbeRegister) {
  SmallVector<InstOp> probeInsts;
  body.walk([&](InstOp inst) {
    if (inst->getParentOfType<ProbeOp>())
      probeInsts.push_back(inst);
  });
  auto baseName = [](Attribute a) -> StringRef {
    if (auto reg = dyn_cast_or_null<RegisterAttr>(a))
      return reg.getBaseName();
    return {};
  };
  // Candidates: every probe register written in probe code.
  llvm::StringSet<> derived;
  for (InstOp inst : probeInsts)
    if (Attribute written = getWrittenOperand(inst))
      if (auto reg = dyn_cast<RegisterAttr>(written);
          reg && isProbeRegister(reg))
        derived.insert(reg.getBaseName());
  auto isDerived = [&](Attribute a) {
    StringRef name = baseName(a);
    return !name.empty() && derived.contains(name);
  };
  auto isZero = [](Attribute a) {
    auto imm = dyn_cast<IntImmAttr>(a);
    return imm && imm.getValue() == 0;
  };
  auto symbolOf = [](Attribute a) -> StringRef {
    auto addr = dyn_cast<AddressAttr>(a);
    // `[buffer+8]` is the next parameter, not the buffer.
    if (addr && addr.getOffset() != 0)
      return {};
    auto sym = addr ? dyn_cast<FlatSymbolRefAttr>(addr.getBase())
                    : FlatSymbolRefAttr();
    return sym ? sym.getValue() : StringRef();
  };
  // A write keeps its register an address if it is one of the forms above.
  auto keepsAddress = [&](InstOp inst, const llvm::StringSet<> &localAddrs) {
    StringRef opcode = inst.getOpcode();
    ArrayAttr ops = inst.getPtxOperands();
    if (opcode == "ld" && ops.size() == 2) {
      StringRef space = inst.getStateSpace();
      StringRef sym = symbolOf(ops[1]);
      return (space == "param" && buffers.contains(sym)) ||
             (space == "local" && localAddrs.contains(sym));
    }
    if ((opcode == "cvta" || opcode == "mov") && ops.size() == 2)
      return isDerived(ops[1]);
    if (opcode == "add" && ops.size() == 3)
      return isDerived(ops[1]) != isDerived(ops[2]);
    if (opcode == "sub" && ops.size() == 3)
      return isDerived(ops[1]) && !isDerived(ops[2]);
    if (opcode == "mad" && ops.size() == 4)
      return isDerived(ops[3]) && !isDerived(ops[1]) && !isDerived(ops[2]);
    if (opcode == "selp" && ops.size() == 4)
      return (isDerived(ops[1]) || isZero(ops[1])) &&
             (isDerived(ops[2]) || isZero(ops[2]));
    return false;
  };
  // Largest fixed point: drop registers with a write of another form.
  for (bool changed = true; changed;) {
    changed = false;
    // .local variables that only addresses are stored to.
    llvm::StringSet<> localAddrs, localOther;
    for (InstOp inst : probeInsts)
      if (inst.getOpcode() == "st" && inst.getStateSpace() == "local" &&
          inst.getPtxOperands().size() == 2) {
        StringRef sym = symbolOf(inst.getPtxOperands()[0]);
        (isDerived(inst.getPtxOperands()[1]) ? localAddrs : localOther)
            .insert(sym);
      }
    for (const auto &other : localOther)
      localAddrs.erase(other.getKey());
    for (InstOp inst : probeInsts) {
      StringRef name = baseName(getWrittenOperand(inst));
      if (name.empty() || !derived.contains(name) ||
          keepsAddress(inst, localAddrs))
        continue;
      derived.erase(name);
      changed = true;
    }
  }
  for (InstOp inst : probeInsts) {
    StringRef opcode = inst.getOpcode();
    if ((opcode != "st" && opcode != "red") || inst.getStateSpace() != "global")
      continue;
    auto address = dyn_cast<AddressAttr>(inst.getPtxOperands()[0]);
    if (!address || address.getIndices() || !isDerived(address.getBase()))
      return inst.emitOpError(
          "in a probe stores to global memory through an address not derived "
          "from the probe's buffers: every write of the address register "
          "must load a buffer parameter or add an offset to such an address");
  }
  // A probe function stores through its buffer parameters as through
  // buffers: the caller must pass it addresses derived from its own. A
  // register argument is checked as an address; a .param one must be
  // declared in the call's own `{ }` and set there, before the call, only
  // from addresses (another scope's variable of that name is another
  // variable).
  auto passesAddress = [&](InstOp call, Attribute arg) {
    if (isa<RegisterAttr>(arg))
      return isDerived(arg);
    auto name = dyn_cast<FlatSymbolRefAttr>(arg);
    if (!name)
      return false;
    bool declared = false, stored = false, derivedOnly = true;
    for (Operation &op : *call->getBlock()) {
      if (&op == call.getOperation())
        break;
      if (auto var = dyn_cast<VarOp>(op))
        declared |= var.getName() == name.getValue();
      auto st = dyn_cast<InstOp>(op);
      if (st && st.getOpcode() == "st" && st.getStateSpace() == "param" &&
          st.getPtxOperands().size() == 2 &&
          symbolOf(st.getPtxOperands()[0]) == name.getValue()) {
        stored = true;
        derivedOnly &= !st.getGuard() && isDerived(st.getPtxOperands()[1]);
      }
    }
    return declared && stored && derivedOnly;
  };
  for (InstOp inst : probeInsts) {
    ArrayAttr ops = inst.getPtxOperands();
    if (inst.getOpcode() != "call" || ops.size() != 2)
      continue;
    auto callee = dyn_cast<FlatSymbolRefAttr>(ops[0]);
    auto args = dyn_cast<ListAttr>(ops[1]);
    auto func = callee ? dyn_cast_or_null<FuncOp>(
                             SymbolTable::lookupNearestSymbolFrom(inst, callee))
                       : FuncOp();
    if (!func || !args || !func.hasBody())
      continue; // not a probe function: verifyProbeStatements refuses it
    llvm::StringSet<> calleeBuffers;
    func.walk([&](ProbeOp probe) {
      if (ArrayAttr names = probe.getBuffersAttr())
        for (Attribute name : names)
          calleeBuffers.insert(cast<StringAttr>(name).getValue());
    });
    for (auto [arg, param] :
         llvm::zip(args.getElements(), func.getParams().getValue())) {
      bool ok = !calleeBuffers.contains(cast<ParamDeclAttr>(param).getName()) ||
                passesAddress(inst, arg);
      if (!ok)
        return inst.emitOpError("in a probe passes ")
               << callee << " a value not derived from the probe's buffers "
               << "for its buffer parameter '"
               << cast<ParamDeclAttr>(param).getName()
               << "': the function stores through it";
    }
  }
  return success();
}

/// Proves that the kernel cannot observe its probes: probe code writes only
/// the probe's registers (declared in probe ops), stores only through them
/// or to the probe's .local variables, and the kernel never names a probe
/// register, variable or label. Together with ProbeOp::verifyRegions (no
/// barriers, no jumps out), the kernel computes what it computed before.
static LogicalResult verifyProbeIsolation(Operation *function, ArrayAttr params,
                                          Block &body) {
  llvm::StringMap<int64_t> registers;
  llvm::StringSet<> variables, buffers;
  llvm::DenseSet<StringRef> labels;
  bool anyProbe = false;
  ProbeOp firstProbe;
  body.walk([&](ProbeOp probe) {
    anyProbe = true;
    if (!firstProbe)
      firstProbe = probe;
    if (ArrayAttr names = probe.getBuffersAttr())
      for (Attribute name : names)
        buffers.insert(cast<StringAttr>(name).getValue());
    probe.walk([&](Operation *op) {
      if (auto reg = dyn_cast<RegOp>(op))
        registers[reg.getName()] =
            reg.getCount() ? int64_t(*reg.getCount()) : -1;
      else if (auto var = dyn_cast<VarOp>(op))
        variables.insert(var.getName());
      else if (auto label = dyn_cast<LabelOp>(op))
        labels.insert(label.getName());
    });
  });
  if (!anyProbe)
    return success();
  for (const auto &buffer : buffers)
    if (llvm::none_of(params, [&](Attribute param) {
          return cast<ParamDeclAttr>(param).getName() == buffer.getKey();
        }))
      return firstProbe.emitOpError("names buffer '")
             << buffer.getKey() << "', which is not a parameter of "
             << function->getName();
  auto isProbeRegister = [&](RegisterAttr reg) {
    return declaresRegister(registers, reg.getBaseName());
  };
  if (failed(verifyProbeAddresses(body, buffers, isProbeRegister)))
    return failure();
  // Jump tables (`.branchtargets`) of the kernel name no probe label.
  WalkResult tables = body.walk([&](DirectiveOp directive) -> WalkResult {
    if (directive->getParentOfType<ProbeOp>())
      return WalkResult::advance();
    SmallVector<StringRef> words;
    directive.getText().split(words, ' ', -1, false);
    for (StringRef word : words) {
      word = word.trim(" ,;:\t");
      if (labels.contains(word)) {
        directive.emitOpError("names the probe's label '")
            << word << "': the kernel may not jump into probe code";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (tables.wasInterrupted())
    return failure();
  WalkResult result = body.walk([&](InstOp inst) -> WalkResult {
    bool inProbe = inst->getParentOfType<ProbeOp>() != nullptr;
    if (!inProbe) {
      // The kernel names nothing of the probe's.
      std::string clash;
      auto check = [&](Attribute leaf) {
        if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
          if (isProbeRegister(reg))
            clash = ("register '" + reg.getName() + "'").str();
        } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf)) {
          if (variables.contains(sym.getValue()))
            clash = ("variable '" + sym.getValue() + "'").str();
          else if (buffers.contains(sym.getValue()))
            clash = ("buffer '" + sym.getValue() + "'").str();
          else if (labels.contains(sym.getValue()))
            clash = ("label '" + sym.getValue() + "'").str();
        } else if (auto label = dyn_cast<LabelRefAttr>(leaf)) {
          if (labels.contains(label.getName()))
            clash = ("label '" + label.getName() + "'").str();
        }
      };
      if (RegisterAttr guard = inst.getGuardAttr())
        check(guard);
      walkOperandLeaves(inst.getPtxOperandsAttr(), check);
      if (!clash.empty()) {
        inst.emitOpError("names the probe's ")
            << clash
            << " outside probe code; probes and kernel must not "
               "share state";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (Attribute written = getWrittenOperand(inst)) {
      std::string kernelRegister;
      walkOperandLeaves(written, [&](Attribute leaf) {
        if (auto reg = dyn_cast<RegisterAttr>(leaf);
            reg && !isProbeRegister(reg))
          kernelRegister = reg.getName().str();
      });
      if (!kernelRegister.empty()) {
        inst.emitOpError("in a probe writes '")
            << kernelRegister
            << "', which is not a probe register; probe code writes only "
               "registers declared in probe ops";
        return WalkResult::interrupt();
      }
    }
    StringRef opcode = inst.getOpcode();
    if (opcode != "st" && opcode != "red" && opcode != "ld")
      return WalkResult::advance();
    // ld/st/red: the address is the first operand of a store, the second
    // of a load.
    ArrayAttr operands = inst.getPtxOperands();
    unsigned index = opcode == "ld" ? 1 : 0;
    auto address = index < operands.size()
                       ? dyn_cast<AddressAttr>(operands[index])
                       : AddressAttr();
    StringRef space = inst.getStateSpace();
    // Reading a parameter is harmless; writing one is a call argument.
    if (space == "param" && opcode == "ld")
      return WalkResult::advance();
    bool owned = false;
    if (address && !address.getIndices()) {
      Attribute base = address.getBase();
      // Probe variables are scalars: an offset could reach the kernel's.
      if (space == "local" || space == "param")
        owned = isa<FlatSymbolRefAttr>(base) && address.getOffset() == 0 &&
                variables.contains(cast<FlatSymbolRefAttr>(base).getValue());
      else
        owned = isa<RegisterAttr>(base) &&
                isProbeRegister(cast<RegisterAttr>(base));
    }
    if (!owned) {
      inst.emitOpError("in a probe accesses memory that is not the probe's: "
                       "probe code stores to global memory only through a "
                       "probe register (its buffers) and uses only its own "
                       ".local variables and .param call arguments");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

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
          FlatSymbolRefAttr, LabelRefAttr, SinkAttr>(attr))
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
