//===- PTXSyntax.cpp - PTX text: lexer, statement parser, printer ---------===//
//
// One implementation of PTX's surface syntax for the importer, the exporter
// and the ops' quoted assembly format. The parser is hand-written recursive
// descent over a lexer that never copies the buffer; attributes that recur on
// most lines (registers, opcodes) are cached per parser.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXSyntax.h"
#include "ptx/IR/PTXOpcodes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <array>

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

namespace {
/// Character classes of PTX identifiers, looked up once per character.
struct CharClasses {
  enum : uint8_t { WordChar = 1, WordStart = 2 };
  uint8_t table[256] = {};
  constexpr CharClasses() {
    for (int c = 0; c < 256; ++c) {
      bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      bool digit = c >= '0' && c <= '9';
      if (alpha || digit || c == '_' || c == '$')
        table[c] |= WordChar;
      if (alpha || c == '_' || c == '$' || c == '%')
        table[c] |= WordStart;
    }
  }
};
constexpr CharClasses charClasses;
} // namespace

static bool isWordStart(char c) {
  return charClasses.table[uint8_t(c)] & CharClasses::WordStart;
}
static bool isWordChar(char c) {
  return charClasses.table[uint8_t(c)] & CharClasses::WordChar;
}

void Lexer::skipWhitespaceAndComments() {
  const char *end = buffer.end();
  while (curPtr != end) {
    char c = *curPtr;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      ++curPtr;
      continue;
    }
    if (c == '/' && curPtr + 1 != end) {
      if (curPtr[1] == '/') {
        while (curPtr != end && *curPtr != '\n')
          ++curPtr;
        continue;
      }
      if (curPtr[1] == '*') {
        size_t close = StringRef(curPtr + 2, end - curPtr - 2).find("*/");
        if (close == StringRef::npos)
          return; // lex() reports the unterminated comment.
        curPtr += 2 + close + 2;
        continue;
      }
    }
    return;
  }
}

Token Lexer::emitError(const char *start, const char *message) {
  errorMessage = message;
  curPtr = buffer.end();
  return Token{Token::error, StringRef(start, 1)};
}

// Reads one `::name` or `.name` component chain: `shared::cta`,
// `L2::cache_hint`, `mbarrier::complete_tx::bytes`.
static const char *skipComponent(const char *p, const char *end) {
  while (p != end && isWordChar(*p))
    ++p;
  while (p + 2 < end && p[0] == ':' && p[1] == ':' && isWordChar(p[2])) {
    p += 2;
    while (p != end && isWordChar(*p))
      ++p;
  }
  return p;
}

Token Lexer::lexWord(const char *start) {
  const char *end = buffer.end();
  curPtr = skipComponent(curPtr, end);
  // Dotted suffixes belong to the word: ld.global.f32, %tid.x, %v1.y.
  while (curPtr + 1 < end && curPtr[0] == '.' && isWordChar(curPtr[1]))
    curPtr = skipComponent(curPtr + 1, end);
  return formToken(Token::identifier, start);
}

Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  auto isHex = [](char c) { return llvm::isHexDigit(c); };
  if (*start == '0' && curPtr != end) {
    char kind = *curPtr;
    if (kind == 'f' || kind == 'F' || kind == 'd' || kind == 'D') {
      unsigned digits = (kind == 'f' || kind == 'F') ? 8 : 16;
      const char *p = curPtr + 1;
      while (p != end && isHex(*p))
        ++p;
      if (unsigned(p - curPtr - 1) != digits)
        return emitError(start, kind == 'f' || kind == 'F'
                                    ? "expected 8 hex digits after '0f'"
                                    : "expected 16 hex digits after '0d'");
      curPtr = p;
      return formToken(Token::floating, start);
    }
    if (kind == 'x' || kind == 'X') {
      const char *p = curPtr + 1;
      while (p != end && isHex(*p))
        ++p;
      if (p == curPtr + 1)
        return emitError(start, "expected hex digits after '0x'");
      curPtr = p;
      if (curPtr != end && (*curPtr == 'U' || *curPtr == 'u'))
        ++curPtr;
      return formToken(Token::integer, start);
    }
  }
  while (curPtr != end && llvm::isDigit(*curPtr))
    ++curPtr;
  bool isFloat = false;
  if (curPtr + 1 < end && *curPtr == '.' && llvm::isDigit(curPtr[1])) {
    isFloat = true;
    ++curPtr;
    while (curPtr != end && llvm::isDigit(*curPtr))
      ++curPtr;
  }
  if (curPtr != end && (*curPtr == 'e' || *curPtr == 'E')) {
    const char *p = curPtr + 1;
    if (p != end && (*p == '+' || *p == '-'))
      ++p;
    if (p != end && llvm::isDigit(*p)) {
      isFloat = true;
      curPtr = p;
      while (curPtr != end && llvm::isDigit(*curPtr))
        ++curPtr;
    }
  }
  if (!isFloat && curPtr != end && (*curPtr == 'U' || *curPtr == 'u'))
    ++curPtr;
  if (curPtr != end && isWordChar(*curPtr))
    return emitError(curPtr, "invalid character in number");
  return formToken(isFloat ? Token::floating : Token::integer, start);
}

