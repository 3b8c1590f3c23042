//===- ArgSpec.cpp - Kernel argument specifications -----------------------===//
//
// Parsing, checking and host-side initialisation of the buffers and scalars
// a launcher passes to a kernel (syntax in ArgSpec.h).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ArgSpec.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

using namespace gpuopt::runtime;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

namespace {
struct TypeRow {
  ElemType T;
  const char *Name;
  uint64_t Size;
  bool Float, Signed;
};
const TypeRow TypeTable[] = {
    {ElemType::U8, "u8", 1, false, false},
    {ElemType::S8, "s8", 1, false, true},
    {ElemType::U16, "u16", 2, false, false},
    {ElemType::S16, "s16", 2, false, true},
    {ElemType::U32, "u32", 4, false, false},
    {ElemType::S32, "s32", 4, false, true},
    {ElemType::U64, "u64", 8, false, false},
    {ElemType::S64, "s64", 8, false, true},
    {ElemType::F16, "f16", 2, true, true},
    {ElemType::BF16, "bf16", 2, true, true},
    {ElemType::F32, "f32", 4, true, true},
    {ElemType::F64, "f64", 8, true, true},
};
const TypeRow &row(ElemType T) {
  for (const TypeRow &R : TypeTable)
    if (R.T == T)
      return R;
  return TypeTable[0];
}
} // namespace

std::optional<ElemType> gpuopt::runtime::parseElemType(std::string_view Name) {
  for (const TypeRow &R : TypeTable)
    if (Name == R.Name)
      return R.T;
  // i8..i64 as aliases of the signed types.
  if (Name.size() >= 2 && Name[0] == 'i') {
    std::string S = "s" + std::string(Name.substr(1));
    for (const TypeRow &R : TypeTable)
      if (S == R.Name)
        return R.T;
  }
  return std::nullopt;
}

const char *gpuopt::runtime::toString(ElemType T) { return row(T).Name; }
uint64_t gpuopt::runtime::elemSize(ElemType T) { return row(T).Size; }
bool gpuopt::runtime::isFloat(ElemType T) { return row(T).Float; }
bool gpuopt::runtime::isSigned(ElemType T) { return row(T).Signed; }

uint16_t gpuopt::runtime::floatToHalf(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  uint32_t Sign = (X >> 16) & 0x8000;
  uint32_t Exp = (X >> 23) & 0xFF;
  uint32_t Man = X & 0x7FFFFF;
  if (Exp == 0xFF) // Inf or NaN (NaNs stay quiet NaNs).
    return Sign | 0x7C00 | (Man ? 0x200 | (Man >> 13) : 0);
  int E = int(Exp) - 127 + 15;
  if (E >= 31)
    return Sign | 0x7C00;
  if (E <= 0) { // Subnormal or zero in half precision.
    if (E < -10)
      return Sign;
    Man |= 0x800000;
    int Shift = 14 - E;
    uint32_t H = Man >> Shift;
    uint32_t Rem = Man & ((1u << Shift) - 1);
    uint32_t Half = 1u << (Shift - 1);
    if (Rem > Half || (Rem == Half && (H & 1)))
      ++H;
    return Sign | H;
  }
  uint32_t H = (uint32_t(E) << 10) | (Man >> 13);
  uint32_t Rem = Man & 0x1FFF;
  if (Rem > 0x1000 || (Rem == 0x1000 && (H & 1)))
    ++H; // A carry into the exponent is the correct rounding (up to inf).
  return Sign | H;
}

float gpuopt::runtime::halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H & 0x8000) << 16;
  uint32_t Exp = (H >> 10) & 0x1F;
  uint32_t Man = H & 0x3FF;
  uint32_t X;
  if (Exp == 0x1F) {
    X = Sign | 0x7F800000 | (Man << 13);
  } else if (Exp == 0) {
    if (Man == 0) {
      X = Sign;
    } else { // Subnormal: value = Man * 2^-24.
      float F = std::ldexp(float(Man), -24);
      return Sign ? -F : F;
    }
  } else {
    X = Sign | ((Exp - 15 + 127) << 23) | (Man << 13);
  }
  float F;
  std::memcpy(&F, &X, 4);
  return F;
}

uint16_t gpuopt::runtime::floatToBFloat16(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  if ((X & 0x7FFFFFFF) > 0x7F800000)
    return uint16_t((X >> 16) | 0x40); // Quiet NaN.
  X += 0x7FFF + ((X >> 16) & 1);
  return uint16_t(X >> 16);
}

