//===- Npy.cpp - Writing NumPy .npy files ---------------------------------===//
//
// Format version 1.0 as numpy.lib.format describes it. The descr of a record
// lists its fields in offset order with explicit padding entries, which is
// how numpy itself writes (dtype.descr) a structured type with gaps, so that
// the file reads back with the record's exact itemsize and field offsets.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Npy.h"

#include <algorithm>
#include <fstream>

using namespace gpuopt::runtime;

std::optional<std::string> gpuopt::runtime::npyType(std::string_view T) {
  static const std::pair<const char *, const char *> Types[] = {
      {"u8", "'|u1'"},           {"b8", "'|u1'"},   {"s8", "'|i1'"},
      {"u16", "'<u2'"},          {"b16", "'<u2'"},  {"s16", "'<i2'"},
      {"f16", "'<f2'"},          {"bf16", "'<u2'"}, {"u32", "'<u4'"},
      {"b32", "'<u4'"},          {"s32", "'<i4'"},  {"f32", "'<f4'"},
      {"f16x2", "'<f2', (2,)"},  {"u64", "'<u8'"},  {"b64", "'<u8'"},
      {"bf16x2", "'<u2', (2,)"}, {"s64", "'<i8'"},  {"f64", "'<f8'"},
      {"b128", "'|V16'"}};
  for (const auto &[Name, Npy] : Types)
    if (T == Name)
      return std::string(Npy);
  return std::nullopt;
}

/// A Python string literal of Name; std::nullopt unless printable ASCII.
static std::optional<std::string> pyString(const std::string &Name) {
  std::string Out = "'";
  for (char C : Name) {
    if (C < 0x20 || C > 0x7E)
      return std::nullopt;
    if (C == '\'' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out + "'";
}

static std::string padding(uint64_t Bytes) {
  return "('', '|V" + std::to_string(Bytes) + "')";
}

Expected<std::string>
gpuopt::runtime::npyRecordDescr(const std::vector<ProbeField> &Fields,
                                uint64_t RecordBytes) {
  std::vector<const ProbeField *> Sorted;
  for (const ProbeField &F : Fields)
    Sorted.push_back(&F);
  std::stable_sort(Sorted.begin(), Sorted.end(),
                   [](const ProbeField *A, const ProbeField *B) {
                     return A->Offset < B->Offset;
                   });
  std::string Descr = "[";
  auto Append = [&](const std::string &Entry) {
    Descr += (Descr.size() > 1 ? ", " : "") + Entry;
  };
  uint64_t End = 0;
  const ProbeField *Last = nullptr;
  for (const ProbeField *F : Sorted) {
    std::optional<std::string> Type = npyType(F->Type);
    std::optional<uint64_t> Size = ptxTypeSize(F->Type);
    if (!Type || !Size)
      return Status::error("field '" + F->Name + "': '" + F->Type +
                           "' is not a PTX fundamental type");
    std::optional<std::string> Name = pyString(F->Name);
    if (!Name || F->Name.empty())
      return Status::error("field '" + F->Name +
                           "': a NumPy field name must be non-empty, "
                           "printable ASCII");
    for (const ProbeField &G : Fields)
      if (&G != F && G.Name == F->Name)
        return Status::error("field '" + F->Name + "' appears twice");
    if (F->Offset < End)
      return Status::error("field '" + F->Name + "' at byte " +
                           std::to_string(F->Offset) + " overlaps field '" +
                           Last->Name + "', which ends at byte " +
                           std::to_string(End));
    if (F->Offset > End)
      Append(padding(F->Offset - End));
    Append("(" + *Name + ", " + *Type + ")");
    End = F->Offset + *Size;
    Last = F;
  }
  if (End > RecordBytes)
    return Status::error("field '" + Last->Name + "' ends at byte " +
                         std::to_string(End) + ", past the record's " +
                         std::to_string(RecordBytes) + " bytes");
  if (End < RecordBytes)
    Append(padding(RecordBytes - End));
  return Descr + "]";
}

Expected<std::string>
gpuopt::runtime::npyHeader(std::string_view Descr,
                           const std::vector<uint64_t> &Shape) {
  std::string Dict = "{'descr': " + std::string(Descr) +
                     ", 'fortran_order': False, 'shape': (";
  for (size_t I = 0; I < Shape.size(); ++I)
    Dict += (I ? ", " : "") + std::to_string(Shape[I]);
  Dict += Shape.size() == 1 ? ",), }" : "), }";
  // Magic (6 bytes), version (2) and length (2) precede the dict, which
  // ends in '\n' after the padding.
  const uint64_t Prefix = 10;
  uint64_t Length = Dict.size() + 1;
  Length += (64 - (Prefix + Length) % 64) % 64;
  if (Length > 0xFFFF)
    return Status::error("the .npy header needs " + std::to_string(Length) +
                         " bytes, more than format version 1.0's 65535");
  std::string Header = "\x93NUMPY";
  Header += '\x01';
  Header += '\x00';
  Header += char(Length & 0xFF);
  Header += char(Length >> 8);
  Header += Dict;
  Header.append(Length - Dict.size() - 1, ' ');
  Header += '\n';
  return Header;
}

Status gpuopt::runtime::writeNpy(const std::string &Path,
                                 std::string_view Descr, uint64_t ItemBytes,
                                 const std::vector<uint64_t> &Shape,
                                 const void *Data, uint64_t Bytes) {
  uint64_t Items = 1;
  for (uint64_t D : Shape)
    Items *= D;
  if (Items * ItemBytes != Bytes)
    return Status::error(Path + ": " + std::to_string(Bytes) +
                         " bytes of data for " + std::to_string(Items) +
                         " items of " + std::to_string(ItemBytes) + " bytes");
  Expected<std::string> Header = npyHeader(Descr, Shape);
  if (!Header)
    return Status::error(Path + ": " + Header.status().message());
  std::ofstream Out(Path, std::ios::binary);
  if (!Out || !Out.write(Header->data(), std::streamsize(Header->size())) ||
      !Out.write(static_cast<const char *>(Data), std::streamsize(Bytes)) ||
      !Out.flush())
    return Status::error(Path + ": cannot write the file");
  return Status::success();
}
