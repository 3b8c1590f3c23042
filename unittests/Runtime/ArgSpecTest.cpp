//===- ArgSpecTest.cpp - Kernel argument specifications -------------------===//
//
// Argument specs are gpu-run's user interface and feed every check and
// baseline; these pin parsing, errors, conversions and reproducible random
// data.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ArgSpec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

using namespace gpuopt::runtime;

namespace {

ArgSpec parse(const std::string &Text) {
  Expected<ArgSpec> A = parseArgSpec(Text);
  EXPECT_TRUE(A) << A.status().message();
  return A ? *A : ArgSpec();
}

std::string parseError(const std::string &Text) {
  Expected<ArgSpec> A = parseArgSpec(Text);
  EXPECT_FALSE(A) << "accepted " << Text;
  return A ? "" : A.status().message();
}

TEST(ArgSpec, Buffers) {
  ArgSpec A = parse("buf:f32:16*64*56*56:random:7");
  EXPECT_TRUE(A.isBuffer());
  EXPECT_EQ(A.Type, ElemType::F32);
  EXPECT_EQ(A.Count, 16u * 64 * 56 * 56);
  EXPECT_EQ(A.bufferBytes(), A.Count * 4);
  EXPECT_EQ(A.Initial, ArgSpec::Init::Random);
  EXPECT_EQ(A.Seed, 7u);
  EXPECT_FALSE(A.Lo);

  A = parse("buf:u32:1024:random:3:0:1100");
  EXPECT_EQ(A.Lo, 0.0);
  EXPECT_EQ(A.Hi, 1100.0);
  EXPECT_EQ(parse("buf:u8:10:zero").Initial, ArgSpec::Init::Zero);
  EXPECT_EQ(parse("buf:i64:10:out").Type, ElemType::S64);
  EXPECT_EQ(parse("buf:f16:2:fill:1.5").FillValue, "1.5");
  // A path keeps its colons.
  EXPECT_EQ(parse("buf:f16:8:file:/tmp/a:b.bin").Path, "/tmp/a:b.bin");
}

TEST(ArgSpec, Scalars) {
  ArgSpec A = parse("scalar:u32:0x10");
  EXPECT_EQ(A.K, ArgSpec::Kind::Scalar);
  EXPECT_EQ(A.Value, (std::vector<uint8_t>{0x10, 0, 0, 0}));
  A = parse("scalar:s32:-2");
  EXPECT_EQ(A.Value, (std::vector<uint8_t>{0xFE, 0xFF, 0xFF, 0xFF}));
  A = parse("scalar:f32:1e-5");
  float F;
  std::memcpy(&F, A.Value.data(), 4);
  EXPECT_EQ(F, 1e-5f);
  A = parse("scalar:f16:1");
  EXPECT_EQ(A.Value, (std::vector<uint8_t>{0x00, 0x3C}));
  A = parse("scalar:u64:18446744073709551615");
  EXPECT_EQ(A.Value, std::vector<uint8_t>(8, 0xFF));
  A = parse("null");
  EXPECT_EQ(A.Value, std::vector<uint8_t>(8, 0));
  A = parse("bytes:00ff10");
  EXPECT_EQ(A.Value, (std::vector<uint8_t>{0x00, 0xFF, 0x10}));
}

TEST(ArgSpec, Malformed) {
  EXPECT_EQ(parseError("buf:f31:4:zero"),
            "argument 'buf:f31:4:zero': unknown element type 'f31' (expected "
            "u8 s8 u16 s16 u32 s32 u64 s64 f16 bf16 f32 f64)");
  EXPECT_EQ(parseError("buf:f32:4"),
            "argument 'buf:f32:4': expected buf:TYPE:COUNT:INIT (INIT = "
            "zero, out, fill:V, random:SEED[:LO:HI] or file:PATH)");
  EXPECT_EQ(parseError("buf:f32:4x4:zero"),
            "argument 'buf:f32:4x4:zero': expected an element count (a "
            "number or a product like 16*64*56*56), got '4x4'");
  EXPECT_EQ(parseError("buf:f32:0:zero"),
            "argument 'buf:f32:0:zero': a buffer needs at least one element");
  EXPECT_EQ(parseError("buf:f32:4:random"),
            "argument 'buf:f32:4:random': expected random:SEED or "
            "random:SEED:LO:HI");
  EXPECT_EQ(parseError("buf:u32:4:random:1:0:1.5"),
            "argument 'buf:u32:4:random:1:0:1.5': random bound '1.5' of an "
            "integer buffer is not an integer");
  EXPECT_EQ(parseError("buf:f32:4:random:1:2:1"),
            "argument 'buf:f32:4:random:1:2:1': random range needs LO < HI");
  EXPECT_EQ(parseError("buf:f32:4:ones"),
            "argument 'buf:f32:4:ones': unknown initialiser 'ones' (expected "
            "zero, out, fill:V, random:SEED[:LO:HI] or file:PATH)");
  EXPECT_EQ(parseError("scalar:u8:256"),
            "argument 'scalar:u8:256': '256' is not a valid u8 value: out of "
            "range");
  EXPECT_EQ(parseError("scalar:u32:-1"),
            "argument 'scalar:u32:-1': '-1' is not a valid u32 value: "
            "negative");
  EXPECT_EQ(parseError("scalar:s16:40000"),
            "argument 'scalar:s16:40000': '40000' is not a valid s16 value: "
            "out of range");
  EXPECT_EQ(parseError("scalar:f32:one"),
            "argument 'scalar:f32:one': 'one' is not a valid f32 value");
  EXPECT_EQ(parseError("ptr:0"),
            "argument 'ptr:0': expected buf:TYPE:COUNT:INIT, "
            "scalar:TYPE:VALUE, null or bytes:HEX");
  EXPECT_EQ(parseError("bytes:abc"),
            "argument 'bytes:abc': expected bytes:HEX with an even number of "
            "hex digits");
}

TEST(ArgSpec, Dims) {
  Expected<Dim3> D = parseDim3("128,4");
  ASSERT_TRUE(D);
  EXPECT_EQ(*D, (Dim3{128, 4, 1}));
  EXPECT_FALSE(parseDim3("0"));
  EXPECT_FALSE(parseDim3("1,2,3,4"));
  EXPECT_FALSE(parseDim3("-1"));
  EXPECT_FALSE(parseDim3("4294967296"));
}

TEST(ArgSpec, ParamChecks) {
  ParamInfo U32{"n", "u32", 4, 4, 0, ParamKind::Scalar, "", 0};
  ParamInfo F32{"eps", "f32", 4, 4, 0, ParamKind::Scalar, "", 0};
  ParamInfo B32{"x", "b32", 4, 4, 0, ParamKind::Scalar, "", 0};
  ParamInfo U64{"p", "u64", 8, 8, 0, ParamKind::Scalar, "", 0};
  ParamInfo Agg{"s", "b8", 16, 8, 0, ParamKind::Bytes, "", 0};
  EXPECT_TRUE(checkArgAgainstParam(parse("scalar:s32:-1"), U32, 0).ok());
  EXPECT_TRUE(checkArgAgainstParam(parse("scalar:f32:1"), B32, 0).ok());
  EXPECT_TRUE(checkArgAgainstParam(parse("buf:u8:4:zero"), U64, 0).ok());
  EXPECT_TRUE(checkArgAgainstParam(parse("null"), U64, 0).ok());
  EXPECT_TRUE(checkArgAgainstParam(
                  parse("bytes:00112233445566778899aabbccddeeff"), Agg, 0)
                  .ok());
  EXPECT_EQ(checkArgAgainstParam(parse("scalar:u64:5"), U32, 3).message(),
            "argument 3 ('scalar:u64:5') for parameter 'n' (.u32, 4 bytes): "
            "the value is 8 bytes");
  EXPECT_EQ(checkArgAgainstParam(parse("scalar:u32:5"), F32, 1).message(),
            "argument 1 ('scalar:u32:5') for parameter 'eps' (.f32, 4 bytes): "
            "an integer value for a floating-point parameter");
  EXPECT_EQ(checkArgAgainstParam(parse("buf:f32:4:zero"), U32, 0).message(),
            "argument 0 ('buf:f32:4:zero') for parameter 'n' (.u32, 4 "
            "bytes): a buffer address needs an 8-byte scalar parameter or an "
            "aggregate of at least 8 bytes at an 8-byte aligned offset");
  EXPECT_FALSE(checkArgAgainstParam(parse("scalar:u64:1"), Agg, 0).ok());
  // A struct whose first member is a pointer takes a buffer's address.
  EXPECT_TRUE(checkArgAgainstParam(parse("buf:f32:4:zero"), Agg, 0).ok());
  EXPECT_TRUE(checkArgAgainstParam(parse("null"), Agg, 0).ok());
  ParamInfo Agg4{"s4", "b8", 4, 4, 0, ParamKind::Bytes, "", 0};
  ParamInfo AggOdd{"s12", "b8", 16, 4, 12, ParamKind::Bytes, "", 0};
  EXPECT_FALSE(checkArgAgainstParam(parse("buf:f32:4:zero"), Agg4, 0).ok());
  EXPECT_FALSE(checkArgAgainstParam(parse("buf:f32:4:zero"), AggOdd, 0).ok());
}

TEST(ArgSpec, HalfConversionsRoundTrip) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // Rounds to infinity.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(floatToHalf(0.1f), 0x2E66);
  // Ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  for (uint32_t H = 0; H < 0x10000; ++H) {
    float F = halfToFloat(uint16_t(H));
    if (std::isnan(F))
      continue;
    ASSERT_EQ(floatToHalf(F), H) << std::hex << H;
  }
  for (uint32_t B = 0; B < 0x10000; ++B) {
    float F = bfloat16ToFloat(uint16_t(B));
    if (std::isnan(F))
      continue;
    ASSERT_EQ(floatToBFloat16(F), B) << std::hex << B;
  }
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80); // Tie.
}

