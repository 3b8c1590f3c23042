//===- PTXLexer.h - PTX tokens and lexer ------------------------*- C++ -*-===//
//
// The tokens of PTX text and a lexer that reads them from one buffer without
// copying it. The statement parser (PTXParser.h) reads its tokens from here.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXLEXER_H
#define GPUOPT_DIALECT_PTX_IR_PTXLEXER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace gpuopt::ptx {

struct Token {
  enum Kind : uint8_t {
    eof,
    error,
    identifier, // ld.global.f32, %r1, %tid.x, $L__BB0_1, foo
    directive,  // .reg, .b32, .global
    integer,    // 12, 0x1F, 017, 12U
    floating,   // 0f3F800000, 0d3FF0000000000000, 1.5
    string,     // "nounroll"
    comma,
    semicolon,
    colon,
    l_paren,
    r_paren,
    l_square,
    r_square,
    l_brace,
    r_brace,
    less,
    greater,
    plus,
    minus,
    bang,
    pipe,
    at,
    equal,
  };
  Kind kind = eof;
  llvm::StringRef spelling;

  bool is(Kind k) const { return kind == k; }
  bool isDirective(llvm::StringRef name) const {
    return kind == directive && spelling == name;
  }
  const char *getLoc() const { return spelling.data(); }
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : buffer(buffer), curPtr(buffer.begin()) {}

  Token lex();
  const char *getCurPtr() const { return curPtr; }
  void resetPointer(const char *ptr) { curPtr = ptr; }
  llvm::StringRef getBuffer() const { return buffer; }
  /// The message of the last error token.
  llvm::StringRef getErrorMessage() const { return errorMessage; }

  /// Returns the raw text from `start` up to (not including) the `}` that
  /// closes an already consumed `{`, and moves past that `}`; comments and
  /// strings are skipped when counting braces. Returns false at end of input.
  bool lexBalancedBraceBody(llvm::StringRef &text);
  /// Returns the raw text from the current position to the end of the line.
  llvm::StringRef lexRestOfLine();

private:
  void skipWhitespaceAndComments();
  Token formToken(Token::Kind kind, const char *start) {
    return Token{kind, llvm::StringRef(start, curPtr - start)};
  }
  Token emitError(const char *start, const char *message);
  Token lexWord(const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);

  llvm::StringRef buffer;
  const char *curPtr;
  const char *errorMessage = "";
};

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXLEXER_H
