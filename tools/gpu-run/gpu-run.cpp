//===- gpu-run.cpp - Run, check and time GPU kernels ----------------------===//
//
// Runs kernels from PTX or cubin with buffers it creates, writes outputs to
// files, compares two modules on the same inputs, and times kernels alone,
// back to back, on concurrent streams and as one CUDA graph. It is how the
// project checks transformed kernels against their originals and measures the
// baselines fusion must beat; see `gpu-run --help` and the README. This file
// is the command line and the text it prints; the work is the runtime
// library's (RunSpec.h, Session.h, ProbeRun.h, CompareRun.h,
// OccupancySweep.h, RunReport.h), which other launchers call alike.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CompareRun.h"
#include "gpuopt/Runtime/ManifestWriter.h"
#include "gpuopt/Runtime/OccupancySweep.h"
#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/RunReport.h"
#include "gpuopt/Runtime/RunSpec.h"
#include "gpuopt/Runtime/Session.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

using namespace gpuopt::runtime;

static const char *const HelpText =
    R"(usage: gpu-run MODULE [KERNEL OPTIONS] [+ MODULE [KERNEL OPTIONS] ...] [OPTIONS]
       gpu-run --spec RUNS.json [OPTIONS]

Runs kernels from PTX (compiled by the CUDA driver) or cubin files with
buffers it creates, writes chosen buffers to files, times kernels with CUDA
events, and compares two modules on the same inputs.

