//===- PTXParser.cpp - PTX statement parser -------------------------------===//
//
// Hand-written recursive descent over the lexer of PTXLexer.cpp: one parse
// method per statement kind, building the attributes the ops store.
// Attributes that recur on most lines (registers, opcodes) are cached per
// parser.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXParser.h"
#include "ptx/IR/PTXOpcodes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

Parser::Parser(StringRef buffer, MLIRContext *context, LocationFn locationOf)
    : lexer(buffer), context(context), locationOf(std::move(locationOf)) {
  token = lexer.lex();
}

InFlightDiagnostic Parser::emitError(const char *ptr, const llvm::Twine &msg) {
  return mlir::emitError(locationOf(ptr), msg);
}

static StringRef describe(const Token &token) {
  switch (token.kind) {
  case Token::eof:
    return "end of input";
  case Token::string:
    return "string";
  default:
    return token.spelling;
  }
}

ParseResult Parser::emitExpected(const llvm::Twine &what) {
  if (token.is(Token::error))
    return emitError(lexer.getErrorMessage());
  return emitError("expected " + what + ", found '" + describe(token) + "'");
}

ParseResult Parser::expect(Token::Kind kind, const llvm::Twine &what) {
  if (consumeIf(kind))
    return success();
  return emitExpected(what);
}

ParseResult Parser::parseInteger(int64_t &value, const llvm::Twine &what) {
  bool negative = consumeIf(Token::minus);
  if (!token.is(Token::integer))
    return emitExpected(what);
  StringRef spelling = token.spelling.rtrim("Uu");
  uint64_t magnitude = 0;
  // Short decimals are most integers (.loc lines, offsets, counts).
  if (spelling.size() <= 18 && (spelling[0] != '0' || spelling.size() == 1) &&
      llvm::all_of(spelling, llvm::isDigit)) {
    for (char c : spelling)
      magnitude = magnitude * 10 + (c - '0');
  } else if (spelling.getAsInteger(0, magnitude)) {
    return emitError("integer literal '" + token.spelling + "' is too large");
  }
  // Two's complement in unsigned arithmetic: -2^63 is valid PTX, and its
  // magnitude does not fit int64_t.
  value = int64_t(negative ? 0 - magnitude : magnitude);
  consume();
  return success();
}

ParseResult Parser::parseStatementEnd() {
  if (consumeIf(Token::semicolon))
    return success();
  if (allowEofAsStatementEnd && token.is(Token::eof))
    return success();
  if (token.is(Token::error) || !previousEnd)
    return emitExpected("';'");
  return emitError(previousEnd, "expected ';' after this statement, found '" +
                                    describe(token) + "'");
}

StringAttr Parser::getString(StringRef value) {
  return StringAttr::get(context, value);
}

IntegerAttr Parser::getI32(int64_t value) {
  // `.loc` lines, a third of nvcc's statements, repeat the same few numbers.
  IntegerAttr &cached = i32Cache[value];
  if (!cached)
    cached = IntegerAttr::get(IntegerType::get(context, 32), value);
  return cached;
}

bool gpuopt::ptx::isSpecialRegisterName(StringRef name) {
  if (!name.consume_front("%"))
    return false;
  static const llvm::StringSet<> names = {"tid",
                                          "ntid",
                                          "laneid",
                                          "warpid",
                                          "nwarpid",
                                          "ctaid",
                                          "nctaid",
                                          "smid",
                                          "nsmid",
                                          "gridid",
                                          "lanemask_eq",
                                          "lanemask_le",
                                          "lanemask_lt",
                                          "lanemask_ge",
                                          "lanemask_gt",
                                          "clock",
                                          "clock_hi",
                                          "clock64",
                                          "globaltimer",
                                          "globaltimer_lo",
                                          "globaltimer_hi",
                                          "total_smem_size",
                                          "aggr_smem_size",
                                          "dynamic_smem_size",
                                          "is_explicit_cluster",
                                          "clusterid",
                                          "nclusterid",
                                          "cluster_ctaid",
                                          "cluster_nctaid",
                                          "cluster_ctarank",
                                          "cluster_nctarank",
                                          "current_graph_exec",
                                          "reserved_smem_offset_begin",
                                          "reserved_smem_offset_end",
                                          "reserved_smem_offset_cap",
                                          "reserved_smem_offset_0",
                                          "reserved_smem_offset_1"};
  StringRef base = name.take_until([](char c) { return c == '.'; });
  if (names.contains(base))
    return true;
  // %pm0..%pm7, %pm0_64.., %envreg0..%envreg31.
  auto isNumbered = [&](StringRef prefix) {
    StringRef rest = base;
    if (!rest.consume_front(prefix) || rest.empty())
      return false;
    rest.consume_back("_64");
    return !rest.empty() && llvm::all_of(rest, llvm::isDigit);
  };
  return isNumbered("pm") || isNumbered("envreg");
}

