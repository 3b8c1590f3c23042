//===- ImportPTX.cpp - .ptx files to the ptx dialect ----------------------===//
//
// Drives the PTX statement parser over a whole file and builds the ops. The
// module header comes first; then top-level statements (functions, globals,
// debug directives) until the end; function bodies recurse into `{ }` scopes.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ImportPTX.h"
#include "ptx/IR/PTXParser.h"
#include "ptx/IR/PTXPrinter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using llvm::StringRef;

namespace {
class Importer {
public:
  Importer(llvm::SourceMgr &sourceMgr, unsigned bufferId, MLIRContext *context)
      : sourceMgr(sourceMgr), bufferId(bufferId),
        lineStart(sourceMgr.getMemoryBuffer(bufferId)->getBufferStart()),
        fileName(StringAttr::get(
            context,
            sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier())),
        parser(sourceMgr.getMemoryBuffer(bufferId)->getBuffer(), context,
               [this](const char *ptr) { return getLocation(ptr); }),
        builder(context), instName(InstOp::getOperationName(), context),
        regName(RegOp::getOperationName(), context),
        locName(LocOp::getOperationName(), context),
        labelName(LabelOp::getOperationName(), context),
        noAttributes(DictionaryAttr::get(context)) {
    parser.warnUnknownOpcodes = true;
  }

  FailureOr<PTXModuleOp> importModule(Block *into, StringRef name);

private:
  Location getLocation(const char *ptr) {
    auto [line, column] = getLineAndColumn(ptr);
    return FileLineColLoc::get(fileName, line, column);
  }
  /// What SourceMgr::getLineAndColumn returns, computed incrementally: every
  /// statement asks for its location, mostly further down the buffer than
  /// the last one, so only the text in between is scanned for newlines.
  std::pair<unsigned, unsigned> getLineAndColumn(const char *ptr) {
    if (ptr < lineStart)
      return sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(ptr),
                                        bufferId);
    while (const void *newline = memchr(lineStart, '\n', ptr - lineStart)) {
      lineStart = static_cast<const char *>(newline) + 1;
      ++lineNumber;
    }
    // Like SourceMgr, count columns from the last '\n' or '\r'.
    size_t offset = ptr - lineStart;
    size_t cr = StringRef(lineStart, offset).rfind('\r');
    return {lineNumber,
            unsigned(cr == StringRef::npos ? offset + 1 : offset - cr)};
  }
  Location here() { return getLocation(parser.getToken().getLoc()); }

  /// OpT::create without an OperationState, for the statements that make
  /// up most of a file: the state's heap-allocated properties and attribute
  /// list cost as much as the operation itself.
  template <typename OpT>
  OpT createStatement(Location loc, OperationName name,
                      typename OpT::Properties &properties) {
    Operation *op = Operation::create(loc, name, /*resultTypes=*/{},
                                      /*operands=*/{}, noAttributes,
                                      OpaqueProperties(&properties),
                                      /*successors=*/{}, /*numRegions=*/0);
    builder.insert(op);
    return cast<OpT>(op);
  }
  InstOp createInst(Location loc, const InstructionSyntax &syntax) {
    InstOp::Properties properties;
    properties.guard = syntax.guard;
    if (syntax.guardNegated)
      properties.guard_negated = builder.getUnitAttr();
    properties.opcode = syntax.opcode;
    properties.modifiers = syntax.modifiers;
    properties.ptx_operands = syntax.operands;
    return createStatement<InstOp>(loc, instName, properties);
  }

  LogicalResult parseTopLevelStatement();
  LogicalResult parseFunction();
  LogicalResult parseBody(Block *block, const char *open);
  LogicalResult parseBodyStatement();
  LogicalResult parseVariable(bool global);

  llvm::SourceMgr &sourceMgr;
  unsigned bufferId;
  /// The start of line `lineNumber`, at or before the last location asked.
  const char *lineStart;
  unsigned lineNumber = 1;
  StringAttr fileName;
  Parser parser;
  OpBuilder builder;
  OperationName instName, regName, locName, labelName;
  DictionaryAttr noAttributes;
  /// Functions declared without a body so far, by name.
  llvm::DenseMap<StringAttr, Operation *> declarations;
  /// Instructions of the current function with bare-name operands.
  SmallVector<InstOp> bareCandidates;
};
} // namespace

FailureOr<PTXModuleOp> Importer::importModule(Block *into, StringRef name) {
  Location loc = here();
  ModuleHeaderSyntax header;
  if (parser.parseModuleHeader(header))
    return failure();
  if (!header.version)
    return mlir::emitError(loc, "a PTX module must declare '.version'"),
           failure();
  if (!header.target)
    return mlir::emitError(loc, "a PTX module must declare '.target'"),
           failure();
  builder.setInsertionPointToEnd(into);
  auto module =
      PTXModuleOp::create(builder, loc, name, header.version.getValue(),
                          header.target, header.addressSize);
  builder.setInsertionPointToEnd(module.getBodyBlock());
  while (!parser.getToken().is(Token::eof)) {
    if (failed(parseTopLevelStatement())) {
      module.erase();
      return failure();
    }
  }
  return module;
}