Kernel options (apply to the kernel spec they follow; a lone '+' starts
another kernel spec):
  --kernel NAME        entry to run (default: the module's only kernel)
  --manifest FILE      launch manifest (docs/manifest.md), which may stand
                       for MODULE (its module.path); without one, a PTX
                       file's .entry headers give the parameter layout and
                       a cubin's comes from the driver
  --grid X[,Y[,Z]]     grid (required unless the manifest fixes it)
  --part-grid P=X[xY[xZ]]
                       a launch-agnostic fused kernel (its manifest has
                       "shape_params", gpu-opt --hfuse runtime-shapes=true):
                       part P's grid (default: the manifest's
                       "default_grid"); gpu-run computes the fused grid and
                       dynamic shared memory from the parts' (thread split:
                       the most blocks of any part; interleave, dynamic: the
                       sum) and sets the shape parameters itself
  --part-smem P=BYTES  such a kernel: part P's dynamic shared memory, where
                       the manifest takes it at launch (default: its
                       "default_dynamic_smem")
  --block X[,Y[,Z]]    block (default: .reqntid, or the manifest's)
  --smem BYTES         dynamic shared memory (default: the manifest's; 0 when
                       the kernel names no .extern .shared array); at least
                       a fixed manifest's; more than 48 KiB (with the
                       static), or a manifest's "smem_optin", is opted in
                       (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
  --arg SPEC           one per kernel parameter, in order, except probe
                       buffers and probe capacities (below), which gpu-run
                       sets itself:
      buf:TYPE:COUNT:INIT   a device buffer of COUNT elements (COUNT may be a
                            product such as 16*64*56*56); INIT is one of
          zero                  zero bytes
          out                   output only: 0xFF bytes before the checked
                                launch, so that unwritten elements show
          fill:VALUE            every element VALUE
          random:SEED[:LO:HI]   uniform random numbers, the same for a SEED
                                on every machine: floats in [LO, HI)
                                (default [-1, 1)), integers in [LO, HI)
                                (default: any value of the type)
          file:PATH             the raw little-endian bytes of PATH, which
                                must hold exactly COUNT elements
      scalar:TYPE:VALUE     a value: decimal, 0x hex, or a float like 1e-5
      null                  a null pointer
                            (buf: and null also go into an aggregate
                            parameter of 8 bytes or more at an 8-byte
                            aligned offset: the address in its first 8
                            bytes, zeros after them, for a struct whose
                            first member is a pointer)
      bytes:HEX             raw bytes of an aggregate (.b8 array) parameter
      TYPE is u8 s8 u16 s16 u32 s32 u64 s64 (i8..i64 too) f16 bf16 f32 f64
  --const NAME:TYPE:COUNT:INIT
                       before any launch, fill the module's variable NAME
                       (a `.const` or `.global` of the PTX, e.g. a
                       __constant__ array, or its C++ name when it is in a
                       namespace) with COUNT elements of TYPE from INIT as
                       for buf: (not out); they must fit the variable, whose
                       first bytes they set, the rest keeping the module's
                       initial value. A spec with --const loads its own
                       instance of the module
  --out INDEX:PATH     after the checked launch, write argument INDEX's
                       buffer to PATH (raw little-endian bytes); INDEX
                       counts the --arg options from 0
  --trace DIR          after the checked launch, write the probe records
                       to DIR (created; it must not exist or be an empty
                       directory): DIR/manifest.json, a copy of the
                       kernel's manifest; DIR/MAP.npy per probe map, a
                       NumPy array of shape (grid blocks, units per block,
                       capacity) of records, units being threads, warps
                       or 1 per block, with one field per record field
                       (bf16 fields read as their u16 bits), capacity
                       being the one the counting run chose for a map of
                       "dynamic" capacity; DIR/MAP.counts.npy per map with
                       slot counts, a '<u4' array of shape (grid blocks,
                       units per block): the records each slot's writer
                       tried to save, dropped ones included;
                       DIR/trace.json: {"kernel", "module", "grid",
                       "block", "device": {"name", "multiprocessors",
                       "compute_capability"}, "maps": [{"name", "probe",
                       "level", "capacity", "dynamic", "record_bytes",
                       "shape", "file", "counts" (the counts file or
                       null), "overflow"}]}
  --label NAME         name in reports (default: the kernel name)

Options:
  --warmup N           untimed repetitions before timing (default 3)
  --repeat N           timed repetitions (default 20); 0: run once, no timing
  --serial             with several kernels: also time them back to back on
                       one stream
  --concurrent         with several kernels: also time them on one stream
                       each, released together
  --graph              with several kernels: also time them as one CUDA
                       graph of independent kernel nodes (no edges), built
                       and instantiated once and launched on one stream
  --occupancy-sweep    also time each kernel alone with fewer of its blocks
                       per SM (1, 2, 3, 4, 6, 8, ... below what fits),
                       limited by padding its dynamic shared memory; the
                       JSON report gives each kernel "occupancy":
                       {"blocks_per_sm": N, "sweep": [{"blocks_per_sm": K,
                       "dynamic_smem": BYTES, "time": TIME}, ...]}, which
                       gpu-opt's fusion planner reads (profile=)
  --compare OTHER[:KERNEL]
                       also run KERNEL (default: the same name) of module
                       OTHER with the same arguments and launch shape on
                       freshly initialised buffers, and compare every buffer
                       (max abs and rel difference, relative L2 norm, bit
                       identity); exit status 1 unless all are bit-identical
                       or within --tolerance
  --tolerance T        with --compare: pass when every buffer's relative L2
                       difference ||a-b||/||b|| is at most T and no NaN
                       appears on one side only
  --spec FILE          kernels and groups from a JSON run spec (below)
  --json FILE          also write the device, launches, timings and
                       comparison as JSON
  --device N           CUDA device ordinal (default 0)
  --list               print each kernel's parameter layout and exit (no GPU)
  --print-manifest     print the launch manifest and exit (no GPU)
  -h, --help           this text

Each kernel runs once on freshly initialised buffers first (the checked
launch, which --out, --trace and --compare use); timing launches reuse the
buffers, so a kernel that accumulates (a histogram) keeps accumulating while
timed. Time is the median of --repeat repetitions, measured with CUDA events,
with min, max and spread = (max - min) / median.

Probe buffers: a kernel whose manifest lists "probes" (docs/manifest.md;
gpu-opt --probe adds them) has a parameter per probe map that receives a
record buffer. gpu-run allocates each one (its records for the launch's grid
and block, and its overflow counter when the map has one), zero-fills it
before the checked launch and passes its address; --arg and "args" leave
these parameters out. Timing launches reuse the probe buffers without
zeroing them again, so they run against the records the checked launch left.
After the checked launch gpu-run prints a line per map,
  probe MAP (PROBE): SLOTS slots x CAPACITY, overflow N
where SLOTS are the grid's threads, warps or blocks and N is the count of
records the kernel dropped because their slots were full ("no counter" when
the map has none); --trace also writes the records. --compare runs the other
kernel with the same arguments and no probe buffers: the kernel before
--probe.

Counting run: a map of "dynamic" capacity (manifest version 4) does not know
before the kernel runs how many records a slot needs; the kernel takes the
capacity in a u32 parameter, which gpu-run sets (no --arg either), and the
map's buffer has a u32 per slot counting the records its writer tried to
save. Before the checked launch of such a kernel, gpu-run runs it once more
on the side: on a second instance of its module (so that the module's
globals, such as counters, stay untouched), on device copies of the buffer
arguments as initialised (so that the real ones are not touched), with the
dynamic maps' capacities 0 (their buffers holding only the counts and the
overflow counter) and the fixed maps' buffers as usual. The largest count
of each dynamic map becomes its capacity, and gpu-run prints
  probe MAP: counting run: at most N records per slot, buffer B bytes