Attribute Parser::getRegister(StringRef name) {
  Attribute &cached = operandCache[name];
  if (!cached) {
    if (isSpecialRegisterName(name))
      cached = SpecialRegisterAttr::get(context, name);
    else
      cached = RegisterAttr::get(context, name);
  }
  return cached;
}

ParseResult Parser::parseImmediate(Attribute &result, bool negate) {
  if (token.is(Token::floating)) {
    StringRef spelling = token.spelling;
    if (spelling.size() > 2 && spelling[0] == '0' &&
        (spelling[1] == 'f' || spelling[1] == 'F' || spelling[1] == 'd' ||
         spelling[1] == 'D')) {
      uint64_t bits = 0; // The lexer checked the hex digits.
      spelling.drop_front(2).getAsInteger(16, bits);
      unsigned width = (spelling[1] == 'f' || spelling[1] == 'F') ? 32 : 64;
      if (negate)
        bits ^= uint64_t(1) << (width - 1);
      result = FloatImmAttr::get(context, bits, width);
    } else {
      double value;
      if (spelling.getAsDouble(value))
        return emitError("invalid floating-point literal");
      if (negate)
        value = -value;
      result = FloatImmAttr::get(context, llvm::bit_cast<uint64_t>(value), 64);
    }
    consume();
    return success();
  }
  bool hex =
      token.spelling.starts_with("0x") || token.spelling.starts_with("0X");
  int64_t value;
  if (parseInteger(value, "integer"))
    return failure();
  result = IntImmAttr::get(context,
                           negate ? int64_t(0 - uint64_t(value)) : value, hex);
  return success();
}

ParseResult Parser::parseOperandList(Token::Kind close,
                                     SmallVectorImpl<Attribute> &ops,
                                     bool isBranch, bool &bare) {
  if (consumeIf(close))
    return success();
  do {
    Attribute operand;
    if (parseOperand(operand, isBranch, bare))
      return failure();
    ops.push_back(operand);
  } while (consumeIf(Token::comma));
  if (!consumeIf(close))
    return emitExpected(close == Token::r_brace ? "',' or '}'" : "',' or ')'");
  return success();
}

