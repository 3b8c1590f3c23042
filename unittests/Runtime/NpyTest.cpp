//===- NpyTest.cpp - NumPy .npy headers of probe records ------------------===//
//
// numpy.load must read what gpu-run writes: the tests pin the header's
// layout (magic, version, length, alignment to 64 bytes), the record descr
// with its padding, and the shape. test/Runtime/gpu-run-emulated.test loads
// a written file with numpy itself.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

using namespace gpuopt::runtime;

namespace {

/// The header's dict, without magic, version, length and padding.
std::string dictOf(const std::string &Header) {
  std::string Dict = Header.substr(10);
  while (!Dict.empty() && (Dict.back() == ' ' || Dict.back() == '\n'))
    Dict.pop_back();
  return Dict;
}

TEST(Npy, PTXTypes) {
  EXPECT_EQ(npyType("u8"), "'|u1'");
  EXPECT_EQ(npyType("b8"), "'|u1'");
  EXPECT_EQ(npyType("s8"), "'|i1'");
  EXPECT_EQ(npyType("u16"), "'<u2'");
  EXPECT_EQ(npyType("b16"), "'<u2'");
  EXPECT_EQ(npyType("s16"), "'<i2'");
  EXPECT_EQ(npyType("f16"), "'<f2'");
  EXPECT_EQ(npyType("u32"), "'<u4'");
  EXPECT_EQ(npyType("b32"), "'<u4'");
  EXPECT_EQ(npyType("s32"), "'<i4'");
  EXPECT_EQ(npyType("f32"), "'<f4'");
  EXPECT_EQ(npyType("u64"), "'<u8'");
  EXPECT_EQ(npyType("b64"), "'<u8'");
  EXPECT_EQ(npyType("s64"), "'<i8'");
  EXPECT_EQ(npyType("f64"), "'<f8'");
  // What numpy lacks: bfloat16 as its bits, pairs as subarrays.
  EXPECT_EQ(npyType("bf16"), "'<u2'");
  EXPECT_EQ(npyType("f16x2"), "'<f2', (2,)");
  EXPECT_EQ(npyType("bf16x2"), "'<u2', (2,)");
  EXPECT_EQ(npyType("b128"), "'|V16'");
  EXPECT_FALSE(npyType("u128").has_value());
  EXPECT_FALSE(npyType(".u32").has_value());
}

TEST(Npy, RecordDescrInOffsetOrderWithPadding) {
  // Out of order, a gap after 'smid' and 4 bytes after the last field.
  std::vector<ProbeField> Fields = {
      {"warp", "u16", 16}, {"clock", "u64", 0}, {"smid", "u32", 8}};
  Expected<std::string> D = npyRecordDescr(Fields, 24);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_EQ(*D, "[('clock', '<u8'), ('smid', '<u4'), ('', '|V4'), "
                "('warp', '<u2'), ('', '|V6')]");
  // An exact fit has no padding.
  D = npyRecordDescr(
      {{"clock", "u64", 0}, {"smid", "u32", 8}, {"warp", "u32", 12}}, 16);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_EQ(*D, "[('clock', '<u8'), ('smid', '<u4'), ('warp', '<u4')]");
  // Padding before the first field; a subarray type.
  D = npyRecordDescr({{"h", "f16x2", 4}}, 8);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_EQ(*D, "[('', '|V4'), ('h', '<f2', (2,))]");
  // No fields: all padding.
  D = npyRecordDescr({}, 16);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_EQ(*D, "[('', '|V16')]");
  // Quotes and backslashes are escaped.
  D = npyRecordDescr({{"it's\\", "u8", 0}}, 1);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_EQ(*D, "[('it\\'s\\\\', '|u1')]");
}

TEST(Npy, RecordDescrErrors) {
  Expected<std::string> D =
      npyRecordDescr({{"a", "u64", 0}, {"b", "u32", 4}}, 16);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.status().message(),
            "field 'b' at byte 4 overlaps field 'a', which ends at byte 8");
  D = npyRecordDescr({{"a", "u64", 8}}, 12);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.status().message(),
            "field 'a' ends at byte 16, past the record's 12 bytes");
  D = npyRecordDescr({{"a", "u32", 0}, {"a", "u32", 4}}, 8);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.status().message(), "field 'a' appears twice");
  D = npyRecordDescr({{"a\n", "u32", 0}}, 4);
  ASSERT_FALSE(D);
  EXPECT_NE(D.status().message().find("printable ASCII"), std::string::npos);
  D = npyRecordDescr({{"a", "u24", 0}}, 4);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.status().message(),
            "field 'a': 'u24' is not a PTX fundamental type");
}