LogicalResult Importer::parseVariable(bool global) {
  Location loc = here();
  VariableSyntax syntax;
  if (parser.parseVariable(syntax))
    return failure();
  for (const VariableSyntax::Declarator &declarator : syntax.declarators) {
    if (global)
      GlobalOp::create(builder, loc, declarator.name, syntax.linkage,
                       syntax.space, syntax.align, syntax.vector, syntax.type,
                       declarator.dims, syntax.initializer, syntax.attributes);
    else
      VarOp::create(builder, loc, declarator.name, syntax.linkage, syntax.space,
                    syntax.align, syntax.vector, syntax.type, declarator.dims,
                    syntax.initializer, syntax.attributes);
  }
  return success();
}

LogicalResult Importer::parseTopLevelStatement() {
  const Token &token = parser.getToken();
  if (!token.is(Token::directive))
    return parser.emitExpected("a directive, function or variable"), failure();
  StringRef spelling = token.spelling;
  Location loc = here();
  if (spelling == ".file") {
    FileSyntax syntax;
    if (parser.parseFile(syntax))
      return failure();
    FileOp::create(builder, loc, syntax.index, syntax.path, syntax.extra);
    return success();
  }
  if (spelling == ".section") {
    StringAttr name, contents;
    if (parser.parseSection(name, contents))
      return failure();
    SectionOp::create(builder, loc, name, contents);
    return success();
  }
  if (spelling == ".entry" || spelling == ".func")
    return parseFunction();
  if (spelling == ".visible" || spelling == ".extern" || spelling == ".weak" ||
      spelling == ".common") {
    Token next = parser.peek();
    if (next.isDirective(".entry") || next.isDirective(".func"))
      return parseFunction();
    return parseVariable(/*global=*/true);
  }
  if (parser.atVariableDecl())
    return parseVariable(/*global=*/true);
  if (spelling == ".pragma") {
    ArrayAttr values;
    if (parser.parsePragma(values))
      return failure();
    PragmaOp::create(builder, loc, values);
    return success();
  }
  if (spelling == ".version" || spelling == ".target" ||
      spelling == ".address_size")
    return parser.emitError("'" + spelling +
                            "' must come before every other statement"),
           failure();
  return parser.emitError("unknown top-level directive '" + spelling + "'"),
         failure();
}

LogicalResult Importer::parseFunction() {
  Location loc = here();
  FunctionHeaderSyntax header;
  if (parser.parseFunctionHeader(header))
    return failure();
  Region *body;
  if (header.isEntry) {
    body = &EntryOp::create(builder, loc, header.name, header.linkage,
                            header.params, header.results, header.maxntid,
                            header.reqntid, header.minnctapersm, header.maxnreg,
                            header.directives)
                .getBody();
  } else {
    body = &FuncOp::create(builder, loc, header.name, header.linkage,
                           header.params, header.results, header.maxntid,
                           header.reqntid, header.minnctapersm, header.maxnreg,
                           header.directives)
                .getBody();
  }
  if (parser.getToken().is(Token::semicolon)) {
    parser.consume();
    declarations[header.name] = body->getParentOp();
    return success();
  }
  // A prototype followed by the definition: the definition is the symbol,
  // the prototype becomes a ptx.declare of it.
  if (Operation *prototype = declarations.lookup(header.name)) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(prototype);
    ForwardDeclOp::create(builder, prototype->getLoc(),
                          FlatSymbolRefAttr::get(header.name),
                          prototype->getAttrOfType<StringAttr>("linkage"),
                          getHeaderDirectives(prototype));
    prototype->erase();
    declarations.erase(header.name);
  }
  const char *open = parser.getToken().getLoc();
  if (parser.expect(Token::l_brace, "'{' or ';' after the function header"))
    return failure();
  OpBuilder::InsertionGuard guard(builder);
  bareCandidates.clear();
  if (failed(parseBody(&body->emplaceBlock(), open)))
    return failure();
  if (!bareCandidates.empty())
    resolveBareIdentifiers(*body, bareCandidates);
  return success();
}

LogicalResult Importer::parseBody(Block *block, const char *open) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  while (!parser.consumeIf(Token::r_brace)) {
    if (parser.getToken().is(Token::eof))
      return parser.emitError(open, "missing '}' for this '{'"), failure();
    if (failed(parseBodyStatement()))
      return failure();
  }
  return success();
}