ParseResult Parser::parseOperand(Attribute &result, bool isBranch, bool &bare) {
  switch (token.kind) {
  case Token::identifier: {
    StringRef name = token.spelling;
    consume();
    if (name[0] == '%') {
      result = getRegister(name);
    } else if (name == "_") {
      result = SinkAttr::get(context);
    } else if (isBranch) {
      result = LabelRefAttr::get(context, name);
    } else {
      result = FlatSymbolRefAttr::get(context, name);
      bare = true;
    }
    break;
  }
  case Token::integer:
  case Token::floating:
    if (parseImmediate(result, /*negate=*/false))
      return failure();
    break;
  case Token::minus:
    consume();
    if (!token.is(Token::integer) && !token.is(Token::floating))
      return emitExpected("number after '-'");
    if (parseImmediate(result, /*negate=*/true))
      return failure();
    break;
  case Token::bang: {
    consume();
    Attribute inner;
    if (parseOperand(inner, isBranch, bare))
      return failure();
    result = NotAttr::get(context, inner);
    return success();
  }
  case Token::l_square: {
    consume();
    Attribute base;
    if (token.is(Token::identifier)) {
      StringRef name = token.spelling;
      consume();
      if (name[0] == '%') {
        base = getRegister(name);
      } else {
        base = FlatSymbolRefAttr::get(context, name);
        bare = true;
      }
    } else if (token.is(Token::integer)) {
      if (parseImmediate(base, false))
        return failure();
    } else {
      return emitExpected("register, symbol or integer address");
    }
    // The terms are kept as written (see AddressAttr); their sum must fit.
    int64_t offset = 0;
    SmallVector<int64_t, 2> terms;
    uint64_t minusMask = 0;
    while (token.is(Token::plus) || token.is(Token::minus)) {
      bool minus = token.is(Token::minus);
      consume();
      const char *termLoc = token.getLoc();
      int64_t term;
      if (parseInteger(term, "integer offset"))
        return failure();
      if (minus ? llvm::SubOverflow(offset, term, offset)
                : llvm::AddOverflow(offset, term, offset))
        return emitError(termLoc, "address offset does not fit in 64 bits");
      if (terms.size() == AddressAttr::kMaxTerms)
        return emitError(termLoc, "too many offset terms in an address");
      if (minus)
        minusMask |= uint64_t(1) << terms.size();
      terms.push_back(term);
    }
    Attribute indices;
    if (consumeIf(Token::comma) && parseOperand(indices, false, bare))
      return failure();
    if (!consumeIf(Token::r_square))
      return emitExpected("']'");
    result = AddressAttr::get(context, base, terms, minusMask, indices);
    break;
  }
  case Token::l_brace: {
    consume();
    static constexpr llvm::StringLiteral placeholders[] = {"bytes", "addr",
                                                           "site"};
    if (allowPlaceholders && token.is(Token::identifier) &&
        llvm::is_contained(placeholders, token.spelling) &&
        peek().is(Token::r_brace)) {
      result = PlaceholderAttr::get(context, token.spelling);
      consume();
      consume();
      break;
    }
    SmallVector<Attribute, 4> elements;
    if (parseOperandList(Token::r_brace, elements, false, bare))
      return failure();
    result = VectorAttr::get(context, ArrayAttr::get(context, elements));
    break;
  }
  case Token::l_paren: {
    consume();
    SmallVector<Attribute, 4> elements;
    if (parseOperandList(Token::r_paren, elements, false, bare))
      return failure();
    result = ListAttr::get(context, ArrayAttr::get(context, elements));
    break;
  }
  default:
    return emitExpected("operand");
  }
  if (consumeIf(Token::pipe)) {
    Attribute second;
    if (parseOperand(second, isBranch, bare))
      return failure();
    result = PairAttr::get(context, result, second);
  }
  return success();
}

LogicalResult Parser::checkOpcode(StringRef base,
                                  ArrayRef<StringRef> modifiers) {
  const OpcodeInfo *info = lookupOpcode(base);
  if (!info) {
    // Newer PTX than the table: kept as written, analyses assume the worst.
    if (warnUnknownOpcodes && warnedOpcodes.insert(base).second)
      mlir::emitWarning(locationOf(base.data()))
          << "unknown instruction '" << base
          << "': not in gpu-opt's opcode table (PTX ISA 9.0); it is kept as "
             "written and analyses assume it may access memory, synchronise "
             "and branch (check the spelling if it is not newer PTX)";
    return success();
  }
  if (modifiers.empty())
    return success();
  std::optional<ModifierError> error = checkModifiers(*info, modifiers);
  if (!error)
    return success();
  // Point at the modifier's dot, as the column of `.glubal`.
  return emitError(modifiers[error->index].data() - 1, error->message);
}

