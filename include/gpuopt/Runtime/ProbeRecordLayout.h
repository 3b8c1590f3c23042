//===- ProbeRecordLayout.h - Probe records in memory ------------*- C++ -*-===//
//
// Where a probe map's fields lie in a record and what follows the records in
// its buffer. The probe passes lay out records and emit slot code by these
// rules, and the runtime sizes buffers by them, so the two cannot drift
// apart. Plain C++: the runtime links neither LLVM nor MLIR.
//
//   buffer: records (slots x capacity x record bytes), rounded up to 8
//           [u32 count per slot, rounded up to 8]   dynamic capacity
//           [u64 overflow counter]                   counted saves
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_PROBERECORDLAYOUT_H
#define GPUOPT_RUNTIME_PROBERECORDLAYOUT_H

#include <cstdint>
#include <vector>

namespace gpuopt::probe {

/// Every part after the records starts at a multiple of this.
constexpr uint64_t kBufferPartAlign = 8;
/// Bytes of a slot count and of the overflow counter.
constexpr uint64_t kSlotCountBytes = 4;
constexpr uint64_t kOverflowCounterBytes = 8;

/// The fields the probe passes append, in this order, to every record of a
/// fused kernel (both u32): `part`, the `fused_from` index of the part whose
/// code wrote the record, and, when a part of a thread split is replicated,
/// `copy`, which of that part's blocks in the fused block the writer ran (0
/// for a part of one block): the part's own block is then the fused block ×
/// its `replicas` + `copy`. Both are kNoPart where the writer ran no part,
/// or for a block-level record of a thread split (the fused block, every
/// part's).
constexpr const char *kPartField = "part";
constexpr const char *kCopyField = "copy";
constexpr uint32_t kNoPart = 0xFFFFFFFF;

/// The fields of one record, each at a multiple of its size, and the record
/// rounded up to a multiple of its largest field.
struct RecordLayout {
  std::vector<uint64_t> Offsets;
  uint64_t RecordBytes = 0;

  /// Lays out fields of these sizes (powers of two) in order.
  static RecordLayout get(const std::vector<uint64_t> &FieldBytes);
  /// The alignment every record starts at: the largest power of two that
  /// divides the record size (a slot is a whole number of records).
  static uint64_t recordAlign(uint64_t RecordBytes);
  /// The buffer alignment the record stores rely on (16-byte vector stores
  /// for records of a multiple of 16 bytes), 8 at least for the counters.
  static uint64_t bufferAlign(uint64_t RecordBytes);
};

/// `Bytes` rounded up to kBufferPartAlign.
uint64_t alignBufferPart(uint64_t Bytes);

/// The parts of one buffer.
struct BufferLayout {
  /// Slot counts (when there are any).
  uint64_t CountsOffset = 0;
  /// The overflow counter (when there is one).
  uint64_t OverflowOffset = 0;
  uint64_t TotalBytes = 0;

  static BufferLayout get(uint64_t Slots, uint64_t Capacity,
                          uint64_t RecordBytes, bool SlotCounts,
                          bool OverflowCounter);
};

} // namespace gpuopt::probe

#endif // GPUOPT_RUNTIME_PROBERECORDLAYOUT_H