Token Lexer::lexString(const char *start) {
  const char *end = buffer.end();
  while (curPtr != end) {
    char c = *curPtr++;
    if (c == '"')
      return formToken(Token::string, start);
    if (c == '\\' && curPtr != end)
      ++curPtr;
    else if (c == '\n')
      break;
  }
  return emitError(start, "unterminated string");
}

Token Lexer::lex() {
  skipWhitespaceAndComments();
  const char *start = curPtr;
  if (curPtr == buffer.end())
    return Token{Token::eof, StringRef(curPtr, 0)};
  char c = *curPtr++;
  switch (c) {
  case ',':
    return formToken(Token::comma, start);
  case ';':
    return formToken(Token::semicolon, start);
  case ':':
    return formToken(Token::colon, start);
  case '(':
    return formToken(Token::l_paren, start);
  case ')':
    return formToken(Token::r_paren, start);
  case '[':
    return formToken(Token::l_square, start);
  case ']':
    return formToken(Token::r_square, start);
  case '{':
    return formToken(Token::l_brace, start);
  case '}':
    return formToken(Token::r_brace, start);
  case '<':
    return formToken(Token::less, start);
  case '>':
    return formToken(Token::greater, start);
  case '+':
    return formToken(Token::plus, start);
  case '-':
    return formToken(Token::minus, start);
  case '!':
    return formToken(Token::bang, start);
  case '|':
    return formToken(Token::pipe, start);
  case '@':
    return formToken(Token::at, start);
  case '=':
    return formToken(Token::equal, start);
  case '"':
    return lexString(start);
  case '/':
    return emitError(start, "unterminated block comment");
  case '.':
    if (curPtr != buffer.end() && isWordStart(*curPtr) && *curPtr != '%') {
      curPtr = skipComponent(curPtr, buffer.end());
      return formToken(Token::directive, start);
    }
    return emitError(start, "unexpected '.'");
  default:
    if (llvm::isDigit(c))
      return lexNumber(start);
    if (isWordStart(c))
      return lexWord(start);
    return emitError(start, "unexpected character");
  }
}

bool Lexer::lexBalancedBraceBody(StringRef &text) {
  const char *start = curPtr, *end = buffer.end();
  // Debug sections are megabytes of `.b8 0x12,...` lines: skip the bytes
  // that cannot change the nesting with a table lookup each.
  static const std::array<bool, 256> special = [] {
    std::array<bool, 256> table{};
    for (unsigned char c : {'/', '"', '{', '}'})
      table[c] = true;
    return table;
  }();
  unsigned depth = 1;
  while (curPtr != end) {
    while (curPtr != end && !special[static_cast<unsigned char>(*curPtr)])
      ++curPtr;
    if (curPtr == end)
      break;
    char c = *curPtr;
    if (c == '/' && curPtr + 1 != end && curPtr[1] == '/') {
      while (curPtr != end && *curPtr != '\n')
        ++curPtr;
      continue;
    }
    if (c == '"') {
      ++curPtr;
      while (curPtr != end && *curPtr != '"' && *curPtr != '\n')
        curPtr += (*curPtr == '\\' && curPtr + 1 != end) ? 2 : 1;
      if (curPtr != end)
        ++curPtr;
      continue;
    }
    ++curPtr;
    if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      text = StringRef(start, curPtr - 1 - start);
      return true;
    }
  }
  return false;
}

StringRef Lexer::lexRestOfLine() {
  const char *start = curPtr, *end = buffer.end();
  while (curPtr != end && *curPtr != '\n' && *curPtr != '\r' &&
         !(*curPtr == '/' && curPtr + 1 != end && curPtr[1] == '/'))
    ++curPtr;
  return StringRef(start, curPtr - start).trim();
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

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
// Printer
//===----------------------------------------------------------------------===//

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

uint64_t gpuopt::ptx::getTypeSize(StringRef type) {
  return llvm::StringSwitch<uint64_t>(type)
      .Cases({".b8", ".u8", ".s8"}, 1)
      .Cases({".b16", ".u16", ".s16", ".f16", ".bf16"}, 2)
      .Cases({".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2"}, 4)
      .Cases({".b64", ".u64", ".s64", ".f64"}, 8)
      .Case(".b128", 16)
      .Default(0);
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