ParseResult Parser::parseInstruction(InstructionSyntax &result) {
  if (consumeIf(Token::at)) {
    result.guardNegated = consumeIf(Token::bang);
    if (!token.is(Token::identifier))
      return emitExpected("predicate register after '@'");
    result.guard = RegisterAttr::get(context, token.spelling);
    consume();
  }
  if (!token.is(Token::identifier) || token.spelling[0] == '%' ||
      token.spelling[0] == '$')
    return emitExpected("instruction opcode");
  StringRef fullOpcode = token.spelling;
  // The opcode's base, then its modifiers: checked against the opcode table
  // and interned.
  SmallVector<StringRef, 6> parts;
  auto internModifiers = [&]() -> FailureOr<ArrayAttr> {
    ArrayRef<StringRef> names = ArrayRef(parts).drop_front();
    if (failed(checkOpcode(parts.front(), names)))
      return failure();
    SmallVector<Attribute, 6> modifiers;
    for (StringRef name : names)
      modifiers.push_back(getString(name));
    return ArrayAttr::get(context, modifiers);
  };
  auto [cached, inserted] = opcodeCache.try_emplace(fullOpcode);
  if (inserted) {
    // The first time an opcode string occurs in this text.
    fullOpcode.split(parts, '.');
    FailureOr<ArrayAttr> modifiers = internModifiers();
    if (failed(modifiers)) {
      opcodeCache.erase(cached);
      return failure();
    }
    cached->second = {getString(parts.front()), *modifiers};
  }
  result.opcode = cached->second.first;
  result.modifiers = cached->second.second;
  consume();
  // ptxas also accepts modifiers separated from the opcode by whitespace
  // (`lop3 .b32`, `xor  .b32` in CUTLASS's inline asm); they are the same
  // modifiers, so the instruction is stored as if written `lop3.b32`.
  if (token.is(Token::directive)) {
    if (parts.empty())
      fullOpcode.split(parts, '.');
    while (token.is(Token::directive)) {
      parts.push_back(token.spelling.drop_front());
      consume();
    }
    FailureOr<ArrayAttr> modifiers = internModifiers();
    if (failed(modifiers))
      return failure();
    result.modifiers = *modifiers;
  }

  // Labels are the only bare names `bra` takes; `brx.idx` takes a register
  // and a `.branchtargets` label.
  StringRef base = result.opcode.getValue();
  bool isBranch = base == "bra" || base == "brx";
  SmallVector<Attribute, 4> operands;
  if (!token.is(Token::semicolon) && !token.is(Token::eof)) {
    do {
      Attribute operand;
      if (parseOperand(operand, isBranch, result.hasBareIdentifier))
        return failure();
      operands.push_back(operand);
    } while (consumeIf(Token::comma));
  }
  result.operands = ArrayAttr::get(context, operands);
  return parseStatementEnd();
}

ParseResult Parser::parseStorageQualifier(IntegerAttr &align,
                                          IntegerAttr &vector,
                                          bool &isQualifier) {
  StringRef spelling = token.spelling;
  isQualifier = true;
  if (spelling == ".align") {
    consume();
    int64_t value = 0;
    if (parseInteger(value, "alignment"))
      return failure();
    align = getI32(value);
    return success();
  }
  if (spelling == ".v2" || spelling == ".v4" || spelling == ".v8") {
    vector = getI32(spelling[2] - '0');
    consume();
    return success();
  }
  isQualifier = false;
  return success();
}

ParseResult Parser::parseRegisterDecl(RegisterDeclSyntax &result) {
  if (!token.isDirective(".reg"))
    return emitExpected("'.reg'");
  consume();
  while (token.is(Token::directive)) {
    bool isQualifier;
    if (parseStorageQualifier(result.align, result.vector, isQualifier))
      return failure();
    if (isQualifier)
      continue;
    StringRef spelling = token.spelling;
    if (std::optional<std::string> error =
            checkDeclarationType(spelling, ".reg"))
      return emitError(*error);
    result.type = getString(spelling);
    consume();
    break;
  }
  if (!result.type)
    return emitExpected("register type");
  do {
    if (!token.is(Token::identifier))
      return emitExpected("register name");
    StringAttr name = getString(token.spelling);
    consume();
    IntegerAttr count;
    if (consumeIf(Token::less)) {
      int64_t n;
      if (parseInteger(n, "register count") || expect(Token::greater, "'>'"))
        return failure();
      if (n < 0)
        return emitError("register count must not be negative");
      count = IntegerAttr::get(IntegerType::get(context, 64), n);
    }
    result.names.push_back({name, count});
  } while (consumeIf(Token::comma));
  return parseStatementEnd();
}

static bool isStateSpace(StringRef s) {
  return s == ".global" || s == ".shared" || s == ".const" || s == ".local" ||
         s == ".param" || s == ".tex";
}

static bool isLinkage(StringRef s) {
  return s == ".visible" || s == ".extern" || s == ".weak" || s == ".common";
}

bool Parser::atVariableDecl() const {
  return token.is(Token::directive) &&
         (isStateSpace(token.spelling) || isLinkage(token.spelling));
}