TEST(ArgSpec, RandomIsReproducibleAndInRange) {
  std::vector<uint8_t> A, B, C;
  ASSERT_TRUE(initHostBuffer(parse("buf:f32:3000000:random:5"), A).ok());
  ASSERT_TRUE(initHostBuffer(parse("buf:f32:3000000:random:5"), B).ok());
  ASSERT_TRUE(initHostBuffer(parse("buf:f32:3000000:random:6"), C).ok());
  EXPECT_EQ(A, B);
  EXPECT_NE(A, C);
  double Sum = 0;
  for (uint64_t I = 0; I < 3000000; ++I) {
    double V = loadAsDouble(ElemType::F32, A.data(), I);
    ASSERT_GE(V, -1.0);
    ASSERT_LT(V, 1.0);
    Sum += V;
  }
  EXPECT_LT(std::fabs(Sum / 3000000), 0.01); // Centred on 0.

  std::vector<uint8_t> Keys;
  ASSERT_TRUE(
      initHostBuffer(parse("buf:u32:100000:random:1:10:20"), Keys).ok());
  bool Seen[10] = {};
  for (uint64_t I = 0; I < 100000; ++I) {
    double V = loadAsDouble(ElemType::U32, Keys.data(), I);
    ASSERT_GE(V, 10);
    ASSERT_LT(V, 20);
    Seen[int(V) - 10] = true;
  }
  for (bool S : Seen)
    EXPECT_TRUE(S);

  std::vector<uint8_t> Halves;
  ASSERT_TRUE(initHostBuffer(parse("buf:f16:1000:random:2:4:8"), Halves).ok());
  for (uint64_t I = 0; I < 1000; ++I) {
    double V = loadAsDouble(ElemType::F16, Halves.data(), I);
    ASSERT_GE(V, 4);
    ASSERT_LE(V, 8); // Rounding to f16 may reach the bound.
  }
}

