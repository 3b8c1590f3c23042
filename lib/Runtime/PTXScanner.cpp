//===- PTXScanner.cpp - Launch manifests from PTX entry headers -----------===//
//
// A tokenizer that knows PTX comments, strings and punctuation, and a parser
// for the module header, `.entry` declarations and module-scope variables.
// Function bodies are skipped by brace matching, noting only the names they
// mention, so that each kernel's use of `.extern .shared` arrays is known.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/PTXScanner.h"

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

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
  /// The module-scope variables scan() found.
  std::vector<PTXVariable> takeVariables() { return std::move(Variables); }

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
  using NameSet = std::unordered_set<std::string_view>;

  Status parseUInt(uint64_t &Out, const char *What);
  /// Skips a `{ ... }` block; with Names, collects the names it mentions.
  Status skipBlock(NameSet *Names = nullptr);
  Status parseDims(Dim3 &Out, const char *Directive);
  Status parseParam(KernelInfo &K, uint64_t &Offset);
  Status parseEntry(Manifest &M);
  Status parseFunc();
  /// A module-scope declaration, from its first directive (`.extern`,
  /// `.const`, `.global`) to the ';'.
  Status parseVariable();

  Lexer Lex;
  Token Tok;
  std::string Source;
  /// Module-scope `.const` and `.global` variables.
  std::vector<PTXVariable> Variables;
  /// Module-scope `.extern .shared` arrays.
  NameSet ExternShared;
  /// The names each kernel's and device function's body mentions (only
  /// collected once the module has an `.extern .shared` array).
  std::vector<NameSet> EntryNames;
  std::map<std::string_view, NameSet> FuncNames;
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

Status Scanner::skipBlock(NameSet *Names) {
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
    else if (Names && Tok.K == Token::Word && Tok.Text[0] != '.' &&
             Tok.Text[0] != '%')
      Names->insert(Tok.Text);
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
  NameSet Names;
  if (Status S = skipBlock(ExternShared.empty() ? nullptr : &Names))
    return S;
  M.Kernels.push_back(std::move(K));
  EntryNames.push_back(std::move(Names));
  return Status::success();
}

Status Scanner::parseFunc() {
  consume(); // .func
  // `.func (.param .b32 r) name (.param ...) directives { ... }` or `;`.
  std::string_view Name;
  unsigned Parens = 0;
  while (Tok.K != Token::End) {
    if (Tok.K == Token::Punct && Tok.Text[0] == '(')
      ++Parens;
    else if (Tok.K == Token::Punct && Tok.Text[0] == ')' && Parens)
      --Parens;
    else if (!Parens && Tok.K == Token::Punct &&
             (Tok.Text[0] == ';' || Tok.Text[0] == '{'))
      break;
    else if (!Parens && Name.empty() && Tok.K == Token::Word &&
             Tok.Text[0] != '.')
      Name = Tok.Text;
    consume();
  }
  if (Tok.K == Token::End)
    return error(Tok,
                 "expected the body of function '" + std::string(Name) + "'");
  if (Tok.Text[0] == ';') {
    consume(); // A prototype.
    return Status::success();
  }
  NameSet Names;
  if (Status S = skipBlock(ExternShared.empty() ? nullptr : &Names))
    return S;
  if (!Name.empty())
    FuncNames[Name] = std::move(Names);
  return Status::success();
}

Status Scanner::parseVariable() {
  bool Extern = false, Shared = false;
  PTXVariable V;
  uint64_t Elem = 0, Count = 1;
  bool Sized = true;
  while (Tok.K == Token::Word && Tok.Text[0] == '.') {
    std::string_view D = Tok.Text.substr(1);
    consume();
    if (D == "extern")
      Extern = true;
    else if (D == "shared")
      Shared = true;
    else if (D == "const" || D == "global")
      V.Space = std::string(D);
    else if (D == "func" || D == "entry")
      return Status::success(); // `.extern .func`: the caller goes on.
    else if (D == "align" && Tok.K == Token::Number)
      consume();
    else if (D == "v2" || D == "v4" || D == "v8")
      Count *= uint64_t(D[1] - '0');
    else if (std::optional<uint64_t> Size = ptxTypeSize(D))
      Elem = *Size;
  }
  if (Tok.K != Token::Word)
    return Status::success(); // Not a declaration this scanner knows.
  std::string_view Name = Tok.Text;
  V.Name = std::string(Name);
  consume();
  while (Tok.K == Token::Punct && Tok.Text[0] == '[') {
    consume();
    uint64_t N = 0;
    if (Tok.K == Token::Number) {
      if (Status S = parseUInt(N, "an array size"))
        return S;
      Count *= N;
    } else {
      Sized = false;
    }
    if (Status S = expectPunct(']', "after the array size"))
      return S;
  }
  if (Shared && Extern)
    ExternShared.insert(Name);
  // Up to the end of the declaration (an initializer may follow).
  while (Tok.K != Token::End &&
         !(Tok.K == Token::Punct && Tok.Text[0] == ';')) {
    if (Tok.K == Token::Punct && Tok.Text[0] == '{') {
      if (Status S = skipBlock())
        return S;
      continue;
    }
    consume();
  }
  if (!V.Space.empty()) {
    if (Sized && !Extern && Elem)
      V.Bytes = Elem * Count;
    Variables.push_back(std::move(V));
  }
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
    if (is(".extern") || is(".const") || is(".global")) {
      // `.extern .shared .align 16 .b8 smem[];`, `.const .f32 c[4] = {...};`
      if (Status S = parseVariable())
        return S;
      continue;
    }
    if (is(".func")) {
      if (Status S = parseFunc())
        return S;
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
  // A kernel needs dynamic shared memory when its body, or a device
  // function it names, names an `.extern .shared` array.
  for (size_t I = 0; I < M.Kernels.size(); ++I) {
    bool Dynamic = false;
    std::vector<const NameSet *> Work = {&EntryNames[I]};
    std::unordered_set<const NameSet *> Seen = {&EntryNames[I]};
    while (!Work.empty() && !Dynamic) {
      const NameSet *Names = Work.back();
      Work.pop_back();
      for (std::string_view Name : *Names) {
        if (ExternShared.count(Name)) {
          Dynamic = true;
          break;
        }
        auto It = FuncNames.find(Name);
        if (It != FuncNames.end() && Seen.insert(&It->second).second)
          Work.push_back(&It->second);
      }
    }
    M.Kernels[I].Launch.DynamicSmem =
        Dynamic ? std::nullopt : std::optional<uint64_t>(0);
  }
  if (Status S = validateManifest(M))
    return Status::error(Source + ": " + S.message());
  return M;
}

Expected<Manifest>
gpuopt::runtime::scanPTX(std::string_view Text, const std::string &Source,
                         std::vector<PTXVariable> *Variables) {
  Scanner S(Text, Source);
  Expected<Manifest> M = S.scan();
  if (M && Variables)
    *Variables = S.takeVariables();
  return M;
}

Expected<Manifest>
gpuopt::runtime::scanPTXFile(const std::string &Path,
                             std::vector<PTXVariable> *Variables) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return Status::error(Path + ": cannot open the PTX file");
  std::ostringstream SS;
  SS << In.rdbuf();
  std::string Text = SS.str();
  return scanPTX(Text, Path, Variables);
}