ParseResult Parser::parseDims(SmallVectorImpl<int64_t> &dims) {
  while (consumeIf(Token::l_square)) {
    if (consumeIf(Token::r_square)) {
      dims.push_back(0);
      continue;
    }
    int64_t n;
    if (parseInteger(n, "array size") || expect(Token::r_square, "']'"))
      return failure();
    if (n <= 0)
      return emitError("array size must be positive");
    dims.push_back(n);
  }
  return success();
}

ParseResult Parser::parseVariable(VariableSyntax &result) {
  if (token.is(Token::directive) && isLinkage(token.spelling)) {
    result.linkage = getString(token.spelling);
    consume();
  }
  if (!token.is(Token::directive) || !isStateSpace(token.spelling))
    return emitExpected("state space");
  result.space = getString(token.spelling);
  consume();
  SmallVector<Attribute> attributes;
  while (token.is(Token::directive)) {
    bool isQualifier;
    if (parseStorageQualifier(result.align, result.vector, isQualifier))
      return failure();
    if (isQualifier)
      continue;
    StringRef spelling = token.spelling;
    if (spelling == ".attribute") {
      consume();
      if (expect(Token::l_paren, "'('"))
        return failure();
      while (token.is(Token::directive)) {
        attributes.push_back(getString(token.spelling));
        consume();
        consumeIf(Token::comma);
      }
      if (expect(Token::r_paren, "')'"))
        return failure();
      continue;
    }
    if (std::optional<std::string> error =
            checkDeclarationType(spelling, result.space.getValue()))
      return emitError(*error);
    result.type = getString(spelling);
    consume();
    break;
  }
  if (!result.type)
    return emitExpected("variable type");
  if (!attributes.empty())
    result.attributes = ArrayAttr::get(context, attributes);
  do {
    if (!token.is(Token::identifier))
      return emitExpected("variable name");
    VariableSyntax::Declarator declarator;
    declarator.name = getString(token.spelling);
    consume();
    SmallVector<int64_t, 2> dims;
    if (parseDims(dims))
      return failure();
    declarator.dims = DenseI64ArrayAttr::get(context, dims);
    result.declarators.push_back(declarator);
  } while (consumeIf(Token::comma));
  if (consumeIf(Token::equal)) {
    // The initializer is kept as text: it runs to the `;` outside braces.
    const char *start = token.getLoc(), *end = start;
    unsigned depth = 0;
    while (!token.is(Token::eof) && !token.is(Token::error) &&
           !(depth == 0 && token.is(Token::semicolon))) {
      if (token.is(Token::l_brace))
        ++depth;
      else if (token.is(Token::r_brace) && depth)
        --depth;
      end = token.spelling.end();
      consume();
    }
    if (end == start)
      return emitExpected("initializer");
    result.initializer = getString(StringRef(start, end - start));
  }
  return parseStatementEnd();
}

ParseResult Parser::parseParam(Attribute &result) {
  if (!token.is(Token::directive) ||
      (token.spelling != ".param" && token.spelling != ".reg"))
    return emitExpected("'.param' or '.reg'");
  StringRef space = token.spelling;
  consume();
  StringRef type, ptrSpace, name;
  int64_t align = 0, ptrAlign = 0, arraySize = -1;
  bool isPtr = false;
  while (token.is(Token::directive)) {
    StringRef spelling = token.spelling;
    const char *loc = token.getLoc();
    consume();
    if (spelling == ".align") {
      if (parseInteger(isPtr ? ptrAlign : align, "alignment"))
        return failure();
    } else if (spelling == ".ptr") {
      isPtr = true;
    } else if (isPtr && isStateSpace(spelling)) {
      ptrSpace = spelling;
    } else if (isPtr && !type.empty()) {
      if (std::optional<std::string> error = checkPointerSpace(spelling))
        return emitError(loc, *error);
    } else {
      if (std::optional<std::string> error =
              checkDeclarationType(spelling, space))
        return emitError(loc, *error);
      type = spelling;
    }
  }
  if (type.empty())
    return emitExpected("parameter type");
  if (token.is(Token::identifier)) {
    name = token.spelling;
    consume();
  }
  SmallVector<int64_t, 1> dims;
  if (parseDims(dims))
    return failure();
  if (dims.size() > 1)
    return emitError("parameters have at most one array dimension");
  if (!dims.empty())
    arraySize = dims.front();
  result = ParamDeclAttr::get(context, space, type, name, align, ptrSpace,
                              ptrAlign, arraySize, isPtr);
  return success();
}