float gpuopt::runtime::bfloat16ToFloat(uint16_t B) {
  uint32_t X = uint32_t(B) << 16;
  float F;
  std::memcpy(&F, &X, 4);
  return F;
}

double gpuopt::runtime::loadAsDouble(ElemType T, const uint8_t *Data,
                                     uint64_t I) {
  const uint8_t *P = Data + I * elemSize(T);
  auto Load = [P](auto V) {
    std::memcpy(&V, P, sizeof(V));
    return V;
  };
  switch (T) {
  case ElemType::U8:
    return Load(uint8_t());
  case ElemType::S8:
    return Load(int8_t());
  case ElemType::U16:
    return Load(uint16_t());
  case ElemType::S16:
    return Load(int16_t());
  case ElemType::U32:
    return Load(uint32_t());
  case ElemType::S32:
    return Load(int32_t());
  case ElemType::U64:
    return double(Load(uint64_t()));
  case ElemType::S64:
    return double(Load(int64_t()));
  case ElemType::F16:
    return halfToFloat(Load(uint16_t()));
  case ElemType::BF16:
    return bfloat16ToFloat(Load(uint16_t()));
  case ElemType::F32:
    return Load(float());
  case ElemType::F64:
    return Load(double());
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static std::vector<std::string_view> split(std::string_view S, char Sep,
                                           size_t MaxParts = SIZE_MAX) {
  std::vector<std::string_view> Parts;
  while (Parts.size() + 1 < MaxParts) {
    size_t Pos = S.find(Sep);
    if (Pos == std::string_view::npos)
      break;
    Parts.push_back(S.substr(0, Pos));
    S = S.substr(Pos + 1);
  }
  Parts.push_back(S);
  return Parts;
}

static std::optional<uint64_t> parseU64(std::string_view S) {
  if (S.empty() || S[0] == '-' || S[0] == '+' ||
      std::isspace((unsigned char)S[0]))
    return std::nullopt;
  std::string Str(S);
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(Str.c_str(), &End, 0);
  if (errno || *End)
    return std::nullopt;
  return V;
}

Expected<uint64_t> gpuopt::runtime::parseCount(std::string_view Text) {
  uint64_t Total = 1;
  for (std::string_view Factor : split(Text, '*')) {
    std::optional<uint64_t> V = parseU64(Factor);
    if (!V)
      return Status::error("expected an element count (a number or a product "
                           "like 16*64*56*56), got '" +
                           std::string(Text) + "'");
    if (*V && Total > std::numeric_limits<uint64_t>::max() / *V)
      return Status::error("element count '" + std::string(Text) +
                           "' overflows 64 bits");
    Total *= *V;
  }
  return Total;
}

Expected<Dim3> gpuopt::runtime::parseDim3(std::string_view Text) {
  std::vector<std::string_view> Parts = split(Text, ',');
  if (Parts.size() > 3)
    return Status::error("expected X[,Y[,Z]], got '" + std::string(Text) + "'");
  uint64_t D[3] = {1, 1, 1};
  for (size_t I = 0; I < Parts.size(); ++I) {
    std::optional<uint64_t> V = parseU64(Parts[I]);
    if (!V || *V == 0 || *V > 0xFFFFFFFFu)
      return Status::error("expected X[,Y[,Z]] with positive 32-bit "
                           "dimensions, got '" +
                           std::string(Text) + "'");
    D[I] = *V;
  }
  return Dim3{D[0], D[1], D[2]};
}

Expected<std::vector<uint8_t>>
gpuopt::runtime::encodeScalar(ElemType T, std::string_view Text) {
  std::string S(Text);
  std::vector<uint8_t> Bytes(elemSize(T));
  auto Bad = [&](const std::string &Why) {
    return Status::error("'" + S + "' is not a valid " + toString(T) +
                         " value" + (Why.empty() ? "" : ": " + Why));
  };
  if (S.empty())
    return Bad("empty");
  char *End = nullptr;
  errno = 0;
  if (isFloat(T)) {
    double D = std::strtod(S.c_str(), &End);
    if (*End || errno == EINVAL)
      return Bad("");
    switch (T) {
    case ElemType::F16: {
      uint16_t H = floatToHalf(float(D));
      std::memcpy(Bytes.data(), &H, 2);
      break;
    }
    case ElemType::BF16: {
      uint16_t B = floatToBFloat16(float(D));
      std::memcpy(Bytes.data(), &B, 2);
      break;
    }
    case ElemType::F32: {
      float F = float(D);
      std::memcpy(Bytes.data(), &F, 4);
      break;
    }
    default:
      std::memcpy(Bytes.data(), &D, 8);
      break;
    }
    return Bytes;
  }
  uint64_t Size = elemSize(T);
  uint64_t Raw;
  if (isSigned(T)) {
    long long V = std::strtoll(S.c_str(), &End, 0);
    if (*End || errno)
      return Bad(errno == ERANGE ? "out of range" : "");
    if (Size < 8) {
      long long Min = -(1LL << (Size * 8 - 1)),
                Max = (1LL << (Size * 8 - 1)) - 1;
      if (V < Min || V > Max)
        return Bad("out of range");
    }
    Raw = uint64_t(V);
  } else {
    if (S[0] == '-')
      return Bad("negative");
    unsigned long long V = std::strtoull(S.c_str(), &End, 0);
    if (*End || errno)
      return Bad(errno == ERANGE ? "out of range" : "");
    if (Size < 8 && V >> (Size * 8))
      return Bad("out of range");
    Raw = V;
  }
  std::memcpy(Bytes.data(), &Raw, Size); // Little-endian host.
  return Bytes;
}

Expected<ArgSpec> gpuopt::runtime::parseArgSpec(std::string_view Text) {
  ArgSpec A;
  A.Text = std::string(Text);
  auto Fail = [&](const std::string &What) {
    return Status::error("argument '" + A.Text + "': " + What);
  };
  std::vector<std::string_view> Parts = split(Text, ':');
  std::string_view Kind = Parts[0];
  auto TypeAt = [&](size_t I, ElemType &Out) -> Status {
    if (Parts.size() <= I)
      return Fail("missing the element type");
    std::optional<ElemType> T = parseElemType(Parts[I]);
    if (!T)
      return Fail("unknown element type '" + std::string(Parts[I]) +
                  "' (expected u8 s8 u16 s16 u32 s32 u64 s64 f16 bf16 f32 "
                  "f64)");
    Out = *T;
    return Status::success();
  };

  if (Kind == "null") {
    if (Parts.size() != 1)
      return Fail("'null' takes no fields");
    A.K = ArgSpec::Kind::Null;
    A.Value.assign(8, 0);
    return A;
  }
  if (Kind == "bytes") {
    A.K = ArgSpec::Kind::Bytes;
    std::string_view Hex = Parts.size() == 2 ? Parts[1] : std::string_view();
    if (Parts.size() != 2 || Hex.empty() || Hex.size() % 2)
      return Fail("expected bytes:HEX with an even number of hex digits");
    for (size_t I = 0; I < Hex.size(); I += 2) {
      std::string Byte(Hex.substr(I, 2));
      char *End = nullptr;
      unsigned long V = std::strtoul(Byte.c_str(), &End, 16);
      if (*End || !std::isxdigit((unsigned char)Byte[0]))
        return Fail("'" + Byte + "' is not a hex byte");
      A.Value.push_back(uint8_t(V));
    }
    return A;
  }
  if (Kind == "scalar") {
    A.K = ArgSpec::Kind::Scalar;
    if (Status S = TypeAt(1, A.Type))
      return S;
    if (Parts.size() != 3)
      return Fail("expected scalar:TYPE:VALUE");
    Expected<std::vector<uint8_t>> V = encodeScalar(A.Type, Parts[2]);
    if (!V)
      return Fail(V.status().message());
    A.Value = std::move(*V);
    return A;
  }
  if (Kind != "buf")
    return Fail("expected buf:TYPE:COUNT:INIT, scalar:TYPE:VALUE, null or "
                "bytes:HEX");

  A.K = ArgSpec::Kind::Buffer;
  if (Status S = TypeAt(1, A.Type))
    return S;
  if (Parts.size() < 4)
    return Fail("expected buf:TYPE:COUNT:INIT (INIT = zero, out, fill:V, "
                "random:SEED[:LO:HI] or file:PATH)");
  Expected<uint64_t> Count = parseCount(Parts[2]);
  if (!Count)
    return Fail(Count.status().message());
  A.Count = *Count;
  if (A.Count == 0)
    return Fail("a buffer needs at least one element");
  std::string_view Init = Parts[3];
  size_t NumInitFields = Parts.size() - 4;
  if (Init == "zero" || Init == "out") {
    if (NumInitFields)
      return Fail("'" + std::string(Init) + "' takes no fields");
    A.Initial = Init == "zero" ? ArgSpec::Init::Zero : ArgSpec::Init::Out;
  } else if (Init == "fill") {
    if (NumInitFields != 1)
      return Fail("expected fill:VALUE");
    A.Initial = ArgSpec::Init::Fill;
    A.FillValue = std::string(Parts[4]);
    Expected<std::vector<uint8_t>> V = encodeScalar(A.Type, A.FillValue);
    if (!V)
      return Fail(V.status().message());
  } else if (Init == "random") {
    if (NumInitFields != 1 && NumInitFields != 3)
      return Fail("expected random:SEED or random:SEED:LO:HI");
    A.Initial = ArgSpec::Init::Random;
    std::optional<uint64_t> Seed = parseU64(Parts[4]);
    if (!Seed)
      return Fail("seed '" + std::string(Parts[4]) +
                  "' is not an unsigned integer");
    A.Seed = *Seed;
    if (NumInitFields == 3) {
      double Bounds[2];
      for (int I = 0; I < 2; ++I) {
        std::string B(Parts[5 + I]);
        char *End = nullptr;
        Bounds[I] = std::strtod(B.c_str(), &End);
        if (B.empty() || *End || !std::isfinite(Bounds[I]))
          return Fail("random bound '" + B + "' is not a finite number");
        if (!isFloat(A.Type) && Bounds[I] != std::floor(Bounds[I]))
          return Fail("random bound '" + B +
                      "' of an integer buffer is not "
                      "an integer");
      }
      if (!(Bounds[0] < Bounds[1]))
        return Fail("random range needs LO < HI");
      A.Lo = Bounds[0];
      A.Hi = Bounds[1];
    }
  } else if (Init == "file") {
    if (NumInitFields < 1)
      return Fail("expected file:PATH");
    A.Initial = ArgSpec::Init::File;
    // The path is everything after "file:", colons included.
    size_t Pos = Text.find(":file:");
    A.Path = std::string(Text.substr(Pos + 6));
    if (A.Path.empty())
      return Fail("expected file:PATH");
  } else {
    return Fail("unknown initialiser '" + std::string(Init) +
                "' (expected zero, out, fill:V, random:SEED[:LO:HI] or "
                "file:PATH)");
  }
  return A;
}

Status gpuopt::runtime::checkArgAgainstParam(const ArgSpec &A,
                                             const ParamInfo &P,
                                             unsigned Index) {
  auto Fail = [&](const std::string &What) {
    return Status::error("argument " + std::to_string(Index) + " ('" + A.Text +
                         "') for parameter '" + P.Name + "' (." + P.Type +
                         ", " + std::to_string(P.Size) + " bytes): " + What);
  };
  bool ParamUntyped = P.Type.size() >= 2 && P.Type[0] == 'b';
  switch (A.K) {
  case ArgSpec::Kind::Buffer:
  case ArgSpec::Kind::Null:
    // An aggregate (.b8 array) of at least 8 bytes, 8-byte aligned, takes the
    // address in its first 8 bytes and zeros after them: a struct passed by
    // value whose first member is a pointer (CUB's ScanTileState, GridQueue,
    // cuda::std::array<T *, 1>, Thrust's kernel_arg<T *>).
    if (P.Kind == ParamKind::Bytes ? P.Size < 8 || P.Offset % 8 != 0
                                   : P.Size != 8)
      return Fail("a buffer address needs an 8-byte scalar parameter or an "
                  "aggregate of at least 8 bytes at an 8-byte aligned offset");
    if (isPTXFloatType(P.Type))
      return Fail("a buffer address cannot go into a floating-point "
                  "parameter");
    return Status::success();
  case ArgSpec::Kind::Scalar:
    if (P.Kind == ParamKind::Bytes)
      return Fail("an aggregate parameter takes bytes:HEX");
    if (A.Value.size() != P.Size)
      return Fail("the value is " + std::to_string(A.Value.size()) + " bytes");
    if (!ParamUntyped && isFloat(A.Type) != isPTXFloatType(P.Type))
      return Fail(
          std::string(isFloat(A.Type) ? "a floating-point" : "an integer") +
          " value for " +
          (isPTXFloatType(P.Type) ? "a floating-point" : "an integer") +
          " parameter");
    return Status::success();
  case ArgSpec::Kind::Bytes:
    if (A.Value.size() != P.Size)
      return Fail("got " + std::to_string(A.Value.size()) + " bytes");
    return Status::success();
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Host-side initialisation
//===----------------------------------------------------------------------===//

/// Element I of the splitmix64 stream seeded with Seed: a counter-based
/// generator, so that buffers fill in parallel and reproducibly.
static uint64_t randomAt(uint64_t Seed, uint64_t I) {
  uint64_t Z = Seed + (I + 1) * 0x9E3779B97F4A7C15ULL;
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBULL;
  return Z ^ (Z >> 31);
}

static void fillRandom(const ArgSpec &A, uint8_t *Data, uint64_t Begin,
                       uint64_t End) {
  const uint64_t Size = elemSize(A.Type);
  const double Lo = A.Lo.value_or(-1.0), Hi = A.Hi.value_or(1.0);
  for (uint64_t I = Begin; I < End; ++I) {
    uint64_t R = randomAt(A.Seed, I);
    uint8_t *P = Data + I * Size;
    if (isFloat(A.Type)) {
      if (A.Type == ElemType::F64) {
        double D = Lo + double(R >> 11) * 0x1.0p-53 * (Hi - Lo);
        std::memcpy(P, &D, 8);
        continue;
      }
      float F = float(Lo + double(R >> 40) * 0x1.0p-24 * (Hi - Lo));
      if (A.Type == ElemType::F32) {
        std::memcpy(P, &F, 4);
      } else {
        uint16_t H =
            A.Type == ElemType::F16 ? floatToHalf(F) : floatToBFloat16(F);
        std::memcpy(P, &H, 2);
      }
      continue;
    }
    uint64_t V = R;
    if (A.Lo) {
      int64_t L = int64_t(*A.Lo);
      uint64_t Span = uint64_t(int64_t(*A.Hi) - L);
      V = uint64_t(L + int64_t(R % Span));
    }
    std::memcpy(P, &V, Size); // Little-endian: the low bytes.
  }
}

Status gpuopt::runtime::initHostBuffer(const ArgSpec &A,
                                       std::vector<uint8_t> &Out) {
  if (!A.isBuffer())
    return Status::error("argument '" + A.Text + "' is not a buffer");
  const uint64_t Bytes = A.bufferBytes();
  switch (A.Initial) {
  case ArgSpec::Init::Zero:
    Out.assign(Bytes, 0);
    return Status::success();
  case ArgSpec::Init::Out:
    Out.assign(Bytes, 0xFF);
    return Status::success();
  case ArgSpec::Init::Fill: {
    Expected<std::vector<uint8_t>> V = encodeScalar(A.Type, A.FillValue);
    if (!V)
      return Status::error("argument '" + A.Text +
                           "': " + V.status().message());
    Out.resize(Bytes);
    for (uint64_t I = 0; I < Bytes; I += V->size())
      std::memcpy(Out.data() + I, V->data(), V->size());
    return Status::success();
  }
  case ArgSpec::Init::Random: {
    Out.resize(Bytes);
    unsigned Threads = std::max(1u, std::thread::hardware_concurrency());
    if (A.Count < (1u << 20))
      Threads = 1;
    std::vector<std::thread> Pool;
    uint64_t Chunk = (A.Count + Threads - 1) / Threads;
    for (unsigned T = 0; T < Threads; ++T) {
      uint64_t Begin = T * Chunk, End = std::min(A.Count, Begin + Chunk);
      if (Begin >= End)
        break;
      Pool.emplace_back(fillRandom, std::cref(A), Out.data(), Begin, End);
    }
    for (std::thread &T : Pool)
      T.join();
    return Status::success();
  }
  case ArgSpec::Init::File: {
    std::ifstream In(A.Path, std::ios::binary | std::ios::ate);
    if (!In)
      return Status::error("argument '" + A.Text + "': cannot open " + A.Path);
    uint64_t FileBytes = uint64_t(In.tellg());
    if (FileBytes != Bytes)
      return Status::error("argument '" + A.Text + "': " + A.Path + " has " +
                           std::to_string(FileBytes) + " bytes, the buffer " +
                           std::to_string(A.Count) + " x " + toString(A.Type) +
                           " needs " + std::to_string(Bytes));
    In.seekg(0);
    Out.resize(Bytes);
    if (!In.read(reinterpret_cast<char *>(Out.data()), std::streamsize(Bytes)))
      return Status::error("argument '" + A.Text + "': reading " + A.Path +
                           " failed");
    return Status::success();
  }
  }
  return Status::success();
}
