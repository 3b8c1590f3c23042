//===- ProbeRecordLayoutTest.cpp - Probe records and buffers --------------===//
//
// The layout the probe passes write records by and the runtime sizes buffers
// by: fields at multiples of their size, records rounded to their largest
// field, and the parts after the records at multiples of 8.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ProbeRecordLayout.h"

#include <gtest/gtest.h>

using namespace gpuopt::probe;

namespace {

TEST(ProbeRecordLayout, FieldsAtMultiplesOfTheirSize) {
  // block_sched: u64, then three u32; 20 bytes round to 24.
  RecordLayout L = RecordLayout::get({8, 4, 4, 4});
  EXPECT_EQ(L.Offsets, (std::vector<uint64_t>{0, 8, 12, 16}));
  EXPECT_EQ(L.RecordBytes, 24u);
  // A u32 before a u64 leaves a hole; a fused kernel's part field (u32)
  // comes last.
  L = RecordLayout::get({4, 8, 4});
  EXPECT_EQ(L.Offsets, (std::vector<uint64_t>{0, 8, 16}));
  EXPECT_EQ(L.RecordBytes, 24u);
  L = RecordLayout::get({2, 1});
  EXPECT_EQ(L.Offsets, (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(L.RecordBytes, 4u);
}

TEST(ProbeRecordLayout, Alignments) {
  EXPECT_EQ(RecordLayout::recordAlign(24), 8u);
  EXPECT_EQ(RecordLayout::recordAlign(16), 16u);
  EXPECT_EQ(RecordLayout::recordAlign(12), 4u);
  // Buffers: what vector stores need, 8 at least (counters), 16 at most.
  EXPECT_EQ(RecordLayout::bufferAlign(4), 8u);
  EXPECT_EQ(RecordLayout::bufferAlign(24), 8u);
  EXPECT_EQ(RecordLayout::bufferAlign(32), 16u);
}

TEST(ProbeRecordLayout, BufferParts) {
  // 3 slots of 2 records of 12 bytes: 72 bytes, no counts, no counter.
  BufferLayout B = BufferLayout::get(3, 2, 12, false, false);
  EXPECT_EQ(B.CountsOffset, 72u);
  EXPECT_EQ(B.OverflowOffset, 72u);
  EXPECT_EQ(B.TotalBytes, 72u);
  // 5 slots of one 4-byte record: 20 bytes rounded to 24, then the 5 slot
  // counts (20 bytes, rounded to 24), then the u64 overflow counter.
  B = BufferLayout::get(5, 1, 4, true, true);
  EXPECT_EQ(B.CountsOffset, 24u);
  EXPECT_EQ(B.OverflowOffset, 48u);
  EXPECT_EQ(B.TotalBytes, 56u);
  // A dynamic map's counting launch: capacity 0, only counts and counter.
  B = BufferLayout::get(5, 0, 16, true, true);
  EXPECT_EQ(B.CountsOffset, 0u);
  EXPECT_EQ(B.OverflowOffset, 24u);
  EXPECT_EQ(B.TotalBytes, 32u);
}

} // namespace
