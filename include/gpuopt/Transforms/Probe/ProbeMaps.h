//===- ProbeMaps.h - Probe record maps of one kernel ------------*- C++ -*-===//
//
// What --probe-plan decides for a kernel and the later probe passes follow:
// each record map's layout and how it is written (fixed records or counted,
// slot computed at entry or at the exits, state in registers or in local
// memory), the kernel's probe plan (its specs, the placement and, for
// keep-occupancy, what ptxas reported before probing) and its fused parts.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBEMAPS_H
#define GPUOPT_TRANSFORMS_PROBE_PROBEMAPS_H

#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Transforms/Probe/ProbeSnippets.h"

#include <optional>

namespace gpuopt::probe {

/// A record map as laid out in the buffer.
struct MapLayout {
  const MapSpec *spec = nullptr;
  std::string probeName;
  std::string param;
  llvm::SmallVector<int64_t> offsets;
  int64_t recordBytes = 0;
  /// Registers holding the next record's address and the records written.
  std::string addr, count, overflow;
  /// save.MAP statements in the entry, exit and instruction snippets. Each
  /// exit path runs the exit snippets once, so a thread saves at most
  /// entrySaves + exitSaves records: when that fits the capacity, every
  /// save has a fixed record and needs no counter ("static").
  int64_t entrySaves = 0, exitSaves = 0, instSaves = 0;
  bool isStatic = false;
  /// Static, and its probe carries state in local memory: the slot address
  /// (0 for a thread that does not write) waits in `local` from the entry to
  /// the exits instead of in a register (`carry: local`).
  bool carried = false;
  std::string local, has;
  /// Static, saved only at exits, state in registers: only the threads that
  /// write compute the slot, at the exit.
  bool atExit = false;
  /// Saved at exits only, and every value it saves stays zero in this
  /// kernel: the runtime zeroes the buffer, so its saves store nothing
  /// (decided by --probe-lower).
  bool zeroRecords = false;
  /// The record the next save writes (static maps), while lowering.
  int64_t nextRecord = 0;
  /// `capacity: dynamic`: the capacity arrives in a .u32 parameter, and each
  /// writer stores, at its exit, how many records it tried to save into the
  /// slot counts after the records.
  bool dynamic = false;
  std::string capParam, capReg, countAddr;
  /// A fused kernel's records end with the part that wrote them; -1 for a
  /// block-level record of a thread-split kernel, whose block runs every
  /// part. With a replicated part, then the copy of the part's block that
  /// wrote them (0 in a part of one block; -1 where the part is).
  bool partField = false;
  bool copyField = false;
  bool partIsWholeBlock = false;
  /// The buffer lies in the kernel's last parameter (`param`), at the
  /// grid's blocks times this many bytes (the bytes per block of the maps
  /// before it); none: `param` is the map's own.
  std::optional<int64_t> blockOffset;
};

/// A fused kernel's parts: the top-level scopes of its body, and whether its
/// strategy splits threads (`gpuopt.fusion`). Empty for other kernels; an
/// error when the scopes do not match the parts.
struct FusedParts {
  llvm::SmallVector<ptx::ScopeOp> scopes;
  bool threadSplit = false;
  /// Per part of a thread split: its first thread in the fused block, its
  /// own block's threads and how many of its blocks a fused block runs
  /// (copy c on threads [first + c * threads, first + (c + 1) * threads)).
  struct Copies {
    int64_t first = 0, threads = 0, replicas = 1;
  };
  llvm::SmallVector<Copies> copies;
  /// Some part runs several of its blocks per fused block: records name
  /// the copy too.
  bool replicated = false;
};
mlir::FailureOr<FusedParts> getFusedParts(ptx::EntryOp entry);

/// Lays out the maps of `probes` for `entry` (a fused kernel's records get a
/// `part` field, and a `copy` field with a replicated part); their
/// parameters and registers get `names`.
mlir::FailureOr<std::vector<MapLayout>>
layoutMaps(ptx::EntryOp entry, llvm::ArrayRef<CheckedProbe> probes,
           const FusedParts &parts, const ProbeNames &names);

/// Where the buffers of a kernel's maps lie in its last parameter
/// (`buffer=last-param`): the parameter, the bytes each block of the grid
/// needs and the alignment of the parameter's address.
struct ProbeScratch {
  int64_t param = 0;
  int64_t bytesPerBlock = 0;
  int64_t align = 0;
};

/// Puts the buffers of `maps` into `entry`'s last parameter: checks that
/// it can hold them and sets each map's blockOffset and param. Each map
/// takes, per block, its slots' records and its overflow counter, rounded
/// up to the largest buffer alignment, so that its records and counter for
/// n blocks fit in n times that (the counter lies after all blocks'
/// records).
mlir::FailureOr<ProbeScratch>
placeInLastParam(ptx::EntryOp entry, llvm::MutableArrayRef<MapLayout> maps);

/// --probe-plan's decisions for one kernel, as the passes use them; stored
/// as `#gpuopt.probe_plan` (getProbePlan, setProbePlan).
struct ProbePlan {
  llvm::SmallVector<std::string> specs;
  /// Every probe's state in local memory (a second placement).
  bool carryLocal = false;
  /// No exit function: the exit code inline at every exit.
  bool inlineExits = false;
  /// The kernel's parameters before the buffers.
  int64_t params = 0;
  /// What ptxas reported before probing, when keep-occupancy runs.
  std::optional<KernelResources> before;
  /// The exit function --probe-lower built, if any.
  std::string exitFunction;
  /// The prefix of the names the probes add to the kernel (ProbeNames).
  std::string prefix = kDefaultProbePrefix.str();
  /// The buffers lie in the kernel's last parameter (`buffer=last-param`).
  bool lastParam = false;
};
std::optional<ProbePlan> getProbePlan(ptx::EntryOp entry);
void setProbePlan(ptx::EntryOp entry, const ProbePlan &plan);
void removeProbePlan(ptx::EntryOp entry);

/// The buffer parameters and `gpuopt.probes` (the manifest's `probes`) of
/// `maps`, added to `entry`; with `scratch`, no parameter: the maps' buffers
/// lie in its parameter (`gpuopt.probe_scratch`).
void attachProbeMaps(ptx::EntryOp entry, llvm::ArrayRef<MapLayout> maps,
                     std::optional<ProbeScratch> scratch = std::nullopt);

} // namespace gpuopt::probe

#endif // GPUOPT_TRANSFORMS_PROBE_PROBEMAPS_H
