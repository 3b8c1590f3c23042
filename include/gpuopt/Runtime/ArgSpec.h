//===- ArgSpec.h - Kernel argument specifications ---------------*- C++ -*-===//
//
// A launcher that creates its own buffers needs a compact way to say, per
// kernel parameter, what to pass: a device buffer of some element type and
// length with given contents, a scalar value, or a null pointer. The textual
// form (used by gpu-run's --arg and by run-spec files) is parsed here so that
// it is unit-tested and shared by every tool:
//
//   buf:TYPE:COUNT:INIT   a device buffer of COUNT elements of TYPE
//       INIT = zero | out | fill:VALUE | random:SEED[:LO:HI] | file:PATH
//   scalar:TYPE:VALUE     a value of TYPE
//   null                  a null pointer (8 zero bytes)
//   bytes:HEX             raw bytes for an aggregate parameter
//
// TYPE is one of u8 s8 u16 s16 u32 s32 u64 s64 f16 bf16 f32 f64 (i8..i64
// are accepted for s8..s64). COUNT is a decimal number or a product such as
// 16*64*56*56.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_ARGSPEC_H
#define GPUOPT_RUNTIME_ARGSPEC_H

#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt::runtime {

enum class ElemType {
  U8,
  S8,
  U16,
  S16,
  U32,
  S32,
  U64,
  S64,
  F16,
  BF16,
  F32,
  F64
};

std::optional<ElemType> parseElemType(std::string_view Name);
const char *toString(ElemType T);
uint64_t elemSize(ElemType T);
bool isFloat(ElemType T);
bool isSigned(ElemType T);

/// IEEE binary16 and bfloat16 conversions (round to nearest even).
uint16_t floatToHalf(float F);
float halfToFloat(uint16_t H);
uint16_t floatToBFloat16(float F);
float bfloat16ToFloat(uint16_t B);

/// Reads element I of a buffer of type T as a double.
double loadAsDouble(ElemType T, const uint8_t *Data, uint64_t I);

struct ArgSpec {
  enum class Kind { Buffer, Scalar, Null, Bytes };
  enum class Init { Zero, Out, Fill, Random, File };

  Kind K = Kind::Null;
  ElemType Type = ElemType::U8;
  /// Buffers: element count and initial contents.
  uint64_t Count = 0;
  Init Initial = Init::Zero;
  uint64_t Seed = 0;
  std::optional<double> Lo, Hi;
  std::string FillValue;
  std::string Path;
  /// Scalars and raw bytes: the bytes passed to the kernel.
  std::vector<uint8_t> Value;
  /// The text this was parsed from.
  std::string Text;

  bool isBuffer() const { return K == Kind::Buffer; }
  uint64_t bufferBytes() const { return Count * elemSize(Type); }
};

/// Parses one argument specification. Errors read
/// "argument 'TEXT': <what>".
Expected<ArgSpec> parseArgSpec(std::string_view Text);

/// Checks that an argument fits a kernel parameter: a buffer or null needs an
/// 8-byte, non-floating-point parameter; a scalar needs the parameter's size
/// and the same class (integer or floating point, unless the parameter is
/// untyped .bN); raw bytes need the parameter's size.
Status checkArgAgainstParam(const ArgSpec &A, const ParamInfo &P,
                            unsigned Index);

/// Fills Out (resized to the buffer's bytes) with the buffer's initial
/// contents: zeros, 0xFF bytes for `out`, the fill value, counter-based
/// random numbers (the same for a given seed on every machine) or the file.
/// Floating-point random values are uniform in [LO, HI) (default [-1, 1));
/// integers are uniform in [LO, HI) if given, else over the whole type.
Status initHostBuffer(const ArgSpec &A, std::vector<uint8_t> &Out);

/// Encodes a scalar value of type T, e.g. "0x10", "-3", "1.5e-5", "inf".
Expected<std::vector<uint8_t>> encodeScalar(ElemType T, std::string_view Text);

/// Parses "X[,Y[,Z]]" into a Dim3; each dimension a positive integer.
Expected<Dim3> parseDim3(std::string_view Text);
/// Parses a positive or zero element count: a number or a product "a*b*c".
Expected<uint64_t> parseCount(std::string_view Text);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_ARGSPEC_H
