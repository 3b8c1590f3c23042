//===- PTXParser.h - PTX statement parser -----------------------*- C++ -*-===//
//
// The parser of PTX statements, shared by the .ptx importer and by the custom
// assembly formats of the ptx ops (which print as quoted PTX). It is
// recursive descent over the lexer (PTXLexer.h); each `parse*` method reads
// one construct into a `*Syntax` struct of attributes that the op builders
// take.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXPARSER_H
#define GPUOPT_DIALECT_PTX_IR_PTXPARSER_H

#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXLexer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace gpuopt::ptx {

//===----------------------------------------------------------------------===//
// Parsed constructs
//===----------------------------------------------------------------------===//

struct InstructionSyntax {
  RegisterAttr guard;
  bool guardNegated = false;
  mlir::StringAttr opcode;
  mlir::ArrayAttr modifiers;
  mlir::ArrayAttr operands;
  /// Some operand is a bare name, classified as a symbol for now; see
  /// resolveBareIdentifiers.
  bool hasBareIdentifier = false;
};

struct RegisterDeclSyntax {
  mlir::StringAttr type;
  mlir::IntegerAttr vector, align;
  /// Names with their range count (null for a single register).
  llvm::SmallVector<std::pair<mlir::StringAttr, mlir::IntegerAttr>, 2> names;
};

struct VariableSyntax {
  mlir::StringAttr linkage, space, type, initializer;
  mlir::IntegerAttr align, vector;
  mlir::ArrayAttr attributes;
  struct Declarator {
    mlir::StringAttr name;
    mlir::DenseI64ArrayAttr dims;
  };
  llvm::SmallVector<Declarator, 1> declarators;
};

struct FunctionHeaderSyntax {
  bool isEntry = false;
  mlir::StringAttr linkage, name;
  mlir::ArrayAttr params, results;
  mlir::DenseI32ArrayAttr maxntid, reqntid;
  mlir::IntegerAttr minnctapersm, maxnreg;
  mlir::ArrayAttr directives;
};

struct LocSyntax {
  mlir::IntegerAttr file, line, column;
  mlir::StringAttr extra;
};

struct FileSyntax {
  mlir::IntegerAttr index;
  mlir::StringAttr path, extra;
};

struct ModuleHeaderSyntax {
  mlir::StringAttr version;
  mlir::ArrayAttr target;
  mlir::IntegerAttr addressSize;
};

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
public:
  /// Maps a pointer into the buffer to the location diagnostics use.
  using LocationFn = std::function<mlir::Location(const char *)>;

  Parser(llvm::StringRef buffer, mlir::MLIRContext *context,
         LocationFn locationOf);

  mlir::MLIRContext *getContext() const { return context; }
  const Token &getToken() const { return token; }
  void consume() {
    previousEnd = token.spelling.end();
    token = lexer.lex();
  }
  /// The token after the current one, without consuming anything.
  Token peek() {
    const char *saved = lexer.getCurPtr();
    Token next = lexer.lex();
    lexer.resetPointer(saved);
    return next;
  }
  bool consumeIf(Token::Kind kind) {
    if (!token.is(kind))
      return false;
    consume();
    return true;
  }
  mlir::Location getLocation(const char *ptr) const { return locationOf(ptr); }
  mlir::InFlightDiagnostic emitError(const char *ptr, const llvm::Twine &msg);
  mlir::InFlightDiagnostic emitError(const llvm::Twine &msg) {
    return emitError(token.getLoc(), msg);
  }
  /// Reports the lexer's error when the current token is an error token.
  mlir::ParseResult emitExpected(const llvm::Twine &what);
  mlir::ParseResult expect(Token::Kind kind, const llvm::Twine &what);
  mlir::ParseResult parseInteger(int64_t &value, const llvm::Twine &what);
  /// `;`, or the end of the text when `allowEof` (the statement text of an op
  /// has no semicolon).
  mlir::ParseResult parseStatementEnd();

  mlir::ParseResult parseModuleHeader(ModuleHeaderSyntax &result);
  /// From an optional linkage directive up to, not including, the body `{`
  /// or the `;` of a declaration.
  mlir::ParseResult parseFunctionHeader(FunctionHeaderSyntax &result);
  mlir::ParseResult parseInstruction(InstructionSyntax &result);
  mlir::ParseResult parseRegisterDecl(RegisterDeclSyntax &result);
  mlir::ParseResult parseVariable(VariableSyntax &result);
  mlir::ParseResult parseLoc(LocSyntax &result);
  mlir::ParseResult parseFile(FileSyntax &result);
  mlir::ParseResult parseSection(mlir::StringAttr &name,
                                 mlir::StringAttr &contents);
  mlir::ParseResult parsePragma(mlir::ArrayAttr &values);
  /// A label followed by `.branchtargets`, `.calltargets` or
  /// `.callprototype`, up to the `;` (consumed, not part of the text);
  /// `labelStart` points at the label.
  mlir::ParseResult parseLabeledDirective(const char *labelStart,
                                          mlir::StringAttr &text);

  /// Whether the current token starts a variable declaration.
  bool atVariableDecl() const;

  /// Set when the text has no semicolons (the statement text of an op).
  bool allowEofAsStatementEnd = false;
  /// Warn, once per opcode, about opcodes missing from the opcode table
  /// (the importer sets it: one parser reads a whole file).
  bool warnUnknownOpcodes = false;
  /// Read `{bytes}`, `{addr}` and `{site}` as #ptx.placeholder operands
  /// rather than one-element vectors: probe snippets hold them between
  /// --probe-insert and --probe-lower (the ops' assembly format sets it; PTX
  /// files never hold one).
  bool allowPlaceholders = false;