TEST(Npy, HeaderLayout) {
  std::string Descr = "[('clock', '<u8'), ('smid', '<u4'), ('', '|V4')]";
  Expected<std::string> H = npyHeader(Descr, {8, 3, 2});
  ASSERT_TRUE(H) << H.status().message();
  ASSERT_GE(H->size(), 11u);
  EXPECT_EQ(H->substr(0, 6), "\x93NUMPY");
  EXPECT_EQ((*H)[6], '\x01');
  EXPECT_EQ((*H)[7], '\x00');
  // The little-endian length counts everything after it.
  uint64_t Length = uint8_t((*H)[8]) | uint64_t(uint8_t((*H)[9])) << 8;
  EXPECT_EQ(Length + 10, H->size());
  EXPECT_EQ(H->size() % 64, 0u);
  EXPECT_EQ(H->back(), '\n');
  EXPECT_EQ(dictOf(*H), "{'descr': " + Descr +
                            ", 'fortran_order': False, 'shape': (8, 3, 2), }");
  // Spaces pad the dict up to the '\n'.
  size_t Close = H->rfind('}');
  EXPECT_EQ(H->find_first_not_of(' ', Close + 1), H->size() - 1);

  // One dimension is a 1-tuple; none, a scalar.
  H = npyHeader("'<f4'", {5});
  ASSERT_TRUE(H);
  EXPECT_EQ(dictOf(*H),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }");
  EXPECT_EQ(H->size() % 64, 0u);
  H = npyHeader("'<f4'", {});
  ASSERT_TRUE(H);
  EXPECT_EQ(dictOf(*H),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }");

  // Every dict length pads to a multiple of 64, also when it needs no
  // padding at all, and longer headers grow by 64 bytes.
  for (size_t N = 0; N < 130; ++N) {
    std::string D = "'" + std::string(N, 'x') + "'";
    H = npyHeader(D, {1, 1, 1});
    ASSERT_TRUE(H);
    EXPECT_EQ(H->size() % 64, 0u) << N;
    EXPECT_EQ(H->back(), '\n');
    EXPECT_LT(H->size(), dictOf(*H).size() + 10 + 1 + 64);
  }

  // Version 1.0 allows 65535 bytes of header.
  H = npyHeader("'" + std::string(70000, 'x') + "'", {1});
  ASSERT_FALSE(H);
  EXPECT_NE(H.status().message().find("65535"), std::string::npos);
}

TEST(Npy, WriteFile) {
  std::string Path = ::testing::TempDir() + "npy-test.npy";
  std::string Descr = "[('a', '<u4'), ('', '|V4')]";
  std::vector<uint8_t> Data(2 * 3 * 1 * 8);
  for (size_t I = 0; I < Data.size(); ++I)
    Data[I] = uint8_t(I);
  ASSERT_TRUE(
      writeNpy(Path, Descr, 8, {2, 3, 1}, Data.data(), Data.size()).ok());
  std::ifstream In(Path, std::ios::binary);
  std::string Text((std::istreambuf_iterator<char>(In)),
                   std::istreambuf_iterator<char>());
  Expected<std::string> H = npyHeader(Descr, {2, 3, 1});
  ASSERT_TRUE(H);
  ASSERT_EQ(Text.size(), H->size() + Data.size());
  EXPECT_EQ(Text.substr(0, H->size()), *H);
  EXPECT_EQ(Text.substr(H->size()), std::string(Data.begin(), Data.end()));
  std::remove(Path.c_str());

  // The data must fill the shape.
  Status S = writeNpy(Path, Descr, 8, {2, 3, 2}, Data.data(), Data.size());
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), Path + ": 48 bytes of data for 12 items of 8 bytes");
  S = writeNpy(::testing::TempDir() + "no/such/dir.npy", Descr, 8, {2, 3, 1},
               Data.data(), Data.size());
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("cannot write"), std::string::npos);
}

} // namespace
