//===- Session.h - Running and timing a run spec on a GPU -------*- C++ -*-===//
//
// A session holds a resolved run spec's device state: the context, the
// loaded modules, each kernel's buffers and packed arguments. It runs each
// kernel once on freshly initialised buffers (the checked launch, which
// outputs, traces and comparisons use), then times kernels alone and groups
// serial, concurrent and as a CUDA graph, interleaved round by round.
// gpu-run is a command line over it; results are structs, errors Status
// values, and nothing is printed here.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_SESSION_H
#define GPUOPT_RUNTIME_SESSION_H

#include "gpuopt/Runtime/Device.h"
#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/RunSpec.h"
#include "gpuopt/Runtime/Timing.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpuopt::runtime {

/// A kernel spec's device state.
struct KernelRun {
  const Function *Fn = nullptr;
  /// One per argument; empty if not a buffer.
  std::vector<DeviceBuffer> Buffers;
  /// Kept for re-initialisation; shared between arguments of the same text
  /// (the contents are a function of it). Null for zero and out buffers.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> HostInit;
  /// The contents of each module variable, in order.
  std::vector<std::vector<uint8_t>> ConstInit;
  /// One per probe map of the kernel, in the manifest's order.
  std::vector<DeviceBuffer> Probes;
  std::unique_ptr<ArgPack> Args;
};

/// The measurements of one group, in the order they were interleaved.
struct GroupTiming {
  enum class Mode { Alone, Serial, Concurrent, Graph, Also };
  struct Entry {
    Mode M = Mode::Serial;
    /// For Alone and Also: the kernel timed.
    size_t Kernel = 0;
    Stats Time;
  };
  std::vector<Entry> Entries;
};

class Session {
public:
  /// Computes the host-side initial contents of every buffer argument and
  /// module variable of a resolved Spec (random numbers, files) without a
  /// GPU. Arguments of equal texts share theirs: a fused kernel's arguments
  /// repeat its parts' texts, and a search times many candidates over
  /// gigabyte buffers. Spec must outlive the session.
  static Expected<std::unique_ptr<Session>> create(RunSpec &Spec);
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Opens the device (CUDA ordinal) through the process-wide driver, or
  /// through D (a stand-in, or an interposer's own).
  Status open(int Ordinal);
  Status open(CudaDriver &D, int Ordinal);
  const Context &context() const { return *Ctx; }
  RunSpec &spec() { return Spec; }
  KernelSpec &kernel(size_t I) { return Spec.Kernels[I]; }
  KernelRun &run(size_t I) { return Runs[I]; }

  /// Function Name of module Path for kernel Spec, loading the module once
  /// (a kernel with module variables gets its own instance, its variables
  /// set).
  Expected<const Function *> getFunction(const std::string &Path,
                                         const std::string &Name, size_t Spec);
  /// Sets the module variables of kernel I in a loaded instance of its
  /// module.
  Status setConsts(size_t I, const Module &M) const;

  /// The checked launch of kernel I: loads its function (and a cubin's
  /// layout), allocates and initialises its buffers, sizes its dynamic
  /// probe maps by a counting run (returned), allocates and zeroes its
  /// probe buffers, launches once and synchronises.
  Expected<std::vector<CountedMap>> launchChecked(size_t I);
  /// Writes argument Arg's buffer to Path (raw bytes); returns its size.
  Expected<uint64_t> writeOutput(size_t I, unsigned Arg,
                                 const std::string &Path);

  /// Sets every argument buffer of kernel I to its initial contents.
  Status initialiseArgs(size_t I);
  /// Sets every buffer of kernel I to its initial contents, probe buffers
  /// to zeros.
  Status initialise(size_t I);
  /// Packs kernel I's arguments for Params from Buffers (one per argument)
  /// and Probes (one per map). For the kernel's own layout (Probed),
  /// argument J goes to parameter ArgParams[J], each probe parameter gets
  /// its buffer and each capacity parameter its map's capacity as now set;
  /// for another kernel's (a comparison), argument J goes to parameter J.
  Expected<std::unique_ptr<ArgPack>>
  packArgs(size_t I, const std::vector<ParamInfo> &Params,
           const std::vector<DeviceBuffer> &Buffers,
           const std::vector<DeviceBuffer> &Probes, bool Probed) const;
  /// Synchronises, prefixing a failure with What.
  Status syncAfter(const std::string &What) const;

  /// Creates the timing streams: one per member of the largest group.
  Status startTiming();
  /// Kernel I as launched after its checked launch.
  LaunchItem item(size_t I) const;
  const std::vector<const Stream *> &streams() const { return Streams; }
  /// Times kernel I alone (Spec's warmup and repeat).
  Expected<Stats> timeAlone(size_t I);
  /// Times a group in its modes and its "also" kernels, interleaved.
  Expected<GroupTiming> timeGroup(const GroupSpec &G);

private:
  explicit Session(RunSpec &Spec) : Spec(Spec) {}

  RunSpec &Spec;
  // Declared first, destroyed last: the context outlives what it holds.
  std::unique_ptr<Context> Ctx;
  std::vector<KernelRun> Runs;
  std::map<std::string, std::unique_ptr<Module>> Modules;
  std::vector<std::unique_ptr<Function>> Functions;
  std::vector<std::unique_ptr<Stream>> OwnedStreams;
  std::vector<const Stream *> Streams;
};

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_SESSION_H