private:
  mlir::ParseResult parseOperand(mlir::Attribute &result, bool isBranch,
                                 bool &bare);
  mlir::ParseResult
  parseOperandList(Token::Kind close,
                   llvm::SmallVectorImpl<mlir::Attribute> &ops, bool isBranch,
                   bool &bare);
  mlir::ParseResult parseImmediate(mlir::Attribute &result, bool negate);
  mlir::ParseResult parseParamList(mlir::ArrayAttr &result);
  mlir::ParseResult parseParam(mlir::Attribute &result);
  mlir::ParseResult parseDims(llvm::SmallVectorImpl<int64_t> &dims);
  /// `.align N` or `.v2/.v4/.v8` before a register or variable type; sets
  /// `isQualifier` to whether the current token was one.
  mlir::ParseResult parseStorageQualifier(mlir::IntegerAttr &align,
                                          mlir::IntegerAttr &vector,
                                          bool &isQualifier);
  mlir::ParseResult parseIntList(llvm::SmallVectorImpl<int32_t> &values);
  /// Checks an opcode's modifiers (pointing into the text) against the
  /// opcode table, or warns about an unknown opcode.
  mlir::LogicalResult checkOpcode(llvm::StringRef base,
                                  llvm::ArrayRef<llvm::StringRef> modifiers);
  mlir::Attribute getRegister(llvm::StringRef name);
  mlir::StringAttr getString(llvm::StringRef value);
  mlir::IntegerAttr getI32(int64_t value);

  Lexer lexer;
  Token token;
  /// Where the last consumed token ended: a missing `;` is reported there.
  const char *previousEnd = nullptr;
  mlir::MLIRContext *context;
  LocationFn locationOf;
  // Caches: the same registers and opcodes recur on most lines.
  llvm::DenseMap<llvm::StringRef, mlir::Attribute> operandCache;
  llvm::DenseMap<llvm::StringRef, std::pair<mlir::StringAttr, mlir::ArrayAttr>>
      opcodeCache;
  llvm::DenseMap<int64_t, mlir::IntegerAttr> i32Cache;
  /// Unknown opcodes already warned about.
  llvm::StringSet<> warnedOpcodes;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// Bytes of a PTX fundamental type named with its dot (".u32"), or 0.
uint64_t getTypeSize(llvm::StringRef type);

/// Whether `registers` (name -> range count, -1 for a single register)
/// declares register `name`: `%r12` is declared by `%r<N>` with N > 12.
bool declaresRegister(const llvm::StringMap<int64_t> &registers,
                      llvm::StringRef name);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXPARSER_H
