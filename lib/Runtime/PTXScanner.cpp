//===- PTXScanner.cpp - Launch manifests from PTX entry headers -----------===//
//
// A tokenizer that knows PTX comments, strings and punctuation, and a parser
// for the module header and `.entry` declarations only. Everything inside
// `{ ... }` is skipped.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/PTXScanner.h"

#include <cctype>
#include <fstream>
#include <sstream>

using namespace gpuopt::runtime;

namespace {
struct Token {
  enum Kind { Word, Number, Punct, String, End } K = End;
  std::string_view Text;
  unsigned Line = 1, Col = 1;
};

/// Splits PTX into words (identifiers and directives, with their leading
/// '.', '%' or '$'), numbers, strings and one-character punctuation.
class Lexer {
public:
  explicit Lexer(std::string_view Text) : Text(Text) {}

  Token next() {
    skipSpaceAndComments();
    Token T;
    T.Line = Line;
    T.Col = Col;
    if (Pos >= Text.size())
      return T;
    size_t Start = Pos;
    char C = Text[Pos];
    if (C == '"') {
      advance();
      while (Pos < Text.size() && Text[Pos] != '"') {
        if (Text[Pos] == '\\' && Pos + 1 < Text.size())
          advance();
        advance();
      }
      if (Pos < Text.size())
        advance();
      T.K = Token::String;
    } else if (isWordChar(C) && !std::isdigit(static_cast<unsigned char>(C))) {
      while (Pos < Text.size() && isWordChar(Text[Pos]))
        advance();
      T.K = Token::Word;
    } else if (std::isdigit(static_cast<unsigned char>(C))) {
      while (Pos < Text.size() &&
             (std::isalnum(static_cast<unsigned char>(Text[Pos])) ||
              Text[Pos] == '.'))
        advance();
      T.K = Token::Number;
    } else {
      advance();
      T.K = Token::Punct;
    }
    T.Text = Text.substr(Start, Pos - Start);
    return T;
  }

private:
  static bool isWordChar(char C) {
    return std::isalnum(static_cast<unsigned char>(C)) || C == '_' ||
           C == '.' || C == '$' || C == '%';
  }

  void advance() {
    if (Text[Pos] == '\n') {
      ++Line;
      Col = 1;
    } else {
      ++Col;
    }
    ++Pos;
  }

  void skipSpaceAndComments() {
    while (Pos < Text.size()) {
      char C = Text[Pos];
      if (std::isspace(static_cast<unsigned char>(C))) {
        advance();
      } else if (C == '/' && Pos + 1 < Text.size() && Text[Pos + 1] == '/') {
        while (Pos < Text.size() && Text[Pos] != '\n')
          advance();
      } else if (C == '/' && Pos + 1 < Text.size() && Text[Pos + 1] == '*') {
        advance();
        advance();
        while (Pos < Text.size() &&
               !(Text[Pos] == '*' && Pos + 1 < Text.size() &&
                 Text[Pos + 1] == '/'))
          advance();
        if (Pos < Text.size()) {
          advance();
          advance();
        }
      } else {
        return;
      }
    }
  }

  std::string_view Text;
  size_t Pos = 0;
  unsigned Line = 1, Col = 1;
};

class Scanner {
public:
  Scanner(std::string_view Text, std::string Source)
      : Lex(Text), Source(std::move(Source)) {
    Tok = Lex.next();
  }

  Expected<Manifest> scan();

private:
  void consume() { Tok = Lex.next(); }
  bool is(std::string_view S) const {
    return Tok.K != Token::End && Tok.Text == S;
  }
  Status error(const Token &T, const std::string &What) const {
    return Status::error(Source + ":" + std::to_string(T.Line) + ":" +
                         std::to_string(T.Col) + ": error: " + What);
  }
  Status expectPunct(char C, const char *Context) {
    if (Tok.K != Token::Punct || Tok.Text[0] != C)
      return error(Tok, std::string("expected '") + C + "' " + Context);
    consume();
    return Status::success();
  }
  Status parseUInt(uint64_t &Out, const char *What);
  Status skipBlock();
  Status parseDims(Dim3 &Out, const char *Directive);
  Status parseParam(KernelInfo &K, uint64_t &Offset);
  Status parseEntry(Manifest &M);

