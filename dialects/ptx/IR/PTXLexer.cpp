//===- PTXLexer.cpp - PTX tokens and lexer --------------------------------===//
//
// Reads PTX tokens from a buffer without copying it: identifiers with their
// dotted modifiers as one token, directives, numbers in PTX's notations,
// strings and punctuation; comments are skipped.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXLexer.h"

#include "llvm/ADT/StringExtras.h"

#include <array>

using namespace gpuopt::ptx;
using llvm::StringRef;

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