TEST(ArgSpec, OtherInitialisers) {
  std::vector<uint8_t> Out;
  ASSERT_TRUE(initHostBuffer(parse("buf:u16:3:out"), Out).ok());
  EXPECT_EQ(Out, std::vector<uint8_t>(6, 0xFF));
  ASSERT_TRUE(initHostBuffer(parse("buf:s16:3:fill:-2"), Out).ok());
  EXPECT_EQ(Out, (std::vector<uint8_t>{0xFE, 0xFF, 0xFE, 0xFF, 0xFE, 0xFF}));

  std::string Path = ::testing::TempDir() + "argspec-file.bin";
  {
    std::ofstream F(Path, std::ios::binary);
    F.write("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  }
  ASSERT_TRUE(initHostBuffer(parse("buf:u32:2:file:" + Path), Out).ok());
  EXPECT_EQ(Out, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  Status S = initHostBuffer(parse("buf:u32:3:file:" + Path), Out);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find(" has 8 bytes, the buffer 3 x u32 needs 12"),
            std::string::npos)
      << S.message();
  std::remove(Path.c_str());
  S = initHostBuffer(parse("buf:u32:2:file:" + Path), Out);
  EXPECT_NE(S.message().find("cannot open"), std::string::npos) << S.message();
}

} // namespace