ParseResult Parser::parseParamList(ArrayAttr &result) {
  if (expect(Token::l_paren, "'('"))
    return failure();
  SmallVector<Attribute> params;
  if (!consumeIf(Token::r_paren)) {
    do {
      Attribute param;
      if (parseParam(param))
        return failure();
      params.push_back(param);
    } while (consumeIf(Token::comma));
    if (expect(Token::r_paren, "',' or ')'"))
      return failure();
  }
  result = ArrayAttr::get(context, params);
  return success();
}

ParseResult Parser::parseIntList(SmallVectorImpl<int32_t> &values) {
  do {
    int64_t value = 0;
    if (parseInteger(value, "integer"))
      return failure();
    values.push_back(value);
  } while (consumeIf(Token::comma));
  if (values.size() > 3)
    return emitError("expected at most 3 dimensions");
  return success();
}

ParseResult Parser::parseFunctionHeader(FunctionHeaderSyntax &result) {
  if (token.is(Token::directive) && isLinkage(token.spelling)) {
    result.linkage = getString(token.spelling);
    consume();
  }
  if (token.isDirective(".entry")) {
    result.isEntry = true;
  } else if (!token.isDirective(".func")) {
    return emitExpected("'.entry' or '.func'");
  }
  consume();
  if (!result.isEntry && token.is(Token::l_paren) &&
      parseParamList(result.results))
    return failure();
  if (!token.is(Token::identifier) || token.spelling[0] == '%')
    return emitExpected("function name");
  result.name = getString(token.spelling);
  consume();
  if (token.is(Token::l_paren)) {
    if (parseParamList(result.params))
      return failure();
  } else {
    result.params = ArrayAttr::get(context, {});
  }
  SmallVector<Attribute> directives;
  while (token.is(Token::directive)) {
    StringRef spelling = token.spelling;
    const char *start = token.getLoc();
    consume();
    if (spelling == ".maxntid" || spelling == ".reqntid") {
      SmallVector<int32_t, 3> dims;
      if (parseIntList(dims))
        return failure();
      (spelling == ".maxntid" ? result.maxntid : result.reqntid) =
          DenseI32ArrayAttr::get(context, dims);
    } else if (spelling == ".minnctapersm" || spelling == ".maxnreg") {
      int64_t value = 0;
      if (parseInteger(value, "integer"))
        return failure();
      (spelling == ".maxnreg" ? result.maxnreg : result.minnctapersm) =
          getI32(value);
    } else {
      // Rarer directives (.noreturn, .maxclusterrank, .reqnctapercluster,
      // .explicitcluster, .pragma) are kept with their arguments as text.
      const char *end = start + spelling.size();
      while (token.is(Token::integer) || token.is(Token::comma) ||
             token.is(Token::string)) {
        end = token.spelling.end();
        consume();
      }
      if (spelling == ".pragma") {
        end = token.is(Token::semicolon) ? token.spelling.end() : end;
        consumeIf(Token::semicolon);
      }
      directives.push_back(getString(StringRef(start, end - start)));
    }
  }
  if (!directives.empty())
    result.directives = ArrayAttr::get(context, directives);
  return success();
}

ParseResult Parser::parseModuleHeader(ModuleHeaderSyntax &result) {
  bool any = false;
  while (token.is(Token::directive)) {
    StringRef spelling = token.spelling;
    if (spelling == ".version") {
      consume();
      if (!token.is(Token::floating) && !token.is(Token::integer))
        return emitExpected("version number");
      result.version = getString(token.spelling);
      consume();
    } else if (spelling == ".target") {
      consume();
      SmallVector<Attribute> targets;
      do {
        if (!token.is(Token::identifier))
          return emitExpected("target name");
        targets.push_back(getString(token.spelling));
        consume();
      } while (consumeIf(Token::comma));
      result.target = ArrayAttr::get(context, targets);
    } else if (spelling == ".address_size") {
      consume();
      int64_t size;
      if (parseInteger(size, "address size"))
        return failure();
      if (size != 32 && size != 64)
        return emitError("address size must be 32 or 64");
      result.addressSize = getI32(size);
    } else {
      break;
    }
    any = true;
  }
  if (!any)
    return emitExpected("'.version'");
  return success();
}