LogicalResult Importer::parseBodyStatement() {
  const Token &token = parser.getToken();
  Location loc = here();
  switch (token.kind) {
  case Token::l_brace: {
    const char *open = token.getLoc();
    parser.consume();
    auto scope = ScopeOp::create(builder, loc);
    return parseBody(&scope.getBody().emplaceBlock(), open);
  }
  case Token::directive: {
    StringRef spelling = token.spelling;
    if (spelling == ".reg") {
      RegisterDeclSyntax syntax;
      if (parser.parseRegisterDecl(syntax))
        return failure();
      for (auto [name, count] : syntax.names) {
        RegOp::Properties properties;
        properties.type = syntax.type;
        properties.vector = syntax.vector;
        properties.name = name;
        properties.count = count;
        properties.align = syntax.align;
        createStatement<RegOp>(loc, regName, properties);
      }
      return success();
    }
    if (spelling == ".loc") {
      LocSyntax syntax;
      if (parser.parseLoc(syntax))
        return failure();
      LocOp::Properties properties;
      properties.file = syntax.file;
      properties.line = syntax.line;
      properties.column = syntax.column;
      properties.extra = syntax.extra;
      createStatement<LocOp>(loc, locName, properties);
      return success();
    }
    if (spelling == ".pragma") {
      ArrayAttr values;
      if (parser.parsePragma(values))
        return failure();
      PragmaOp::create(builder, loc, values);
      return success();
    }
    if (parser.atVariableDecl())
      return parseVariable(/*global=*/false);
    return parser.emitError("unexpected directive '" + spelling +
                            "' in a function body"),
           failure();
  }
  case Token::identifier: {
    // Labels have no dots; most opcodes do, so only those without peek.
    if (!token.spelling.contains('.') && token.spelling[0] != '%' &&
        parser.peek().is(Token::colon)) {
      const char *start = token.getLoc();
      StringAttr name = StringAttr::get(builder.getContext(), token.spelling);
      parser.consume();
      parser.consume(); // ':'
      const Token &next = parser.getToken();
      if (next.isDirective(".branchtargets") ||
          next.isDirective(".calltargets") ||
          next.isDirective(".callprototype")) {
        StringAttr text;
        if (parser.parseLabeledDirective(start, text))
          return failure();
        DirectiveOp::create(builder, loc, text);
        return success();
      }
      LabelOp::Properties properties;
      properties.name = name;
      createStatement<LabelOp>(loc, labelName, properties);
      return success();
    }
    [[fallthrough]];
  }
  case Token::at: {
    InstructionSyntax syntax;
    if (parser.parseInstruction(syntax))
      return failure();
    InstOp inst = createInst(loc, syntax);
    if (syntax.hasBareIdentifier)
      bareCandidates.push_back(inst);
    return success();
  }
  default:
    return parser.emitExpected("an instruction, declaration or '}'"), failure();
  }
}

FailureOr<PTXModuleOp> gpuopt::importPTX(llvm::SourceMgr &sourceMgr,
                                         unsigned bufferId, ModuleOp into,
                                         StringRef moduleName) {
  MLIRContext *context = into.getContext();
  context->getOrLoadDialect<PTXDialect>();
  Importer importer(sourceMgr, bufferId, context);
  FailureOr<PTXModuleOp> module =
      importer.importModule(into.getBody(), moduleName);
  if (failed(module))
    return failure();
  // Debug builds also run MLIR's generic verifier, which rechecks the
  // invariants the typed builders guarantee.
  bool valid = succeeded(verifyImportedModule(*module));
#ifndef NDEBUG
  valid = valid && succeeded(verify(*module));
#endif
  if (!valid) {
    module->erase();
    return failure();
  }
  return module;
}

LogicalResult gpuopt::importPTXBuffers(llvm::SourceMgr &sourceMgr,
                                       ModuleOp into,
                                       ArrayRef<unsigned> bufferIds) {
  SmallVector<unsigned> allBuffers;
  if (bufferIds.empty()) {
    allBuffers = llvm::to_vector(
        llvm::seq_inclusive<unsigned>(1, sourceMgr.getNumBuffers()));
    bufferIds = allBuffers;
  }
  // Names already taken: ptx.modules from earlier files, or whatever else
  // the caller put into `into`.
  std::vector<std::string> taken;
  for (Operation &op : *into.getBody())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      taken.push_back(name.str());
  for (unsigned id : bufferIds) {
    taken.push_back(ptxModuleNameForFile(
        sourceMgr.getMemoryBuffer(id)->getBufferIdentifier(), taken));
    if (failed(importPTX(sourceMgr, id, into, taken.back())))
      return failure();
  }
  return success();
}

OwningOpRef<ModuleOp> gpuopt::importPTX(llvm::SourceMgr &sourceMgr,
                                        MLIRContext *context) {
  unsigned bufferId = sourceMgr.getMainFileID();
  StringRef path = sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
  OwningOpRef<ModuleOp> module(ModuleOp::create(
      FileLineColLoc::get(context, path, /*line=*/0, /*column=*/0)));
  if (failed(importPTX(sourceMgr, bufferId, *module,
                       ptxModuleNameForFile(path, {}))))
    return {};
  return module;
}

bool gpuopt::looksLikePTX(StringRef buffer) {
  Lexer lexer(buffer);
  Token token = lexer.lex();
  return token.isDirective(".version") || token.isDirective(".target");
}

std::string gpuopt::ptxModuleNameForFile(StringRef path,
                                         ArrayRef<std::string> taken) {
  std::string stem =
      path == "-" ? std::string("ptx") : llvm::sys::path::stem(path).str();
  if (stem.empty())
    stem = "ptx";
  std::string name = stem;
  for (unsigned i = 1; llvm::is_contained(taken, name); ++i)
    name = stem + "_" + std::to_string(i);
  return name;
}