after the kernel's line; it fails naming the map, the records and the bytes
when the buffer does not fit the device's free memory. The checked launch,
its line
  probe MAP (PROBE): SLOTS slots x N (dynamic), overflow K
and the timing launches then use buffers of that capacity, as for fixed
maps (timing launches do not zero them again). The kernel must record the
same on both runs: a kernel whose records depend on timing or on state
outside its arguments may overflow on the checked launch, which its
overflow count shows.

Run spec (--spec FILE):
  {"warmup": 3, "repeat": 20,
   "kernels": [{"label": "a", "module": "a.ptx", "kernel": "k",
                "manifest": "a.json", "grid": [64], "block": [256],
                "smem": 0, "part_grids": {"0": [64], "1": "16x16"},
                "part_smem": {"1": 4096}, "args": ["buf:f32:1024:random:1",
                "scalar:u32:1024"], "consts": ["coeffs:f32:16:fill:1"],
                "out": {"0": "a0.bin"}, "trace": "a.trace"}, ...],
   "groups": [{"name": "a+b", "kernels": ["a", "b"],
               "modes": ["alone", "serial", "concurrent", "graph"],
               "also": ["fused"]}]}
  Every kernel is timed alone (unless "time_alone": false, for a kernel
  timed only as a group's "also"); each group in its modes (default: serial and
  concurrent): "alone" times each of the group's kernels alone again,
  "serial", "concurrent" and "graph" time them together as --serial,
  --concurrent and --graph do. "also" names further kernels to time alone in
  the group's rounds, e.g. the fused kernel next to the baselines of its
  originals. All of a group's measurements are interleaved round by round so
  that clock drift affects them alike. A kernel's "reset": [INDEX, ...]
  names buffer arguments zeroed before each of its timed and warm-up
  launches, outside the timed interval (state its library zeroes before
  every launch, such as a tile counter). Relative paths are relative to the
  current directory.

JSON report (--json FILE): "device", "warmup", "repeat", "kernels" (each
with "time" unless --repeat 0; a kernel with probe buffers has "probes":
[{"name", "probe", "capacity", "dynamic": true or false, "overflow": N or
null}] and, with --trace, "trace": DIR),
"compare" (with --compare) and "groups":
  {"name": "a+b", "kernels": ["a", "b"],
   "alone": {"a": TIME, "b": TIME}, "serial": TIME, "concurrent": TIME,
   "graph": TIME, "also": {"fused": TIME}}
  with only the modes measured, where TIME is {"median_ms", "min_ms",
  "max_ms", "mean_ms", "spread", "samples_ms"}.

Environment: GPUOPT_CUDA_DRIVER names the driver library (libcuda.so.1).
Exit status: 0 success, 1 --compare found differences, 2 any error.
)";