ParseResult Parser::parseLoc(LocSyntax &result) {
  consume(); // .loc
  int64_t file, line, column;
  if (parseInteger(file, "file index") || parseInteger(line, "line") ||
      parseInteger(column, "column"))
    return failure();
  result.file = getI32(file);
  result.line = getI32(line);
  result.column = getI32(column);
  if (token.is(Token::comma)) {
    lexer.resetPointer(token.spelling.end());
    result.extra = getString(lexer.lexRestOfLine());
    consume();
  }
  return success();
}

ParseResult Parser::parseFile(FileSyntax &result) {
  consume(); // .file
  int64_t index;
  if (parseInteger(index, "file index"))
    return failure();
  if (!token.is(Token::string))
    return emitExpected("file name string");
  result.index = getI32(index);
  result.path = getString(token.spelling.drop_front().drop_back());
  if (lexer.getCurPtr() != token.spelling.end())
    lexer.resetPointer(token.spelling.end());
  StringRef rest = lexer.lexRestOfLine();
  if (rest.consume_front(","))
    result.extra = getString(rest.trim());
  else if (!rest.empty())
    return emitError(rest.data(),
                     "expected ',' or end of line after file name");
  consume();
  return success();
}

ParseResult Parser::parseSection(StringAttr &name, StringAttr &contents) {
  consume(); // .section
  if (!token.is(Token::directive) && !token.is(Token::identifier))
    return emitExpected("section name");
  name = getString(token.spelling);
  consume();
  if (!token.is(Token::l_brace))
    return emitExpected("'{'");
  const char *open = token.getLoc();
  lexer.resetPointer(open + 1);
  StringRef text;
  if (!lexer.lexBalancedBraceBody(text))
    return emitError(open, "unterminated section: expected '}'");
  contents = getString(text);
  consume();
  return success();
}

ParseResult Parser::parsePragma(ArrayAttr &values) {
  consume(); // .pragma
  SmallVector<Attribute> strings;
  do {
    if (!token.is(Token::string))
      return emitExpected("pragma string");
    strings.push_back(getString(token.spelling.drop_front().drop_back()));
    consume();
  } while (consumeIf(Token::comma));
  values = ArrayAttr::get(context, strings);
  return parseStatementEnd();
}

ParseResult Parser::parseLabeledDirective(const char *labelStart,
                                          StringAttr &text) {
  const char *end = token.spelling.end();
  while (!token.is(Token::semicolon)) {
    if (token.is(Token::eof) || token.is(Token::error))
      return allowEofAsStatementEnd && token.is(Token::eof)
                 ? (text = getString(StringRef(labelStart, end - labelStart)),
                    success())
                 : emitExpected("';'");
    end = token.spelling.end();
    consume();
  }
  text = getString(StringRef(labelStart, end - labelStart));
  consume();
  return success();
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

uint64_t gpuopt::ptx::getTypeSize(StringRef type) {
  return llvm::StringSwitch<uint64_t>(type)
      .Cases({".b8", ".u8", ".s8"}, 1)
      .Cases({".b16", ".u16", ".s16", ".f16", ".bf16"}, 2)
      .Cases({".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2"}, 4)
      .Cases({".b64", ".u64", ".s64", ".f64"}, 8)
      .Case(".b128", 16)
      .Default(0);
}

/// Whether `registers` (name -> range count, -1 for a single register)
/// declares register `name`: `%r12` is declared by `%r<N>` with N > 12.
bool gpuopt::ptx::declaresRegister(const llvm::StringMap<int64_t> &registers,
                                   StringRef name) {
  if (registers.count(name))
    return true;
  size_t digits = name.size();
  while (digits > 0 && llvm::isDigit(name[digits - 1]))
    --digits;
  if (digits == name.size() || digits == 0)
    return false;
  auto it = registers.find(name.take_front(digits));
  uint64_t index;
  return it != registers.end() && it->second >= 0 &&
         !name.drop_front(digits).getAsInteger(10, index) &&
         index < uint64_t(it->second);
}
