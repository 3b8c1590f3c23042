//===- Npy.h - Writing NumPy .npy files -------------------------*- C++ -*-===//
//
// gpu-run writes probe records as NumPy .npy files (format version 1.0), so
// that `numpy.load` reads them as structured arrays whose fields are the
// record's. The format: the magic "\x93NUMPY", the version bytes 1 and 0, a
// little-endian u16 header length, and a header that is a Python dict literal
// ({'descr': ..., 'fortran_order': False, 'shape': (...), }) padded with
// spaces and ended by '\n' so that the data starts at a multiple of 64 bytes;
// then the data in C order.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_NPY_H
#define GPUOPT_RUNTIME_NPY_H

#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt::runtime {

/// The NumPy type of a PTX fundamental type as it appears in a descr, e.g.
/// "'<u4'" for u32 and b32, or "'<f2', (2,)" (a subarray) for f16x2.
/// NumPy has no bfloat16: bf16 reads as its bits ('<u2'), bf16x2 as two of
/// them; b128 is 16 raw bytes ('|V16'). std::nullopt if Type is not a PTX
/// fundamental type.
std::optional<std::string> npyType(std::string_view Type);

/// The descr of a probe record: a structured dtype list of the fields in
/// offset order, e.g. "[('clock', '<u8'), ('smid', '<u4'), ('', '|V4')]",
/// with a padding entry ('', '|V<n>') for each gap between fields and after
/// the last one, so that the itemsize is RecordBytes. Fails for fields that
/// overlap, end past RecordBytes, repeat a name, or have names that are not
/// printable ASCII.
Expected<std::string> npyRecordDescr(const std::vector<ProbeField> &Fields,
                                     uint64_t RecordBytes);

/// The whole .npy (version 1.0) header, magic included, for an array of
/// Descr (as from npyRecordDescr, or a quoted type such as "'<f4'") of the
/// given shape in C order. Its size is a multiple of 64. Fails when the
/// header does not fit version 1.0's 65535 bytes.
Expected<std::string> npyHeader(std::string_view Descr,
                                const std::vector<uint64_t> &Shape);

/// Writes a .npy file: the header, then Bytes bytes of Data, which must be
/// the shape's element count times ItemBytes.
Status writeNpy(const std::string &Path, std::string_view Descr,
                uint64_t ItemBytes, const std::vector<uint64_t> &Shape,
                const void *Data, uint64_t Bytes);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_NPY_H
