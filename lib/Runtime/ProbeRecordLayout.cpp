//===- ProbeRecordLayout.cpp - Probe records and buffers in memory --------===//
//
// The record and buffer layout shared by the probe passes and the runtime.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ProbeRecordLayout.h"

#include <algorithm>

using namespace gpuopt::probe;

static uint64_t alignTo(uint64_t Value, uint64_t Align) {
  return (Value + Align - 1) / Align * Align;
}

RecordLayout RecordLayout::get(const std::vector<uint64_t> &FieldBytes) {
  RecordLayout Layout;
  uint64_t Offset = 0, Align = 1;
  for (uint64_t Bytes : FieldBytes) {
    Offset = alignTo(Offset, Bytes);
    Layout.Offsets.push_back(Offset);
    Offset += Bytes;
    Align = std::max(Align, Bytes);
  }
  Layout.RecordBytes = alignTo(Offset, Align);
  return Layout;
}

uint64_t RecordLayout::recordAlign(uint64_t RecordBytes) {
  return RecordBytes & -RecordBytes;
}

uint64_t RecordLayout::bufferAlign(uint64_t RecordBytes) {
  return std::clamp<uint64_t>(recordAlign(RecordBytes), 8, 16);
}

uint64_t gpuopt::probe::alignBufferPart(uint64_t Bytes) {
  return alignTo(Bytes, kBufferPartAlign);
}

BufferLayout BufferLayout::get(uint64_t Slots, uint64_t Capacity,
                               uint64_t RecordBytes, bool SlotCounts,
                               bool OverflowCounter) {
  BufferLayout Layout;
  Layout.CountsOffset = alignBufferPart(Slots * Capacity * RecordBytes);
  uint64_t Counts = SlotCounts ? alignBufferPart(Slots * kSlotCountBytes) : 0;
  Layout.OverflowOffset = Layout.CountsOffset + Counts;
  Layout.TotalBytes =
      Layout.OverflowOffset + (OverflowCounter ? kOverflowCounterBytes : 0);
  return Layout;
}