namespace {

struct Options {
  RunSpec Spec;
  bool Serial = false, Concurrent = false, Graph = false;
  bool OccupancySweep = false;
  std::string Compare;
  std::optional<double> Tolerance;
  int Device = 0;
  std::string JsonOut, SpecFile;
  bool List = false, PrintManifest = false;
};

[[noreturn]] void fatal(const std::string &Message) {
  std::fprintf(stderr, "gpu-run: error: %s\n", Message.c_str());
  std::exit(2);
}

void check(const Status &S) {
  if (!S.ok())
    fatal(S.message());
}

template <typename T> T take(Expected<T> E) {
  if (!E)
    fatal(E.status().message());
  return std::move(*E);
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

Options parseCommandLine(int Argc, char **Argv) {
  Options O;
  std::vector<KernelSpec> &Specs = O.Spec.Kernels;
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  if (Args.empty()) {
    std::fputs(HelpText, stderr);
    std::exit(2);
  }
  Specs.emplace_back();
  auto Value = [&](size_t &I) -> std::string {
    if (I + 1 >= Args.size())
      fatal(Args[I] + " needs a value");
    return Args[++I];
  };
  auto Unsigned = [&](size_t &I, const char *What) {
    return take(parseUnsignedOption(Value(I), What));
  };
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    KernelSpec &K = Specs.back();
    if (A == "-h" || A == "--help") {
      std::fputs(HelpText, stdout);
      std::exit(0);
    } else if (A == "+") {
      if (K.ModulePath.empty() && K.ManifestPath.empty())
        fatal("'+' must follow a kernel spec (a module and its options)");
      Specs.emplace_back();
    } else if (A == "--kernel") {
      K.KernelName = Value(I);
    } else if (A == "--manifest") {
      K.ManifestPath = Value(I);
    } else if (A == "--grid") {
      K.Grid = take(parseDim3(Value(I)));
    } else if (A == "--part-grid") {
      check(addPartGridSpec(K, Value(I)));
    } else if (A == "--part-smem") {
      check(addPartSmemSpec(K, Value(I)));
    } else if (A == "--block") {
      K.Block = take(parseDim3(Value(I)));
    } else if (A == "--smem") {
      K.Smem = Unsigned(I, "--smem");
    } else if (A == "--arg") {
      K.Args.push_back(take(parseArgSpec(Value(I))));
    } else if (A == "--const") {
      K.Consts.push_back(take(parseConstSpec(Value(I), "--const")));
    } else if (A == "--out") {
      check(addOutSpec(K, Value(I)));
    } else if (A == "--trace") {
      K.TraceDir = Value(I);
      if (K.TraceDir.empty())
        fatal("--trace needs a directory");
    } else if (A == "--label") {
      K.Label = Value(I);
    } else if (A == "--warmup") {
      O.Spec.Warmup = unsigned(Unsigned(I, "--warmup"));
    } else if (A == "--repeat") {
      O.Spec.Repeat = unsigned(Unsigned(I, "--repeat"));
    } else if (A == "--serial") {
      O.Serial = true;
    } else if (A == "--concurrent") {
      O.Concurrent = true;
    } else if (A == "--graph") {
      O.Graph = true;
    } else if (A == "--occupancy-sweep") {
      O.OccupancySweep = true;
    } else if (A == "--compare") {
      O.Compare = Value(I);
    } else if (A == "--tolerance") {
      std::string T = Value(I);
      char *End = nullptr;
      double V = std::strtod(T.c_str(), &End);
      if (T.empty() || *End || !(V >= 0))
        fatal("--tolerance: expected a non-negative number, got '" + T + "'");
      O.Tolerance = V;
    } else if (A == "--spec") {
      O.SpecFile = Value(I);
    } else if (A == "--json") {
      O.JsonOut = Value(I);
    } else if (A == "--device") {
      O.Device = int(Unsigned(I, "--device"));
    } else if (A == "--list") {
      O.List = true;
    } else if (A == "--print-manifest") {
      O.PrintManifest = true;
    } else if (!A.empty() && A[0] == '-') {
      fatal("unknown option '" + A + "' (see --help)");
    } else if (K.ModulePath.empty()) {
      K.ModulePath = A;
    } else {
      fatal("unexpected '" + A + "': kernel spec already has module " +
            K.ModulePath + " (a lone '+' starts another)");
    }
  }
  if (Specs.back().ModulePath.empty() && Specs.back().ManifestPath.empty()) {
    if (Specs.size() > 1)
      fatal("'+' must be followed by a module");
    Specs.pop_back();
  }
  if (!O.SpecFile.empty() && !Specs.empty())
    fatal("--spec and modules on the command line cannot be combined");
  if (O.SpecFile.empty() && Specs.empty())
    fatal("no module given (see --help)");
  return O;
}

/// The group --serial, --concurrent and --graph time: every kernel spec of
/// the command line.
void addCommandLineGroup(Options &O) {
  std::vector<KernelSpec> &Specs = O.Spec.Kernels;
  bool AnyMode = O.Serial || O.Concurrent || O.Graph;
  if (O.SpecFile.empty() && Specs.size() > 1 && AnyMode) {
    GroupSpec G;
    for (size_t I = 0; I < Specs.size(); ++I) {
      G.Members.push_back(I);
      G.Name += (G.Name.empty() ? "" : "+") + Specs[I].Label;
    }
    G.Serial = O.Serial;
    G.Concurrent = O.Concurrent;
    G.Graph = O.Graph;
    O.Spec.Groups.push_back(G);
  } else if (Specs.size() == 1 && AnyMode) {
    fatal("--serial, --concurrent and --graph need several kernel specs");
  }
}

/// "OTHER[:KERNEL]" of --compare; KERNEL defaults to Kernel.
std::pair<std::string, std::string> splitCompare(const std::string &Text,
                                                 const std::string &Kernel) {
  size_t Colon = Text.rfind(':');
  if (Colon != std::string::npos && Text.find('/', Colon) == std::string::npos)
    return {Text.substr(0, Colon), Text.substr(Colon + 1)};
  return {Text, Kernel};
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// --list: each kernel's launch and parameter layout.
void printLayout(const Manifest &M) {
  std::cout << M.Module.Path << " (" << M.Module.Format
            << (M.Module.Target.empty() ? "" : ", " + M.Module.Target) << ")\n";
  for (const KernelInfo &KI : M.Kernels) {
    std::cout << "kernel " << KI.Name << ": block "
              << (KI.Launch.Block ? toString(*KI.Launch.Block) : "runtime")
              << (KI.Launch.MaxThreads
                      ? ", max threads " + toString(*KI.Launch.MaxThreads)
                      : "")
              << ", dynamic smem "
              << (KI.Launch.DynamicSmem ? std::to_string(*KI.Launch.DynamicSmem)
                                        : "runtime")
              << ", " << KI.paramBytes() << " parameter bytes\n";
    for (size_t I = 0; I < KI.Params.size(); ++I) {
      const ParamInfo &P = KI.Params[I];
      std::cout << "  " << I << ": " << P.Name << " ." << P.Type << " size "
                << P.Size << " align " << P.Align << " offset " << P.Offset
                << " " << toString(P.Kind);
      if (const ProbeBuffer *PB = probeOfParam(KI, I))
        std::cout << ", probe buffer '" << PB->Name << "'";
      else if (const ProbeBuffer *PB = capacityOfParam(KI, I))
        std::cout << ", probe capacity of '" << PB->Name << "'";
      for (const ShapeParam &SP : KI.ShapeParams)
        if (SP.Param == I)
          std::cout << ", " << toString(SP.Field) << " of part " << SP.Part;
      std::cout << "\n";
    }
  }
}

std::string formatStats(const Stats &S) {
  char Buf[200];
  std::snprintf(Buf, sizeof(Buf),
                "median %.4f ms (min %.4f, max %.4f, spread %.1f%%)", S.Median,
                S.Min, S.Max, 100 * S.spread());
  return Buf;
}

void printComparison(const KernelSpec &K, const RunComparison &C) {
  std::printf("compare %s:%s against %s:%s\n", K.ModulePath.c_str(),
              K.Kernel.Name.c_str(), C.Module.c_str(), C.Kernel.c_str());
  for (const BufferComparison &B : C.Buffers) {
    const CompareResult &R = B.Result;
    std::printf("  arg %zu (%s): %s; %llu of %llu elements differ, max abs "
                "%.6g, max rel %.6g, rel L2 %.6g%s\n",
                B.Arg, toString(B.Type),
                R.bitIdentical() ? "bit-identical" : "DIFFERENT",
                (unsigned long long)R.Mismatches,
                (unsigned long long)R.Elements, R.MaxAbs, R.MaxRel, R.RelNorm,
                R.NaNMismatches ? " (NaN on one side only)" : "");
  }
  std::printf("compare: %s\n", C.BitIdentical ? "all buffers bit-identical"
                               : C.Pass       ? "within tolerance"
                                              : "FAILED");
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Runs kernel I once (the checked launch), prints what it did, and writes
/// its probe trace and outputs.
KernelReport runChecked(Session &S, size_t I) {
  KernelSpec &K = S.kernel(I);
  std::vector<CountedMap> Counted = take(S.launchChecked(I));
  const Function &Fn = *S.run(I).Fn;
  std::printf("kernel %s (%s): grid %s, block %s, dynamic smem %llu; %d "
              "registers, %d B static smem, %d B local: ran\n",
              K.Label.c_str(), K.ModulePath.c_str(),
              toString(K.Config.Grid).c_str(), toString(K.Config.Block).c_str(),
              (unsigned long long)K.Config.DynamicSmem, Fn.Registers,
              Fn.StaticSmem, Fn.LocalBytes);
  // A launch-agnostic kernel: what each part was given.
  if (!K.ShapeValues.empty()) {
    // Per part: grid x, y, z and dynamic shared memory (-1: not given).
    std::vector<std::array<int64_t, 4>> Parts(K.Kernel.FusedFrom.size(),
                                              {1, 1, 1, -1});
    for (size_t J = 0; J < K.ShapeValues.size(); ++J) {
      const ShapeParam &SP = K.Kernel.ShapeParams[J];
      Parts[SP.Part][size_t(SP.Field)] = K.ShapeValues[J];
    }
    for (size_t P = 0; P < Parts.size(); ++P) {
      std::printf("  part %zu (%s): grid %lld,%lld,%lld", P,
                  K.Kernel.FusedFrom[P].Kernel.c_str(), (long long)Parts[P][0],
                  (long long)Parts[P][1], (long long)Parts[P][2]);
      if (Parts[P][3] >= 0)
        std::printf(", dynamic smem %lld", (long long)Parts[P][3]);
      std::printf("\n");
    }
  }
  for (const CountedMap &C : Counted)
    std::printf("  probe %s: counting run: at most %llu records per slot, "
                "buffer %llu bytes\n",
                C.Name.c_str(), (unsigned long long)C.Capacity,
                (unsigned long long)C.TotalBytes);
  KernelReport R = KernelReport::of(K, Fn);
  if (!K.Kernel.Probes.empty()) {
    R.Probed = true;
    R.Probes = take(readProbes(S, I, /*WithRecords=*/!K.TraceDir.empty()));
    for (const ProbeResult &P : R.Probes) {
      std::string Name = P.Name + (P.Probe.empty() ? "" : " (" + P.Probe + ")");
      std::string Counter = P.Overflow
                                ? "overflow " + std::to_string(*P.Overflow)
                                : std::string("no counter");
      std::printf("  probe %s: %llu slots x %llu%s, %s\n", Name.c_str(),
                  (unsigned long long)P.Slots, (unsigned long long)P.Capacity,
                  P.Dynamic ? " (dynamic)" : "", Counter.c_str());
    }
    if (!K.TraceDir.empty())
      check(writeTrace(S, I, R.Probes));
    // The records are in the trace; the report keeps the counters.
    for (ProbeResult &P : R.Probes)
      P.Records = {};
  }
  for (const auto &[Index, Path] : K.Outs) {
    uint64_t Bytes = take(S.writeOutput(I, Index, Path));
    std::printf("  wrote argument %u (%zu bytes) to %s\n", Index, size_t(Bytes),
                Path.c_str());
  }
  if (!K.TraceDir.empty())
    std::printf("  wrote trace to %s\n", K.TraceDir.c_str());
  return R;
}

/// Times every kernel alone (and sweeps its occupancy), then every group.
void runTiming(Session &S, const Options &O, RunReport &Report) {
  const RunSpec &Spec = O.Spec;
  check(S.startTiming());
  Report.Timed = true;
  for (size_t I = 0; I < Spec.Kernels.size(); ++I) {
    const KernelSpec &K = Spec.Kernels[I];
    if (!K.TimeAlone)
      continue;
    Stats St = take(S.timeAlone(I));
    std::printf("time %s: %s, %u runs after %u warm-up\n", K.Label.c_str(),
                formatStats(St).c_str(), Spec.Repeat, Spec.Warmup);
    Report.Kernels[I].Time = St;
    if (!O.OccupancySweep)
      continue;
    OccupancySweep Sweep =
        take(sweepOccupancy(S, I, [&](const OccupancySweep &SoFar) {
          const OccupancyPoint &P = SoFar.Points.back();
          std::printf("time %s at %d of %d blocks per SM: %s\n",
                      K.Label.c_str(), P.BlocksPerSM, SoFar.BlocksPerSM,
                      formatStats(P.Time).c_str());
        }));
    if (!Sweep.SharedPerSMKnown)
      std::printf("occupancy %s: the driver does not report shared memory "
                  "per SM; no sweep\n",
                  K.Label.c_str());
    Report.Kernels[I].Occupancy = std::move(Sweep);
  }
  for (const GroupSpec &G : Spec.Groups) {
    GroupTiming Timing = take(S.timeGroup(G));
    if (Timing.Entries.empty())
      continue;
    GroupReport GR = GroupReport::of(Spec, G, Timing);
    for (const GroupReport::Entry &E : GR.Entries) {
      std::string Name = toString(E.Mode);
      if (!E.Label.empty())
        Name += " " + E.Label;
      std::printf("time %s / %s: %s\n", G.Name.c_str(), Name.c_str(),
                  formatStats(E.Time).c_str());
    }
    Report.Groups.push_back(std::move(GR));
  }
}

} // namespace

int main(int Argc, char **Argv) {
  Options O = parseCommandLine(Argc, Argv);
  RunSpec &Spec = O.Spec;
  if (!O.SpecFile.empty())
    check(readRunSpec(O.SpecFile, Spec));
  if (Spec.Kernels.empty())
    fatal("no kernels to run");
  if (!O.Compare.empty() && Spec.Kernels.size() != 1)
    fatal("--compare takes exactly one kernel spec");
  if (O.Tolerance && O.Compare.empty())
    fatal("--tolerance applies to --compare");

  if (O.List || O.PrintManifest) {
    for (KernelSpec &K : Spec.Kernels) {
      std::optional<Manifest> M = take(manifestFor(K));
      if (!M)
        fatal(K.ModulePath + ": --list and --print-manifest need a PTX file "
                             "or a manifest");
      if (O.PrintManifest)
        std::cout << writeManifest(*M);
      else
        printLayout(*M);
    }
    return 0;
  }

  // Everything that can be checked without a GPU is checked first.
  check(resolveRunSpec(Spec));
  addCommandLineGroup(O);
  // Host-side initial contents (random numbers, files) before the GPU.
  std::unique_ptr<Session> S = take(Session::create(Spec));
  check(S->open(O.Device));
  const DeviceInfo &DI = S->context().info();
  std::printf("device %d: %s (sm_%d%d, %d SMs, %.1f GiB, driver %d.%d)\n",
              DI.Ordinal, DI.Name.c_str(), DI.ComputeMajor, DI.ComputeMinor,
              DI.Multiprocessors, double(DI.TotalMemory) / (1ull << 30),
              DI.DriverVersion / 1000, DI.DriverVersion % 1000 / 10);

  RunReport Report;
  Report.Device = DI;
  Report.Warmup = Spec.Warmup;
  Report.Repeat = Spec.Repeat;
  for (size_t I = 0; I < Spec.Kernels.size(); ++I)
    Report.Kernels.push_back(runChecked(*S, I));

  int ExitCode = 0;
  if (!O.Compare.empty()) {
    const KernelSpec &K = Spec.Kernels[0];
    auto [OtherPath, OtherKernel] = splitCompare(O.Compare, K.Kernel.Name);
    RunComparison C =
        take(compareRun(*S, 0, OtherPath, OtherKernel, O.Tolerance));
    printComparison(K, C);
    if (!C.Pass)
      ExitCode = 1;
    Report.Compare = std::move(C);
  }

  if (Spec.Repeat > 0)
    runTiming(*S, O, Report);

  if (!O.JsonOut.empty()) {
    std::ofstream Out(O.JsonOut);
    if (!Out || !(Out << writeRunReport(Report)))
      fatal("cannot write " + O.JsonOut);
  }
  return ExitCode;
}