  Lexer Lex;
  Token Tok;
  std::string Source;
  bool HasExternShared = false;
};
} // namespace

Status Scanner::parseUInt(uint64_t &Out, const char *What) {
  if (Tok.K != Token::Number)
    return error(Tok, std::string("expected ") + What);
  std::string S(Tok.Text);
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(S.c_str(), &End, 0);
  if (errno || *End)
    return error(Tok, std::string("expected ") + What + ", got '" + S + "'");
  Out = V;
  consume();
  return Status::success();
}

Status Scanner::skipBlock() {
  Token Open = Tok;
  consume(); // '{'
  unsigned Depth = 1;
  while (Depth) {
    if (Tok.K == Token::End)
      return error(Open, "'{' is never closed");
    if (Tok.K == Token::Punct && Tok.Text[0] == '{')
      ++Depth;
    else if (Tok.K == Token::Punct && Tok.Text[0] == '}')
      --Depth;
    consume();
  }
  return Status::success();
}

Status Scanner::parseDims(Dim3 &Out, const char *Directive) {
  uint64_t D[3] = {1, 1, 1};
  for (int I = 0; I < 3; ++I) {
    if (Status S = parseUInt(
            D[I], (std::string("a dimension after ") + Directive).c_str()))
      return S;
    if (!(Tok.K == Token::Punct && Tok.Text[0] == ','))
      break;
    consume();
  }
  Out = {D[0], D[1], D[2]};
  return Status::success();
}

Status Scanner::parseParam(KernelInfo &K, uint64_t &Offset) {
  if (!is(".param"))
    return error(Tok, "expected '.param' in the kernel's parameter list");
  consume();
  ParamInfo P;
  uint64_t ExplicitAlign = 0;
  bool SeenPtr = false;
  while (Tok.K == Token::Word && Tok.Text[0] == '.') {
    std::string_view D = Tok.Text.substr(1);
    Token DirTok = Tok;
    consume();
    if (D == "align") {
      uint64_t A = 0;
      if (Status S = parseUInt(A, "an alignment after .align"))
        return S;
      if (!A || (A & (A - 1)))
        return error(DirTok, "alignment must be a power of two");
      (SeenPtr ? P.PointeeAlign : ExplicitAlign) = A;
    } else if (D == "ptr") {
      SeenPtr = true;
      P.Kind = ParamKind::Pointer;
    } else if (SeenPtr && (D == "global" || D == "shared" || D == "const" ||
                           D == "local")) {
      P.Space = std::string(D);
    } else if (ptxTypeSize(D) && P.Type.empty()) {
      P.Type = std::string(D);
    } else {
      return error(DirTok, "unexpected '" + std::string(DirTok.Text) +
                               "' in a parameter declaration");
    }
  }
  if (P.Type.empty())
    return error(Tok, "expected a parameter type (.u32, .f32, .b8 ...)");
  if (Tok.K != Token::Word)
    return error(Tok, "expected a parameter name");
  P.Name = std::string(Tok.Text);
  consume();
  uint64_t TypeSize = *ptxTypeSize(P.Type);
  P.Size = TypeSize;
  if (Tok.K == Token::Punct && Tok.Text[0] == '[') {
    consume();
    uint64_t N = 0;
    if (Status S = parseUInt(N, "an array size"))
      return S;
    if (Status S = expectPunct(']', "after the array size"))
      return S;
    P.Size = TypeSize * N;
    P.Kind = ParamKind::Bytes;
  }
  if (P.Kind == ParamKind::Pointer && TypeSize != 8)
    return error(Tok, "a .ptr parameter must be 64-bit");
  P.Align = ExplicitAlign ? ExplicitAlign : TypeSize;
  Offset = (Offset + P.Align - 1) / P.Align * P.Align;
  P.Offset = Offset;
  Offset += P.Size;
  K.Params.push_back(std::move(P));
  return Status::success();
}

