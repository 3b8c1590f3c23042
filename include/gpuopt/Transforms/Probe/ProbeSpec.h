//===- ProbeSpec.h - Probe specifications in YAML ---------------*- C++ -*-===//
//
// What a probe records and where, as the user writes it:
//
//   name: block_sched
//   maps:                      # record buffers, one kernel parameter each
//     - name: block_sched
//       level: warp            # thread | warp (lane 0 writes) | block
//       capacity: 1            # records per slot, or dynamic
//       fields:
//         - {name: start, type: u64}
//         - {name: end, type: u64}
//   registers:                 # probe-local, carry state between points
//     start: u64
//     end: u64
//   carry: registers           # or local: where entry-to-exit state lives
//   points:
//     - at: kernel.entry
//       ptx: |
//         mov.u64 %start, %clock64;
//     - at: kernel.exit        # before every ret and exit of the kernel
//       ptx: |
//         mov.u64 %end, %clock64;
//         save.block_sched %start, %end;
//     - at: [ld.global, st.global]   # instructions, by opcode and modifiers
//       when: before                 # or after
//       ptx: add.u64 %bytes, %bytes, {bytes};
//
// In instruction snippets {bytes} is the bytes the instruction moves (type
// size x vector width; the size operand of cp.async and bulk copies),
// {addr} its effective address (base register + offset, 64 bits) and
// {site} its position among the kernel's instructions.
//
// Snippets are PTX over the probe's registers and special registers;
// `save.MAP v1, v2, ...` writes one record (one value per field) into the
// slot of the thread, warp or block. Errors are reported at the YAML (or
// snippet) line and column.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBESPEC_H
#define GPUOPT_TRANSFORMS_PROBE_PROBESPEC_H

#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt::probe {

/// Who owns a record slot (the attribute dialect's enum, which the
/// manifest's `probes` carry).
using Level = ::gpuopt::ProbeLevel;

/// A PTX fundamental type without the dot ("u64"), and its size in bytes.
struct TypedName {
  std::string name;
  std::string type;
  mlir::Location loc;
};

struct MapSpec {
  explicit MapSpec(mlir::Location loc) : loc(loc) {}
  std::string name;
  Level level = Level::Thread;
  /// Records per slot; with `capacity: dynamic` the runtime chooses it after
  /// a counting launch (and `capacity` is 0).
  int64_t capacity = 1;
  bool dynamicCapacity = false;
  std::vector<TypedName> fields;
  mlir::Location loc;
};

enum class PointKind { KernelEntry, KernelExit, Instruction };

/// An instruction pattern: the opcode and modifiers every matching
/// instruction has ("ld.global" matches ld.global.nc.v4.f32).
struct InstructionPattern {
  std::string opcode;
  std::vector<std::string> modifiers;
};

struct PointSpec {
  explicit PointSpec(mlir::Location loc) : loc(loc) {}
  PointKind kind = PointKind::KernelEntry;
  /// Instruction points: the instructions matched, and whether the snippet
  /// runs after them (before, by default). A guarded instruction's snippet
  /// runs only when its guard holds.
  std::vector<InstructionPattern> patterns;
  bool after = false;
  /// The snippet, and where its first line is in the spec file (for errors).
  std::string ptx;
  mlir::Location loc;
  unsigned firstLine = 1;
  unsigned indent = 0;
};

struct ProbeSpec {
  explicit ProbeSpec(mlir::Location loc) : loc(loc) {}
  std::string name;
  std::vector<MapSpec> maps;
  std::vector<TypedName> registers;
  std::vector<PointSpec> points;
  /// Probe registers set at entry and read at exit stay in registers
  /// (`carry: registers`, the default) or wait in the thread's local memory
  /// (`carry: local`, with the slot address: no probe register stays live
  /// through the kernel, for a store and a load per thread).
  bool carryInRegisters = true;
  /// The file name errors are reported against.
  std::string file;
  mlir::Location loc;
};

/// Parses and checks a probe spec; errors are emitted at `file:line:col`.
mlir::FailureOr<ProbeSpec> parseProbeSpec(llvm::StringRef text,
                                          llvm::StringRef file,
                                          mlir::MLIRContext *ctx);
/// A built-in probe by name (configs/probes/<name>.yaml, compiled in), or a
/// spec file by path.
mlir::FailureOr<ProbeSpec> loadProbeSpec(llvm::StringRef nameOrPath,
                                         mlir::MLIRContext *ctx);
/// The names of the built-in probes.
std::vector<llvm::StringRef> getBuiltinProbeNames();

/// Bytes of a field or register type ("u64" -> 8); 0 for an unknown one.
uint64_t getTypeBytes(llvm::StringRef type);

} // namespace gpuopt::probe

#endif // GPUOPT_TRANSFORMS_PROBE_PROBESPEC_H