Status Scanner::parseEntry(Manifest &M) {
  consume(); // .entry
  if (Tok.K != Token::Word)
    return error(Tok, "expected the kernel name after .entry");
  KernelInfo K;
  K.Name = std::string(Tok.Text);
  consume();
  if (Tok.K == Token::Punct && Tok.Text[0] == '(') {
    consume();
    uint64_t Offset = 0;
    if (!(Tok.K == Token::Punct && Tok.Text[0] == ')')) {
      while (true) {
        if (Status S = parseParam(K, Offset))
          return S;
        if (Tok.K == Token::Punct && Tok.Text[0] == ',') {
          consume();
          continue;
        }
        break;
      }
    }
    if (Status S = expectPunct(')', "after the parameter list"))
      return S;
  }
  // Performance directives up to the body.
  while (true) {
    if (Tok.K == Token::End)
      return error(Tok, "expected the body of kernel '" + K.Name + "'");
    if (Tok.K == Token::Punct && Tok.Text[0] == ';') {
      consume(); // A declaration without a body: nothing to launch.
      return Status::success();
    }
    if (Tok.K == Token::Punct && Tok.Text[0] == '{')
      break;
    if (is(".reqntid") || is(".maxntid")) {
      bool Req = is(".reqntid");
      consume();
      Dim3 D;
      if (Status S = parseDims(D, Req ? ".reqntid" : ".maxntid"))
        return S;
      (Req ? K.Launch.Block : K.Launch.MaxThreads) = D;
      continue;
    }
    consume(); // .maxnreg N, .minnctapersm N, .pragma "..."; ...
  }
  if (Status S = skipBlock())
    return S;
  M.Kernels.push_back(std::move(K));
  return Status::success();
}

Expected<Manifest> Scanner::scan() {
  Manifest M;
  M.Module.Path = Source;
  M.Module.Format = "ptx";
  bool SawVersion = false;
  while (Tok.K != Token::End) {
    if (is(".version")) {
      SawVersion = true;
      consume();
      continue;
    }
    if (is(".target")) {
      consume();
      if (Tok.K != Token::Word)
        return error(Tok, "expected a chip after .target");
      M.Module.Target = std::string(Tok.Text);
      consume();
      continue;
    }
    if (is(".extern")) {
      // `.extern .shared .align 16 .b8 smem[];` at module scope.
      consume();
      while (Tok.K != Token::End &&
             !(Tok.K == Token::Punct && Tok.Text[0] == ';')) {
        if (is(".shared"))
          HasExternShared = true;
        if (is(".func") || is(".entry"))
          break;
        consume();
      }
      continue;
    }
    if (is(".entry")) {
      if (Status S = parseEntry(M))
        return S;
      continue;
    }
    if (Tok.K == Token::Punct && Tok.Text[0] == '{') {
      if (Status S = skipBlock())
        return S;
      continue;
    }
    consume();
  }
  if (!SawVersion)
    return error(Tok, "no .version directive: not a PTX module");
  for (KernelInfo &K : M.Kernels)
    K.Launch.DynamicSmem =
        HasExternShared ? std::nullopt : std::optional<uint64_t>(0);
  if (Status S = validateManifest(M))
    return Status::error(Source + ": " + S.message());
  return M;
}

Expected<Manifest> gpuopt::runtime::scanPTX(std::string_view Text,
                                            const std::string &Source) {
  Scanner S(Text, Source);
  return S.scan();
}

Expected<Manifest> gpuopt::runtime::scanPTXFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return Status::error(Path + ": cannot open the PTX file");
  std::ostringstream SS;
  SS << In.rdbuf();
  std::string Text = SS.str();
  return scanPTX(Text, Path);
}
