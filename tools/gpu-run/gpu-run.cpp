//===- gpu-run.cpp - Run, check and time GPU kernels ----------------------===//
//
// Runs kernels from PTX or cubin with buffers it creates, writes outputs to
// files, compares two modules on the same inputs, and times kernels alone,
// back to back, on concurrent streams and as one CUDA graph. It is how the
// project checks transformed kernels against their originals and measures the
// baselines fusion must beat; see `gpu-run --help` and the README.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ArgSpec.h"
#include "gpuopt/Runtime/Compare.h"
#include "gpuopt/Runtime/Device.h"
#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/Npy.h"
#include "gpuopt/Runtime/PTXScanner.h"
#include "gpuopt/Runtime/Timing.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

using namespace gpuopt::runtime;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

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
                "smem": 0, "args": ["buf:f32:1024:random:1",
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
  that clock drift affects them alike. Relative paths are relative to the
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

/// --const NAME:TYPE:COUNT:INIT: a module variable and its contents.
struct ConstSpec {
  /// As given, and the PTX symbol it names once resolved.
  std::string Name, Symbol;
  /// A buffer spec (buf:TYPE:COUNT:INIT) for the contents.
  ArgSpec Value;
  /// The option's text, for messages.
  std::string Text;
};

struct KernelSpec {
  std::string Label;
  std::string ModulePath;
  std::string KernelName;
  std::string ManifestPath;
  std::optional<Dim3> Grid, Block;
  std::optional<uint64_t> Smem;
  /// The arguments given: one per parameter, probe buffers excepted.
  std::vector<ArgSpec> Args;
  /// Module variables to fill (--const), in order.
  std::vector<ConstSpec> Consts;
  std::vector<std::pair<unsigned, std::string>> Outs;
  /// Where to write the probe records (--trace), or empty.
  std::string TraceDir;
  /// Time the kernel alone too, not only in the groups that name it.
  bool TimeAlone = true;

  // Resolved before the GPU is touched (except a cubin's layout).
  KernelInfo Kernel;
  bool HasLayout = false;
  LaunchConfig Config;
  /// Opt in to Config.DynamicSmem whatever the driver's static size (the
  /// manifest's "smem_optin").
  bool SmemOptin = false;
  /// The parameter that receives Args[I]: the parameters in order, probe
  /// parameters skipped.
  std::vector<size_t> ArgParams;
  /// With --trace, the NumPy descr of each probe map's records.
  std::vector<std::string> ProbeDescrs;
};

struct Group {
  std::string Name;
  std::vector<size_t> Members;
  bool Alone = false, Serial = false, Concurrent = false, Graph = false;
  /// Kernels timed alone in the group's rounds ("also").
  std::vector<size_t> Also;
};

struct Options {
  std::vector<KernelSpec> Specs;
  std::vector<Group> Groups;
  unsigned Warmup = 3, Repeat = 20;
  bool Serial = false, Concurrent = false, Graph = false;
  bool OccupancySweep = false;
  std::string Compare;
  std::optional<double> Tolerance;
  int Device = 0;
  std::string JsonOut, SpecFile;
  bool List = false, PrintManifest = false;
};

/// A kernel spec's device state.
struct Prepared {
  const Function *Fn = nullptr;
  std::vector<DeviceBuffer> Buffers; // One per argument; empty if not a buffer.
  /// Kept for re-initialisation; shared between arguments of the same text
  /// (the contents are a function of it).
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> HostInit;
  /// The contents of each --const, in order.
  std::vector<std::vector<uint8_t>> ConstInit;
  /// One per probe map of the kernel, in the manifest's order.
  std::vector<DeviceBuffer> Probes;
  std::unique_ptr<ArgPack> Args;
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

bool endsWith(const std::string &S, const char *Suffix) {
  size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

std::string dirName(const std::string &Path) {
  size_t Pos = Path.rfind('/');
  return Pos == std::string::npos ? "" : Path.substr(0, Pos + 1);
}

uint64_t parseUnsigned(const std::string &Text, const char *What) {
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(Text.c_str(), &End, 0);
  if (Text.empty() || Text[0] == '-' || *End || errno)
    fatal(std::string(What) + ": expected an unsigned integer, got '" + Text +
          "'");
  return V;
}

//===----------------------------------------------------------------------===//
// Command line and run spec
//===----------------------------------------------------------------------===//

void addOut(KernelSpec &K, const std::string &Text) {
  size_t Colon = Text.find(':');
  if (Colon == std::string::npos || Colon == 0 || Colon + 1 == Text.size())
    fatal("--out: expected INDEX:PATH, got '" + Text + "'");
  K.Outs.push_back({unsigned(parseUnsigned(Text.substr(0, Colon), "--out")),
                    Text.substr(Colon + 1)});
}

/// Parses NAME:TYPE:COUNT:INIT; Where names the option for errors.
ConstSpec parseConst(const std::string &Text, const std::string &Where) {
  // NAME ends at the first ':' followed by an element type and ':', so that
  // a C++ name (ns::coeffs) may hold colons.
  size_t Colon = Text.find(':');
  while (Colon != std::string::npos) {
    size_t Next = Text.find(':', Colon + 1);
    if (Colon > 0 && Next != std::string::npos &&
        parseElemType(
            std::string_view(Text).substr(Colon + 1, Next - Colon - 1)))
      break;
    Colon = Next;
  }
  if (Colon == std::string::npos)
    fatal(Where + " '" + Text + "': expected NAME:TYPE:COUNT:INIT, TYPE " +
          "one of u8 s8 u16 s16 u32 s32 u64 s64 f16 bf16 f32 f64");
  ConstSpec C;
  C.Name = Text.substr(0, Colon);
  C.Text = Text;
  Expected<ArgSpec> A = parseArgSpec("buf:" + Text.substr(Colon + 1));
  if (!A) {
    // "argument 'buf:...': what" names a text the user did not write.
    std::string What = A.status().message();
    if (size_t Pos = What.find("': "); Pos != std::string::npos)
      What = What.substr(Pos + 3);
    fatal(Where + " '" + Text + "': " + What);
  }
  if (A->Initial == ArgSpec::Init::Out)
    fatal(Where + " '" + Text +
          "': 'out' marks a kernel output, and a variable filled before the "
          "launch is an input: use zero, fill:V, random:SEED or file:PATH");
  C.Value = std::move(*A);
  return C;
}

Options parseCommandLine(int Argc, char **Argv) {
  Options O;
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  if (Args.empty()) {
    std::fputs(HelpText, stderr);
    std::exit(2);
  }
  O.Specs.emplace_back();
  auto Value = [&](size_t &I) -> std::string {
    if (I + 1 >= Args.size())
      fatal(Args[I] + " needs a value");
    return Args[++I];
  };
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    KernelSpec &K = O.Specs.back();
    if (A == "-h" || A == "--help") {
      std::fputs(HelpText, stdout);
      std::exit(0);
    } else if (A == "+") {
      if (K.ModulePath.empty() && K.ManifestPath.empty())
        fatal("'+' must follow a kernel spec (a module and its options)");
      O.Specs.emplace_back();
    } else if (A == "--kernel") {
      K.KernelName = Value(I);
    } else if (A == "--manifest") {
      K.ManifestPath = Value(I);
    } else if (A == "--grid") {
      K.Grid = take(parseDim3(Value(I)));
    } else if (A == "--block") {
      K.Block = take(parseDim3(Value(I)));
    } else if (A == "--smem") {
      K.Smem = parseUnsigned(Value(I), "--smem");
    } else if (A == "--arg") {
      K.Args.push_back(take(parseArgSpec(Value(I))));
    } else if (A == "--const") {
      K.Consts.push_back(parseConst(Value(I), "--const"));
    } else if (A == "--out") {
      addOut(K, Value(I));
    } else if (A == "--trace") {
      K.TraceDir = Value(I);
      if (K.TraceDir.empty())
        fatal("--trace needs a directory");
    } else if (A == "--label") {
      K.Label = Value(I);
    } else if (A == "--warmup") {
      O.Warmup = unsigned(parseUnsigned(Value(I), "--warmup"));
    } else if (A == "--repeat") {
      O.Repeat = unsigned(parseUnsigned(Value(I), "--repeat"));
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
      O.Device = int(parseUnsigned(Value(I), "--device"));
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
  if (O.Specs.back().ModulePath.empty() &&
      O.Specs.back().ManifestPath.empty()) {
    if (O.Specs.size() > 1)
      fatal("'+' must be followed by a module");
    O.Specs.pop_back();
  }
  if (!O.SpecFile.empty() && !O.Specs.empty())
    fatal("--spec and modules on the command line cannot be combined");
  if (O.SpecFile.empty() && O.Specs.empty())
    fatal("no module given (see --help)");
  return O;
}

/// Reads a run spec; errors name the JSON path.
void readSpecFile(Options &O) {
  std::ifstream In(O.SpecFile);
  if (!In)
    fatal(O.SpecFile + ": cannot open the run spec");
  json Root;
  try {
    Root = json::parse(In);
  } catch (const json::exception &E) {
    fatal(O.SpecFile + ": invalid JSON: " + E.what());
  }
  auto Fail = [&](const std::string &Path, const std::string &What) {
    fatal(O.SpecFile + ": " + Path + ": " + What);
  };
  auto UInt = [&](const json &V, const std::string &Path) -> uint64_t {
    if (!V.is_number_unsigned())
      Fail(Path, "expected an unsigned integer");
    return V.get<uint64_t>();
  };
  auto Str = [&](const json &V, const std::string &Path) -> std::string {
    if (!V.is_string())
      Fail(Path, "expected a string");
    return V.get<std::string>();
  };
  auto Dim = [&](const json &V, const std::string &Path) -> Dim3 {
    if (!V.is_array() || V.empty() || V.size() > 3)
      Fail(Path, "expected an array of 1 to 3 positive integers");
    uint64_t D[3] = {1, 1, 1};
    for (size_t I = 0; I < V.size(); ++I)
      if (!(D[I] = UInt(V[I], Path + "[" + std::to_string(I) + "]")))
        Fail(Path, "dimensions must be positive");
    return {D[0], D[1], D[2]};
  };
  auto Keys = [&](const json &V, const std::string &Path,
                  std::initializer_list<const char *> Allowed) {
    if (!V.is_object())
      Fail(Path, "expected an object");
    for (const auto &Item : V.items())
      if (std::none_of(Allowed.begin(), Allowed.end(),
                       [&](const char *K) { return Item.key() == K; }))
        Fail(Path + "." + Item.key(), "unknown key");
  };

  Keys(Root, "(top level)", {"warmup", "repeat", "kernels", "groups"});
  if (Root.contains("warmup"))
    O.Warmup = unsigned(UInt(Root["warmup"], "warmup"));
  if (Root.contains("repeat"))
    O.Repeat = unsigned(UInt(Root["repeat"], "repeat"));
  if (!Root.contains("kernels") || !Root["kernels"].is_array())
    Fail("kernels", "expected an array of kernel specs");
  std::map<std::string, size_t> ByLabel;
  const json &Kernels = Root["kernels"];
  for (size_t I = 0; I < Kernels.size(); ++I) {
    std::string P = "kernels[" + std::to_string(I) + "]";
    const json &KJ = Kernels[I];
    Keys(KJ, P,
         {"label", "module", "kernel", "manifest", "grid", "block", "smem",
          "args", "consts", "out", "trace", "time_alone"});
    KernelSpec K;
    if (!KJ.contains("module"))
      Fail(P + ".module", "missing");
    K.ModulePath = Str(KJ["module"], P + ".module");
    if (KJ.contains("label"))
      K.Label = Str(KJ["label"], P + ".label");
    if (KJ.contains("kernel"))
      K.KernelName = Str(KJ["kernel"], P + ".kernel");
    if (KJ.contains("manifest"))
      K.ManifestPath = Str(KJ["manifest"], P + ".manifest");
    if (KJ.contains("grid"))
      K.Grid = Dim(KJ["grid"], P + ".grid");
    if (KJ.contains("block"))
      K.Block = Dim(KJ["block"], P + ".block");
    if (KJ.contains("smem"))
      K.Smem = UInt(KJ["smem"], P + ".smem");
    if (KJ.contains("args")) {
      if (!KJ["args"].is_array())
        Fail(P + ".args", "expected an array of argument specs");
      for (size_t J = 0; J < KJ["args"].size(); ++J) {
        std::string AP = P + ".args[" + std::to_string(J) + "]";
        Expected<ArgSpec> A = parseArgSpec(Str(KJ["args"][J], AP));
        if (!A)
          Fail(AP, A.status().message());
        K.Args.push_back(std::move(*A));
      }
    }
    if (KJ.contains("consts")) {
      if (!KJ["consts"].is_array())
        Fail(P + ".consts", "expected an array of NAME:TYPE:COUNT:INIT");
      for (size_t J = 0; J < KJ["consts"].size(); ++J) {
        std::string CP = P + ".consts[" + std::to_string(J) + "]";
        K.Consts.push_back(
            parseConst(Str(KJ["consts"][J], CP), O.SpecFile + ": " + CP));
      }
    }
    if (KJ.contains("trace")) {
      K.TraceDir = Str(KJ["trace"], P + ".trace");
      if (K.TraceDir.empty())
        Fail(P + ".trace", "expected a directory, got \"\"");
    }
    if (KJ.contains("time_alone")) {
      if (!KJ["time_alone"].is_boolean())
        Fail(P + ".time_alone", "expected true or false");
      K.TimeAlone = KJ["time_alone"].get<bool>();
    }
    if (KJ.contains("out")) {
      if (!KJ["out"].is_object())
        Fail(P + ".out", "expected an object {\"INDEX\": \"PATH\"}");
      for (const auto &Item : KJ["out"].items())
        addOut(K,
               Item.key() + ":" + Str(Item.value(), P + ".out." + Item.key()));
    }
    std::string Label = K.Label.empty() ? K.KernelName : K.Label;
    if (!Label.empty() && !ByLabel.emplace(Label, I).second)
      Fail(P + ".label", "duplicate label '" + Label + "'");
    O.Specs.push_back(std::move(K));
  }
  if (Root.contains("groups")) {
    if (!Root["groups"].is_array())
      Fail("groups", "expected an array");
    for (size_t I = 0; I < Root["groups"].size(); ++I) {
      std::string P = "groups[" + std::to_string(I) + "]";
      const json &GJ = Root["groups"][I];
      Keys(GJ, P, {"name", "kernels", "modes", "also"});
      Group G;
      auto Label = [&](const json &V, const std::string &Path) {
        std::string L = Str(V, Path);
        auto It = ByLabel.find(L);
        if (It == ByLabel.end())
          Fail(Path, "no kernel labelled '" + L + "'");
        return It->second;
      };
      if (!GJ.contains("kernels") || !GJ["kernels"].is_array() ||
          GJ["kernels"].empty())
        Fail(P + ".kernels", "expected a non-empty array of kernel labels");
      for (size_t J = 0; J < GJ["kernels"].size(); ++J)
        G.Members.push_back(
            Label(GJ["kernels"][J], P + ".kernels[" + std::to_string(J) + "]"));
      if (GJ.contains("also")) {
        if (!GJ["also"].is_array())
          Fail(P + ".also", "expected an array of kernel labels");
        for (size_t J = 0; J < GJ["also"].size(); ++J) {
          std::string AP = P + ".also[" + std::to_string(J) + "]";
          size_t K = Label(GJ["also"][J], AP);
          if (std::find(G.Also.begin(), G.Also.end(), K) != G.Also.end())
            Fail(AP, "'" + GJ["also"][J].get<std::string>() +
                         "' is already listed");
          G.Also.push_back(K);
        }
      }
      G.Name = GJ.contains("name") ? Str(GJ["name"], P + ".name") : "";
      if (GJ.contains("modes")) {
        if (!GJ["modes"].is_array())
          Fail(P + ".modes", "expected an array");
        for (size_t J = 0; J < GJ["modes"].size(); ++J) {
          std::string M =
              Str(GJ["modes"][J], P + ".modes[" + std::to_string(J) + "]");
          if (M == "alone")
            G.Alone = true;
          else if (M == "serial")
            G.Serial = true;
          else if (M == "concurrent")
            G.Concurrent = true;
          else if (M == "graph")
            G.Graph = true;
          else
            Fail(P + ".modes[" + std::to_string(J) + "]",
                 "expected \"alone\", \"serial\", \"concurrent\" or "
                 "\"graph\"");
        }
      } else {
        G.Serial = G.Concurrent = true;
      }
      O.Groups.push_back(std::move(G));
    }
  }
}

//===----------------------------------------------------------------------===//
// Resolving kernels (no GPU needed)
//===----------------------------------------------------------------------===//

/// Loads the manifest of a spec: the given one, or one scanned from PTX.
/// Returns std::nullopt for a cubin without manifest.
std::optional<Manifest> manifestFor(KernelSpec &K) {
  if (!K.ManifestPath.empty()) {
    Manifest M = take(readManifest(K.ManifestPath));
    if (K.ModulePath.empty()) {
      K.ModulePath = M.Module.Path;
      if (!K.ModulePath.empty() && K.ModulePath[0] != '/')
        K.ModulePath = dirName(K.ManifestPath) + K.ModulePath;
    }
    return M;
  }
  if (endsWith(K.ModulePath, ".cubin") || endsWith(K.ModulePath, ".fatbin"))
    return std::nullopt;
  return take(scanPTXFile(K.ModulePath));
}

void resolve(KernelSpec &K) {
  std::optional<Manifest> M = manifestFor(K);
  if (!M) {
    if (K.KernelName.empty())
      fatal(K.ModulePath + ": a cubin without manifest needs --kernel");
    K.Kernel.Name = K.KernelName;
  } else {
    if (M->Kernels.empty())
      fatal(K.ModulePath + ": no kernel (.entry) in the module");
    const KernelInfo *KI = nullptr;
    if (!K.KernelName.empty()) {
      KI = M->findKernel(K.KernelName);
      if (!KI) {
        std::string Names;
        for (const KernelInfo &X : M->Kernels)
          Names += (Names.empty() ? "" : ", ") + X.Name;
        fatal(K.ModulePath + ": no kernel '" + K.KernelName +
              "' (it has: " + Names + ")");
      }
    } else if (M->Kernels.size() == 1) {
      KI = &M->Kernels[0];
    } else {
      std::string Names;
      for (const KernelInfo &X : M->Kernels)
        Names += (Names.empty() ? "" : ", ") + X.Name;
      fatal(K.ModulePath + ": several kernels (" + Names +
            "); choose one with --kernel");
    }
    K.Kernel = *KI;
    K.HasLayout = true;
  }
  if (K.Label.empty())
    K.Label = K.Kernel.Name;

  const LaunchInfo &L = K.Kernel.Launch;
  if (!K.Block)
    K.Block = L.Block;
  if (!K.Block)
    fatal("kernel '" + K.Label + "': its block shape is unknown (no " +
          ".reqntid" +
          (L.MaxThreads ? ", .maxntid " + toString(*L.MaxThreads) : "") +
          "); give --block");
  if (L.Block && *K.Block != *L.Block)
    fatal("kernel '" + K.Label + "': --block " + toString(*K.Block) +
          " contradicts its required block " + toString(*L.Block));
  if (L.MaxThreads && K.Block->count() > L.MaxThreads->count())
    fatal("kernel '" + K.Label + "': block " + toString(*K.Block) +
          " exceeds its .maxntid " + toString(*L.MaxThreads));
  if (K.Block->count() > 1024)
    fatal("kernel '" + K.Label + "': block " + toString(*K.Block) +
          " has more than 1024 threads");
  if (!K.Grid)
    K.Grid = L.Grid;
  if (!K.Grid)
    fatal("kernel '" + K.Label + "': give --grid");
  if (K.Smem && L.DynamicSmem && *K.Smem < *L.DynamicSmem)
    fatal("kernel '" + K.Label + "': --smem " + std::to_string(*K.Smem) +
          " is less than the " + std::to_string(*L.DynamicSmem) +
          " bytes of dynamic shared memory its manifest gives "
          "(launch.dynamic_smem); give at least that, or leave --smem out");
  if (!K.Smem)
    K.Smem = L.DynamicSmem;
  if (!K.Smem)
    fatal("kernel '" + K.Label +
          "' names an .extern .shared array of its module; give --smem "
          "with the bytes it needs");
  K.Config = {*K.Grid, *K.Block, *K.Smem};
  K.SmemOptin = L.SmemOptin && *K.Smem > 0;
}

/// The demangled name of a mangled variable (_ZN2ns5coeffE is ns::coeff),
/// or "" for a name that is not mangled.
std::string demangleVariable(const std::string &Name) {
  if (Name.rfind("_Z", 0) != 0)
    return "";
  int Status = 0;
  std::unique_ptr<char, void (*)(void *)> Out(
      abi::__cxa_demangle(Name.c_str(), nullptr, nullptr, &Status), std::free);
  return Status == 0 && Out ? std::string(Out.get()) : "";
}

/// Resolves each --const against the module's variables, which a PTX file
/// declares; a cubin's are checked by the driver when they are set.
void checkConsts(KernelSpec &K) {
  if (K.Consts.empty())
    return;
  if (endsWith(K.ModulePath, ".cubin") || endsWith(K.ModulePath, ".fatbin")) {
    for (ConstSpec &C : K.Consts)
      C.Symbol = C.Name;
    return;
  }
  std::vector<PTXVariable> Vars;
  take(scanPTXFile(K.ModulePath, &Vars));
  for (ConstSpec &C : K.Consts) {
    const PTXVariable *V = nullptr;
    for (const PTXVariable &X : Vars)
      if (X.Name == C.Name)
        V = &X;
    for (const PTXVariable &X : Vars)
      if (!V && demangleVariable(X.Name) == C.Name)
        V = &X;
    if (!V) {
      std::string List;
      for (const PTXVariable &X : Vars)
        List += (List.empty() ? "" : ", ") + X.Name + " (." + X.Space + ")";
      fatal("kernel '" + K.Label + "': --const " + C.Text + ": " +
            K.ModulePath + " declares no variable '" + C.Name + "' (" +
            (List.empty() ? std::string("it has no .const or .global "
                                        "variables")
                          : "its variables: " + List) +
            ")");
    }
    if (!V->Bytes)
      fatal("kernel '" + K.Label + "': --const " + C.Text + ": ." + V->Space +
            " " + V->Name +
            " has no size in the PTX (an .extern or unsized array)");
    if (C.Value.bufferBytes() > *V->Bytes)
      fatal("kernel '" + K.Label + "': --const " + C.Text + ": " +
            std::to_string(C.Value.bufferBytes()) + " bytes, more than the " +
            std::to_string(*V->Bytes) + " of ." + V->Space + " " + V->Name +
            "; give at most " +
            std::to_string(*V->Bytes / elemSize(C.Value.Type)) + " elements");
    C.Symbol = V->Name;
    for (const ConstSpec &D : K.Consts)
      if (&D != &C && D.Symbol == C.Symbol)
        fatal("kernel '" + K.Label + "': --const " + C.Text + ": variable " +
              C.Symbol + " is already set by --const " + D.Text);
  }
}

/// Fills the --const variables of K in a loaded instance of its module.
void setConsts(const KernelSpec &K,
               const std::vector<std::vector<uint8_t>> &Init, const Module &M) {
  for (size_t I = 0; I < K.Consts.size(); ++I)
    if (Status S =
            M.setGlobal(K.Consts[I].Symbol, Init[I].data(), Init[I].size()))
      fatal("kernel '" + K.Label + "': --const " + K.Consts[I].Text + ": " +
            S.message());
}

/// The probe map whose buffer parameter Index receives, if any.
const ProbeBuffer *probeOfParam(const KernelInfo &K, size_t Index) {
  for (const ProbeBuffer &P : K.Probes)
    if (P.Param == Index)
      return &P;
  return nullptr;
}

/// The probe map of dynamic capacity whose capacity parameter Index
/// receives, if any.
const ProbeBuffer *capacityOfParam(const KernelInfo &K, size_t Index) {
  for (const ProbeBuffer &P : K.Probes)
    if (P.DynamicCapacity && P.CapacityParam == Index)
      return &P;
  return nullptr;
}

bool hasDynamicProbes(const KernelInfo &K) {
  return std::any_of(K.Probes.begin(), K.Probes.end(),
                     [](const ProbeBuffer &P) { return P.DynamicCapacity; });
}

/// Checks the arguments against the parameters that take one (all but the
/// probe buffers and the probe capacities) and maps them onto those.
void checkArgs(KernelSpec &K) {
  const std::vector<ParamInfo> &Params = K.Kernel.Params;
  K.ArgParams.clear();
  size_t NumCapacities = 0;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (capacityOfParam(K.Kernel, I))
      ++NumCapacities;
    else if (!probeOfParam(K.Kernel, I))
      K.ArgParams.push_back(I);
  }
  if (K.Args.size() != K.ArgParams.size()) {
    std::string List;
    for (size_t I = 0; I < Params.size(); ++I) {
      List += "\n  " + std::to_string(I) + ": " + Params[I].Name + " ." +
              Params[I].Type + " (" + std::to_string(Params[I].Size) +
              " bytes)";
      if (const ProbeBuffer *P = probeOfParam(K.Kernel, I))
        List += ": probe buffer '" + P->Name + "', allocated by gpu-run";
      else if (const ProbeBuffer *P = capacityOfParam(K.Kernel, I))
        List += ": probe capacity of '" + P->Name + "', set by gpu-run";
    }
    size_t NumProbes = Params.size() - K.ArgParams.size();
    if (NumProbes == 0)
      fatal("kernel '" + K.Label + "' has " + std::to_string(Params.size()) +
            " parameters, " + std::to_string(K.Args.size()) +
            " --arg given; its parameters:" + List);
    std::string Which;
    if (NumCapacities)
      Which = " of them probe parameters (buffers and capacities), which "
              "gpu-run sets itself (give no --arg for them)";
    else if (NumProbes == 1)
      Which = " of them a probe parameter, whose buffer gpu-run allocates "
              "itself (give no --arg for it)";
    else
      Which = " of them probe parameters, whose buffers gpu-run allocates "
              "itself (give no --arg for them)";
    fatal("kernel '" + K.Label + "' has " + std::to_string(Params.size()) +
          " parameters, " + std::to_string(NumProbes) + Which + ": expected " +
          std::to_string(K.ArgParams.size()) + " --arg, " +
          std::to_string(K.Args.size()) + " given; its parameters:" + List);
  }
  for (size_t I = 0; I < K.Args.size(); ++I)
    check(checkArgAgainstParam(K.Args[I], Params[K.ArgParams[I]], unsigned(I)));
  for (const auto &[Index, Path] : K.Outs) {
    if (Index >= K.Args.size() || !K.Args[Index].isBuffer())
      fatal("kernel '" + K.Label + "': --out " + std::to_string(Index) + ":" +
            Path + " does not name a buffer argument");
  }
}

/// Fails unless Dir is absent or an empty directory: a trace never
/// overwrites anything.
void checkTraceDir(const std::string &Dir) {
  namespace fs = std::filesystem;
  std::error_code EC;
  fs::file_status St = fs::status(Dir, EC);
  if (St.type() == fs::file_type::not_found)
    return;
  if (EC)
    fatal("--trace " + Dir + ": " + EC.message());
  if (St.type() != fs::file_type::directory)
    fatal("--trace " + Dir +
          ": exists and is not a directory (gpu-run writes "
          "a trace only into a new or empty one)");
  if (!fs::is_empty(Dir, EC) || EC)
    fatal("--trace " + Dir +
          ": the directory is not empty (gpu-run writes a "
          "trace only into a new or empty one, so that it "
          "never overwrites files)");
}

/// Checks a kernel's --trace before the GPU is touched: the kernel has
/// probe maps, each can be written as a .npy file, and the directory is new
/// or empty.
void checkTrace(KernelSpec &K) {
  if (K.TraceDir.empty())
    return;
  if (K.Kernel.Probes.empty())
    fatal("kernel '" + K.Label + "': --trace " + K.TraceDir +
          ": the kernel has no probe buffers (its manifest lists no "
          "\"probes\")");
  K.ProbeDescrs.clear();
  for (const ProbeBuffer &P : K.Kernel.Probes) {
    if (P.Name == "." || P.Name == ".." ||
        P.Name.find_first_of("/\\") != std::string::npos)
      fatal("kernel '" + K.Label + "': --trace: probe map '" + P.Name +
            "' does not make a file name");
    Expected<std::string> Descr = npyRecordDescr(P.Fields, P.RecordBytes);
    if (!Descr)
      fatal("kernel '" + K.Label + "': --trace: probe map '" + P.Name +
            "': " + Descr.status().message());
    K.ProbeDescrs.push_back(*Descr);
  }
  // MAP.counts.npy must not be another map's MAP.npy.
  for (const ProbeBuffer &P : K.Kernel.Probes)
    for (const ProbeBuffer &Q : K.Kernel.Probes)
      if (P.SlotCounts && Q.Name == P.Name + ".counts")
        fatal("kernel '" + K.Label + "': --trace: probe maps '" + P.Name +
              "' (its slot counts) and '" + Q.Name + "' would both write " +
              Q.Name + ".npy");
  checkTraceDir(K.TraceDir);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Sets every argument buffer of P to its initial contents.
Status initialiseArgs(const KernelSpec &K, Prepared &P) {
  for (size_t I = 0; I < K.Args.size(); ++I) {
    const ArgSpec &A = K.Args[I];
    if (!A.isBuffer())
      continue;
    switch (A.Initial) {
    case ArgSpec::Init::Zero:
      if (Status S = P.Buffers[I].fill(0))
        return S;
      break;
    case ArgSpec::Init::Out:
      if (Status S = P.Buffers[I].fill(0xFF))
        return S;
      break;
    default:
      if (Status S =
              P.Buffers[I].upload(P.HostInit[I]->data(), P.HostInit[I]->size()))
        return S;
      break;
    }
  }
  return Status::success();
}

/// Sets every buffer of P to its initial contents; probe buffers to zeros.
Status initialise(const KernelSpec &K, Prepared &P) {
  for (const DeviceBuffer &B : P.Probes)
    if (Status S = B.fill(0))
      return S;
  return initialiseArgs(K, P);
}

/// Packs the arguments for Params, Buffers holding the buffer arguments
/// (one per argument) and Probes the probe buffers (one per map). For the
/// kernel's own layout (Probed), argument I goes to parameter
/// K.ArgParams[I], each probe parameter gets its buffer and each capacity
/// parameter its map's capacity as now set; for another kernel's
/// (--compare), argument I goes to parameter I.
std::unique_ptr<ArgPack> packArgs(const KernelSpec &K,
                                  const std::vector<ParamInfo> &Params,
                                  const std::vector<DeviceBuffer> &Buffers,
                                  const std::vector<DeviceBuffer> &Probes,
                                  bool Probed) {
  auto Pack = std::make_unique<ArgPack>(Params);
  for (size_t I = 0; I < K.Args.size(); ++I) {
    const ArgSpec &A = K.Args[I];
    unsigned Index = unsigned(Probed ? K.ArgParams[I] : I);
    if (A.isBuffer()) {
      CUdeviceptr Ptr = Buffers[I].ptr();
      check(Pack->set(Index, &Ptr, sizeof(Ptr)));
    } else {
      check(Pack->set(Index, A.Value.data(), A.Value.size()));
    }
  }
  for (size_t I = 0; Probed && I < K.Kernel.Probes.size(); ++I) {
    const ProbeBuffer &PB = K.Kernel.Probes[I];
    CUdeviceptr Ptr = Probes[I].ptr();
    check(Pack->set(unsigned(PB.Param), &Ptr, sizeof(Ptr)));
    if (PB.DynamicCapacity) {
      uint32_t Capacity = uint32_t(PB.Capacity);
      check(Pack->set(unsigned(PB.CapacityParam), &Capacity, sizeof(Capacity)));
    }
  }
  return Pack;
}

/// Allocates a buffer or fails with What and the driver's error.
DeviceBuffer allocateFor(const Context &C, uint64_t Bytes,
                         const std::string &What) {
  Expected<DeviceBuffer> B = DeviceBuffer::allocate(C, Bytes);
  if (!B)
    fatal(What + ": " + B.status().message());
  return std::move(*B);
}

/// A*B*C, or std::nullopt when it does not fit 64 bits.
std::optional<uint64_t> product(uint64_t A, uint64_t B, uint64_t C) {
  uint64_t AB = 0, ABC = 0;
  if (__builtin_mul_overflow(A, B, &AB) || __builtin_mul_overflow(AB, C, &ABC))
    return std::nullopt;
  return ABC;
}

/// Reads the slot counts of probe buffer PB (which has them) from B.
std::vector<uint32_t> readCounts(const KernelSpec &K, const ProbeBuffer &PB,
                                 const DeviceBuffer &B) {
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::vector<uint32_t> Counts(PB.slots(Grid, Block));
  check(B.download(Counts.data(), Counts.size() * sizeof(uint32_t),
                   PB.countsOffset(Grid, Block)));
  return Counts;
}

Status syncAfter(const Context &C, const std::string &What);

/// The counting run (gpu-run --help): sizes the dynamic probe maps of K,
/// setting their Capacity to the most records any slot tried to save, from
/// one launch of a second instance of K's module on device copies of P's
/// buffer arguments, which are initialised. Returns the lines to print.
std::vector<std::string> countingRun(const Context &C, KernelSpec &K,
                                     const Prepared &P) {
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::string What = "kernel '" + K.Label + "': counting run";
  // Declared first, destroyed last: the launch's module outlives its
  // buffers' use.
  std::unique_ptr<Module> Mod = take(Module::loadFile(C, K.ModulePath));
  setConsts(K, P.ConstInit, *Mod);
  Function Fn = take(Mod->getFunction(K.Kernel.Name));
  check(prepareDynamicSmem(C, Fn, K.Config.DynamicSmem, K.SmemOptin));
  std::vector<DeviceBuffer> Copies(K.Args.size());
  for (size_t I = 0; I < K.Args.size(); ++I) {
    if (!K.Args[I].isBuffer())
      continue;
    Copies[I] =
        allocateFor(C, P.Buffers[I].size(),
                    What + ": cannot copy argument " + std::to_string(I));
    check(Copies[I].copyFrom(P.Buffers[I]));
  }
  std::vector<DeviceBuffer> Probes;
  for (ProbeBuffer &PB : K.Kernel.Probes) {
    if (PB.DynamicCapacity)
      PB.Capacity = 0; // Only the counts and the counter.
    Probes.push_back(allocateFor(C, PB.totalBytes(Grid, Block),
                                 What + ": probe map '" + PB.Name + "'"));
    check(Probes.back().fill(0));
  }
  std::unique_ptr<ArgPack> Args =
      packArgs(K, K.Kernel.Params, Copies, Probes, /*Probed=*/true);
  check(launch(C, Fn, K.Config, *Args));
  check(syncAfter(C, What + " failed"));

  std::vector<std::string> Lines;
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    ProbeBuffer &PB = K.Kernel.Probes[I];
    if (!PB.DynamicCapacity)
      continue;
    std::vector<uint32_t> Counts = readCounts(K, PB, Probes[I]);
    uint32_t Most = 0;
    for (uint32_t N : Counts)
      Most = std::max(Most, N);
    PB.Capacity = Most;
    std::optional<uint64_t> Records =
        product(PB.slots(Grid, Block), Most, PB.RecordBytes);
    if (!Records || *Records > UINT64_MAX / 2)
      fatal("kernel '" + K.Label + "': probe map '" + PB.Name + "' needs " +
            std::to_string(Most) + " records per slot for " +
            std::to_string(PB.slots(Grid, Block)) + " slots of " +
            std::to_string(PB.RecordBytes) +
            " bytes: more bytes than 64 bits count");
    Lines.push_back("  probe " + PB.Name + ": counting run: at most " +
                    std::to_string(Most) + " records per slot, buffer " +
                    std::to_string(PB.totalBytes(Grid, Block)) + " bytes");
  }
  return Lines;
}

/// Allocates the probe buffers of P, the dynamic maps' with the capacity
/// the counting run chose, failing clearly when one does not fit.
void allocateProbes(const Context &C, const KernelSpec &K, Prepared &P) {
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  for (const ProbeBuffer &PB : K.Kernel.Probes) {
    uint64_t Bytes = PB.totalBytes(Grid, Block);
    if (!PB.DynamicCapacity) {
      P.Probes.push_back(take(DeviceBuffer::allocate(C, Bytes)));
      continue;
    }
    std::string Need =
        "kernel '" + K.Label + "': probe map '" + PB.Name + "' needs " +
        std::to_string(PB.Capacity) + " records per slot (" +
        std::to_string(PB.slots(Grid, Block)) + " slots of " +
        std::to_string(PB.RecordBytes) +
        "-byte records): " + std::to_string(Bytes) + " bytes of buffer";
    uint64_t Free = take(C.freeMemory());
    if (Bytes > Free)
      fatal(Need + ", more than the " + std::to_string(Free) +
            " bytes of device memory free");
    P.Probes.push_back(allocateFor(C, Bytes,
                                   Need + ", which cannot be "
                                          "allocated"));
  }
}

/// Reads the probe buffers back after the checked launch, prints a line per
/// map, writes the trace when asked, and returns the report's "probes".
ojson readProbes(const KernelSpec &K, const Prepared &P, const DeviceInfo &DI) {
  namespace fs = std::filesystem;
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::vector<std::vector<uint8_t>> Host(K.Kernel.Probes.size());
  std::vector<std::optional<uint64_t>> Overflow(K.Kernel.Probes.size());
  ojson Probes = ojson::array();
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    const ProbeBuffer &PB = K.Kernel.Probes[I];
    // The records only for a trace: they may be large.
    if (!K.TraceDir.empty()) {
      Host[I].resize(PB.bufferBytes(Grid, Block));
      check(P.Probes[I].download(Host[I].data(), Host[I].size()));
    }
    if (PB.OverflowCounter) {
      uint64_t Count = 0;
      check(P.Probes[I].download(&Count, sizeof(Count),
                                 PB.overflowOffset(Grid, Block)));
      Overflow[I] = Count;
    }
    std::string Name =
        PB.Name + (PB.Probe.empty() ? "" : " (" + PB.Probe + ")");
    std::string Counter = Overflow[I]
                              ? "overflow " + std::to_string(*Overflow[I])
                              : std::string("no counter");
    std::printf("  probe %s: %llu slots x %llu%s, %s\n", Name.c_str(),
                (unsigned long long)PB.slots(Grid, Block),
                (unsigned long long)PB.Capacity,
                PB.DynamicCapacity ? " (dynamic)" : "", Counter.c_str());
    Probes.push_back(
        {{"name", PB.Name},
         {"probe", PB.Probe.empty() ? ojson() : ojson(PB.Probe)},
         {"capacity", PB.Capacity},
         {"dynamic", PB.DynamicCapacity},
         {"overflow", Overflow[I] ? ojson(*Overflow[I]) : ojson()}});
  }
  if (K.TraceDir.empty())
    return Probes;

  // Checked before the launch; again in case it appeared since.
  checkTraceDir(K.TraceDir);
  fs::path Dir(K.TraceDir);
  std::error_code EC;
  fs::create_directories(Dir, EC);
  if (EC)
    fatal("--trace " + K.TraceDir +
          ": cannot create the directory: " + EC.message());
  fs::copy_file(K.ManifestPath, Dir / "manifest.json", EC);
  if (EC)
    fatal("--trace " + K.TraceDir + ": cannot copy the manifest " +
          K.ManifestPath + ": " + EC.message());
  ojson Maps = ojson::array();
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    const ProbeBuffer &PB = K.Kernel.Probes[I];
    std::vector<uint64_t> Shape = {Grid.count(), PB.unitsPerBlock(Block),
                                   PB.Capacity};
    std::string File = PB.Name + ".npy";
    check(writeNpy((Dir / File).string(), K.ProbeDescrs[I], PB.RecordBytes,
                   Shape, Host[I].data(), PB.bufferBytes(Grid, Block)));
    ojson CountsFile;
    if (PB.SlotCounts) {
      std::vector<uint32_t> Counts = readCounts(K, PB, P.Probes[I]);
      CountsFile = PB.Name + ".counts.npy";
      check(writeNpy((Dir / CountsFile.get<std::string>()).string(), "'<u4'",
                     sizeof(uint32_t), {Shape[0], Shape[1]}, Counts.data(),
                     Counts.size() * sizeof(uint32_t)));
    }
    Maps.push_back({{"name", PB.Name},
                    {"probe", PB.Probe.empty() ? ojson() : ojson(PB.Probe)},
                    {"level", toString(PB.Level)},
                    {"capacity", PB.Capacity},
                    {"dynamic", PB.DynamicCapacity},
                    {"record_bytes", PB.RecordBytes},
                    {"shape", Shape},
                    {"file", File},
                    {"counts", CountsFile},
                    {"overflow", Overflow[I] ? ojson(*Overflow[I]) : ojson()}});
  }
  ojson Trace;
  Trace["kernel"] = K.Kernel.Name;
  Trace["module"] = K.ModulePath;
  Trace["grid"] = ojson::array({Grid.X, Grid.Y, Grid.Z});
  Trace["block"] = ojson::array({Block.X, Block.Y, Block.Z});
  Trace["device"] = {
      {"name", DI.Name},
      {"multiprocessors", DI.Multiprocessors},
      {"compute_capability", std::to_string(DI.ComputeMajor) + "." +
                                 std::to_string(DI.ComputeMinor)}};
  Trace["maps"] = Maps;
  std::string TracePath = (Dir / "trace.json").string();
  std::ofstream Out(TracePath);
  if (!Out || !(Out << Trace.dump(2) << "\n"))
    fatal("cannot write " + TracePath);
  return Probes;
}

Status syncAfter(const Context &C, const std::string &What) {
  if (Status S = C.synchronize())
    return Status::error(What + ": " + S.message());
  return Status::success();
}

std::string formatStats(const Stats &S) {
  char Buf[200];
  std::snprintf(Buf, sizeof(Buf),
                "median %.4f ms (min %.4f, max %.4f, spread %.1f%%)", S.Median,
                S.Min, S.Max, 100 * S.spread());
  return Buf;
}

ojson statsJson(const Stats &S) {
  ojson J;
  J["median_ms"] = S.Median;
  J["min_ms"] = S.Min;
  J["max_ms"] = S.Max;
  J["mean_ms"] = S.Mean;
  J["spread"] = S.spread();
  J["samples_ms"] = S.Samples;
  return J;
}

ojson dimJson(const Dim3 &D) { return ojson::array({D.X, D.Y, D.Z}); }

} // namespace

int main(int Argc, char **Argv) {
  Options O = parseCommandLine(Argc, Argv);
  if (!O.SpecFile.empty())
    readSpecFile(O);
  if (O.Specs.empty())
    fatal("no kernels to run");
  if (!O.Compare.empty() && O.Specs.size() != 1)
    fatal("--compare takes exactly one kernel spec");
  if (O.Tolerance && O.Compare.empty())
    fatal("--tolerance applies to --compare");

  if (O.List || O.PrintManifest) {
    for (KernelSpec &K : O.Specs) {
      std::optional<Manifest> M = manifestFor(K);
      if (!M)
        fatal(K.ModulePath + ": --list and --print-manifest need a PTX file "
                             "or a manifest");
      if (O.PrintManifest) {
        std::cout << writeManifest(*M);
        continue;
      }
      std::cout << M->Module.Path << " (" << M->Module.Format
                << (M->Module.Target.empty() ? "" : ", " + M->Module.Target)
                << ")\n";
      for (const KernelInfo &KI : M->Kernels) {
        std::cout << "kernel " << KI.Name << ": block "
                  << (KI.Launch.Block ? toString(*KI.Launch.Block) : "runtime")
                  << (KI.Launch.MaxThreads
                          ? ", max threads " + toString(*KI.Launch.MaxThreads)
                          : "")
                  << ", dynamic smem "
                  << (KI.Launch.DynamicSmem
                          ? std::to_string(*KI.Launch.DynamicSmem)
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
          std::cout << "\n";
        }
      }
    }
    return 0;
  }

  // Everything that can be checked without a GPU is checked first.
  for (KernelSpec &K : O.Specs) {
    resolve(K);
    if (K.HasLayout)
      checkArgs(K);
    checkTrace(K);
    checkConsts(K);
  }
  // Two traces into one directory would mix their files.
  auto TraceKey = [](const std::string &Dir) {
    std::filesystem::path P = std::filesystem::absolute(Dir).lexically_normal();
    return P.has_filename() ? P : P.parent_path();
  };
  for (size_t S = 0; S < O.Specs.size(); ++S)
    for (size_t T = 0; T < S && !O.Specs[S].TraceDir.empty(); ++T)
      if (!O.Specs[T].TraceDir.empty() &&
          TraceKey(O.Specs[S].TraceDir) == TraceKey(O.Specs[T].TraceDir))
        fatal("kernels '" + O.Specs[T].Label + "' and '" + O.Specs[S].Label +
              "' both trace to " + O.Specs[S].TraceDir);
  for (Group &G : O.Groups)
    if (G.Name.empty())
      for (size_t M : G.Members)
        G.Name += (G.Name.empty() ? "" : "+") + O.Specs[M].Label;
  bool AnyMode = O.Serial || O.Concurrent || O.Graph;
  if (O.SpecFile.empty() && O.Specs.size() > 1 && AnyMode) {
    Group G;
    for (size_t I = 0; I < O.Specs.size(); ++I) {
      G.Members.push_back(I);
      G.Name += (G.Name.empty() ? "" : "+") + O.Specs[I].Label;
    }
    G.Serial = O.Serial;
    G.Concurrent = O.Concurrent;
    G.Graph = O.Graph;
    O.Groups.push_back(G);
  } else if (O.Specs.size() == 1 && AnyMode) {
    fatal("--serial, --concurrent and --graph need several kernel specs");
  }

  // Host-side initial contents (random numbers, files) before the GPU. The
  // context is declared first so that it outlives the buffers.
  std::unique_ptr<Context> Ctx;
  // A fused kernel's arguments repeat its parts' texts: fill each distinct
  // text once (a search times many candidates over gigabyte buffers).
  std::vector<Prepared> Preps(O.Specs.size());
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> Filled;
  for (size_t S = 0; S < O.Specs.size(); ++S) {
    const KernelSpec &K = O.Specs[S];
    Preps[S].HostInit.resize(K.Args.size());
    for (size_t I = 0; I < K.Args.size(); ++I) {
      const ArgSpec &A = K.Args[I];
      if (!A.isBuffer() || A.Initial == ArgSpec::Init::Zero ||
          A.Initial == ArgSpec::Init::Out)
        continue;
      auto &Shared = Filled[A.Text];
      if (!Shared) {
        auto Data = std::make_shared<std::vector<uint8_t>>();
        check(initHostBuffer(A, *Data));
        Shared = std::move(Data);
      }
      Preps[S].HostInit[I] = Shared;
    }
    for (const ConstSpec &C : K.Consts) {
      Preps[S].ConstInit.emplace_back();
      if (Status St = initHostBuffer(C.Value, Preps[S].ConstInit.back()))
        fatal("kernel '" + K.Label + "': --const " + C.Text + ": " +
              St.message());
    }
  }

  Ctx = take(Context::create(O.Device));
  const DeviceInfo &DI = Ctx->info();
  std::printf("device %d: %s (sm_%d%d, %d SMs, %.1f GiB, driver %d.%d)\n",
              DI.Ordinal, DI.Name.c_str(), DI.ComputeMajor, DI.ComputeMinor,
              DI.Multiprocessors, double(DI.TotalMemory) / (1ull << 30),
              DI.DriverVersion / 1000, DI.DriverVersion % 1000 / 10);

  std::map<std::string, std::unique_ptr<Module>> Modules;
  std::vector<std::unique_ptr<Function>> Functions;
  // Kernel spec Spec's function Name of module Path. A spec that fills
  // module variables (--const) has its own instance of the module.
  auto getFunction = [&](const std::string &Path, const std::string &Name,
                         size_t Spec) -> const Function * {
    const KernelSpec &K = O.Specs[Spec];
    std::string Key =
        K.Consts.empty() ? Path : Path + "\n" + std::to_string(Spec);
    auto It = Modules.find(Key);
    if (It == Modules.end()) {
      It = Modules.emplace(Key, take(Module::loadFile(*Ctx, Path))).first;
      setConsts(K, Preps[Spec].ConstInit, *It->second);
    }
    Functions.push_back(
        std::make_unique<Function>(take(It->second->getFunction(Name))));
    return Functions.back().get();
  };

  ojson Report;
  Report["device"] = {
      {"name", DI.Name},
      {"compute_capability",
       std::to_string(DI.ComputeMajor) + "." + std::to_string(DI.ComputeMinor)},
      {"multiprocessors", DI.Multiprocessors},
      {"l2_bytes", DI.L2Bytes},
      {"total_memory", DI.TotalMemory},
      {"driver_version", DI.DriverVersion}};
  Report["warmup"] = O.Warmup;
  Report["repeat"] = O.Repeat;
  Report["kernels"] = ojson::array();

  // Load, allocate, initialise and run every kernel once.
  for (size_t S = 0; S < O.Specs.size(); ++S) {
    KernelSpec &K = O.Specs[S];
    Prepared &P = Preps[S];
    P.Fn = getFunction(K.ModulePath, K.Kernel.Name, S);
    if (!K.HasLayout) {
      K.Kernel.Params = take(queryParamLayout(*Ctx, *P.Fn));
      K.HasLayout = true;
      checkArgs(K);
    }
    check(prepareDynamicSmem(*Ctx, *P.Fn, K.Config.DynamicSmem, K.SmemOptin));
    P.Buffers.resize(K.Args.size());
    for (size_t I = 0; I < K.Args.size(); ++I)
      if (K.Args[I].isBuffer())
        P.Buffers[I] =
            take(DeviceBuffer::allocate(*Ctx, K.Args[I].bufferBytes()));
    check(initialiseArgs(K, P));
    // Dynamic probe maps are sized by a counting run on copies of the
    // initialised arguments, before their buffers exist.
    std::vector<std::string> Counted;
    if (hasDynamicProbes(K.Kernel))
      Counted = countingRun(*Ctx, K, P);
    allocateProbes(*Ctx, K, P);
    for (const DeviceBuffer &B : P.Probes)
      check(B.fill(0));
    P.Args = packArgs(K, K.Kernel.Params, P.Buffers, P.Probes, /*Probed=*/true);
    check(launch(*Ctx, *P.Fn, K.Config, *P.Args));
    check(syncAfter(*Ctx, "kernel '" + K.Label + "' failed"));
    std::printf("kernel %s (%s): grid %s, block %s, dynamic smem %llu; %d "
                "registers, %d B static smem, %d B local: ran\n",
                K.Label.c_str(), K.ModulePath.c_str(),
                toString(K.Config.Grid).c_str(),
                toString(K.Config.Block).c_str(),
                (unsigned long long)K.Config.DynamicSmem, P.Fn->Registers,
                P.Fn->StaticSmem, P.Fn->LocalBytes);
    for (const std::string &Line : Counted)
      std::printf("%s\n", Line.c_str());
    ojson Probes;
    if (!K.Kernel.Probes.empty())
      Probes = readProbes(K, P, DI);
    for (const auto &[Index, Path] : K.Outs) {
      std::vector<uint8_t> Host(P.Buffers[Index].size());
      check(P.Buffers[Index].download(Host.data(), Host.size()));
      std::ofstream Out(Path, std::ios::binary);
      if (!Out || !Out.write(reinterpret_cast<const char *>(Host.data()),
                             std::streamsize(Host.size())))
        fatal("cannot write " + Path);
      std::printf("  wrote argument %u (%zu bytes) to %s\n", Index, Host.size(),
                  Path.c_str());
    }
    if (!K.TraceDir.empty())
      std::printf("  wrote trace to %s\n", K.TraceDir.c_str());
    ojson KJ;
    KJ["label"] = K.Label;
    KJ["kernel"] = K.Kernel.Name;
    KJ["module"] = K.ModulePath;
    KJ["grid"] = dimJson(K.Config.Grid);
    KJ["block"] = dimJson(K.Config.Block);
    KJ["dynamic_smem"] = K.Config.DynamicSmem;
    KJ["registers"] = P.Fn->Registers;
    KJ["static_smem"] = P.Fn->StaticSmem;
    KJ["local_bytes"] = P.Fn->LocalBytes;
    if (!K.Kernel.Probes.empty())
      KJ["probes"] = Probes;
    if (!K.TraceDir.empty())
      KJ["trace"] = K.TraceDir;
    Report["kernels"].push_back(KJ);
  }

  int ExitCode = 0;
  if (!O.Compare.empty()) {
    KernelSpec &K = O.Specs[0];
    Prepared &P = Preps[0];
    std::string OtherPath = O.Compare, OtherKernel = K.Kernel.Name;
    if (size_t Colon = O.Compare.rfind(':');
        Colon != std::string::npos &&
        O.Compare.find('/', Colon) == std::string::npos) {
      OtherPath = O.Compare.substr(0, Colon);
      OtherKernel = O.Compare.substr(Colon + 1);
    }
    // The other kernel's layout: from its PTX headers, else the driver.
    std::vector<ParamInfo> OtherParams;
    const Function *OtherFn = getFunction(OtherPath, OtherKernel, 0);
    if (endsWith(OtherPath, ".cubin") || endsWith(OtherPath, ".fatbin")) {
      OtherParams = take(queryParamLayout(*Ctx, *OtherFn));
    } else {
      Manifest OM = take(scanPTXFile(OtherPath));
      const KernelInfo *OK = OM.findKernel(OtherKernel);
      if (!OK)
        fatal(OtherPath + ": no kernel '" + OtherKernel + "'");
      OtherParams = OK->Params;
    }
    // The other kernel takes the same arguments; this one's probe buffers
    // and capacities are not among them.
    if (OtherParams.size() != K.Args.size())
      fatal(OtherPath + ": kernel '" + OtherKernel + "' has " +
            std::to_string(OtherParams.size()) + " parameters, '" + K.Label +
            "' has " + std::to_string(K.Args.size()) +
            (K.Kernel.Probes.empty()      ? ""
             : hasDynamicProbes(K.Kernel) ? " besides its probe buffers and "
                                            "capacities"
                                          : " besides its probe buffers"));
    for (size_t I = 0; I < OtherParams.size(); ++I)
      check(checkArgAgainstParam(K.Args[I], OtherParams[I], unsigned(I)));
    check(prepareDynamicSmem(*Ctx, *OtherFn, K.Config.DynamicSmem));

    // Outputs of the checked launch of the first module...
    std::vector<std::vector<uint8_t>> First(K.Args.size());
    for (size_t I = 0; I < K.Args.size(); ++I)
      if (K.Args[I].isBuffer()) {
        First[I].resize(P.Buffers[I].size());
        check(P.Buffers[I].download(First[I].data(), First[I].size()));
      }
    // ...against the second on freshly initialised buffers.
    std::unique_ptr<ArgPack> OtherArgs =
        packArgs(K, OtherParams, P.Buffers, P.Probes, /*Probed=*/false);
    check(initialise(K, P));
    check(launch(*Ctx, *OtherFn, K.Config, *OtherArgs));
    check(syncAfter(*Ctx, "kernel '" + OtherKernel + "' of " + OtherPath +
                              " failed"));
    bool AllIdentical = true, AllWithin = true;
    ojson CJ;
    CJ["module"] = OtherPath;
    CJ["kernel"] = OtherKernel;
    CJ["buffers"] = ojson::array();
    std::printf("compare %s:%s against %s:%s\n", K.ModulePath.c_str(),
                K.Kernel.Name.c_str(), OtherPath.c_str(), OtherKernel.c_str());
    for (size_t I = 0; I < K.Args.size(); ++I) {
      if (!K.Args[I].isBuffer())
        continue;
      std::vector<uint8_t> Second(P.Buffers[I].size());
      check(P.Buffers[I].download(Second.data(), Second.size()));
      CompareResult R = compareBuffers(K.Args[I].Type, Second.data(),
                                       First[I].data(), Second.size());
      bool Within =
          R.NaNMismatches == 0 && (!O.Tolerance || R.RelNorm <= *O.Tolerance);
      AllIdentical &= R.bitIdentical();
      AllWithin &= Within;
      std::printf("  arg %zu (%s): %s; %llu of %llu elements differ, max abs "
                  "%.6g, max rel %.6g, rel L2 %.6g%s\n",
                  I, toString(K.Args[I].Type),
                  R.bitIdentical() ? "bit-identical" : "DIFFERENT",
                  (unsigned long long)R.Mismatches,
                  (unsigned long long)R.Elements, R.MaxAbs, R.MaxRel, R.RelNorm,
                  R.NaNMismatches ? " (NaN on one side only)" : "");
      CJ["buffers"].push_back({{"arg", I},
                               {"type", toString(K.Args[I].Type)},
                               {"elements", R.Elements},
                               {"mismatches", R.Mismatches},
                               {"first_mismatch", R.FirstMismatch},
                               {"max_abs", R.MaxAbs},
                               {"max_rel", R.MaxRel},
                               {"rel_norm", R.RelNorm},
                               {"nan_mismatches", R.NaNMismatches},
                               {"bit_identical", R.bitIdentical()}});
    }
    bool Pass = AllIdentical || (O.Tolerance && AllWithin);
    CJ["bit_identical"] = AllIdentical;
    CJ["pass"] = Pass;
    Report["compare"] = CJ;
    std::printf("compare: %s\n", AllIdentical ? "all buffers bit-identical"
                                 : Pass       ? "within tolerance"
                                              : "FAILED");
    if (!Pass)
      ExitCode = 1;
    // Leave the buffers as the first module's checked launch left them.
    check(initialise(K, P));
  }

  if (O.Repeat > 0) {
    size_t NumStreams = 1;
    for (const Group &G : O.Groups)
      NumStreams = std::max(NumStreams, G.Members.size());
    std::vector<std::unique_ptr<Stream>> Owned;
    std::vector<const Stream *> Streams;
    for (size_t I = 0; I < NumStreams; ++I) {
      Owned.push_back(take(Stream::create(*Ctx)));
      Streams.push_back(Owned.back().get());
    }
    auto Item = [&](size_t S) {
      return LaunchItem{Preps[S].Fn, O.Specs[S].Config, Preps[S].Args.get()};
    };
    auto TimeAlone = [&](size_t S) {
      Stats St = take(timeGroup(*Ctx, {Item(S)}, GroupMode::Serial, Streams,
                                O.Warmup, O.Repeat));
      check(syncAfter(*Ctx, "timing kernel '" + O.Specs[S].Label + "'"));
      return St;
    };
    // The kernel alone with fewer of its blocks per SM: padding its dynamic
    // shared memory so that only K blocks fit, as when a fused kernel's
    // other part holds the rest of the SM. The fusion planner interpolates
    // these times.
    auto sweepOccupancy = [&](const Context &C, size_t S) {
      const KernelSpec &K = O.Specs[S];
      const Function &Fn = *Preps[S].Fn;
      const DeviceInfo &DI = C.info();
      int Threads = int(K.Config.Block.X * K.Config.Block.Y * K.Config.Block.Z);
      int Natural =
          take(activeBlocksPerSM(C, Fn, Threads, K.Config.DynamicSmem));
      ojson J;
      J["blocks_per_sm"] = Natural;
      J["sweep"] = ojson::array();
      if (DI.SharedPerMultiprocessor <= 0) {
        std::printf("occupancy %s: the driver does not report shared memory "
                    "per SM; no sweep\n",
                    K.Label.c_str());
        return J;
      }
      int Last = Natural;
      for (int Want : {16, 12, 8, 6, 4, 3, 2, 1}) {
        if (Want >= Natural)
          continue;
        int64_t PerBlock = DI.SharedPerMultiprocessor / Want;
        // The allocation granularity: round down so that Want blocks fit.
        int64_t Pad =
            (PerBlock - DI.ReservedSharedPerBlock - Fn.StaticSmem) / 128 * 128;
        if (Pad < int64_t(K.Config.DynamicSmem) ||
            Pad + Fn.StaticSmem > DI.MaxSharedPerBlockOptin)
          continue;
        check(prepareDynamicSmem(C, Fn, uint64_t(Pad), K.SmemOptin));
        int Got = take(activeBlocksPerSM(C, Fn, Threads, uint64_t(Pad)));
        if (Got >= Last || Got < 1)
          continue;
        Last = Got;
        LaunchItem It = Item(S);
        It.Config.DynamicSmem = uint64_t(Pad);
        Stats St = take(
            timeGroup(C, {It}, GroupMode::Serial, Streams, O.Warmup, O.Repeat));
        check(syncAfter(C, "timing kernel '" + K.Label + "' at " +
                               std::to_string(Got) + " blocks per SM"));
        std::printf("time %s at %d of %d blocks per SM: %s\n", K.Label.c_str(),
                    Got, Natural, formatStats(St).c_str());
        J["sweep"].push_back({{"blocks_per_sm", Got},
                              {"dynamic_smem", Pad},
                              {"time", statsJson(St)}});
      }
      return J;
    };
    for (size_t S = 0; S < O.Specs.size(); ++S) {
      if (!O.Specs[S].TimeAlone)
        continue;
      Stats St = TimeAlone(S);
      std::printf("time %s: %s, %u runs after %u warm-up\n",
                  O.Specs[S].Label.c_str(), formatStats(St).c_str(), O.Repeat,
                  O.Warmup);
      Report["kernels"][S]["time"] = statsJson(St);
      if (O.OccupancySweep)
        Report["kernels"][S]["occupancy"] = sweepOccupancy(*Ctx, S);
    }
    Report["groups"] = ojson::array();
    for (const Group &G : O.Groups) {
      ojson GJ;
      GJ["name"] = G.Name;
      GJ["kernels"] = ojson::array();
      std::vector<LaunchItem> Items;
      for (size_t M : G.Members) {
        GJ["kernels"].push_back(O.Specs[M].Label);
        Items.push_back(Item(M));
      }
      // All modes of a group in interleaved rounds, so that they compare.
      std::vector<TimedEntry> Entries;
      std::vector<std::string> Names;
      if (G.Alone)
        for (size_t M : G.Members) {
          Entries.push_back({{Item(M)}, GroupMode::Serial});
          Names.push_back("alone " + O.Specs[M].Label);
        }
      if (G.Serial) {
        Entries.push_back({Items, GroupMode::Serial});
        Names.push_back("serial");
      }
      if (G.Concurrent) {
        Entries.push_back({Items, GroupMode::Concurrent});
        Names.push_back("concurrent");
      }
      if (G.Graph) {
        Entries.push_back({Items, GroupMode::Graph});
        Names.push_back("graph");
      }
      for (size_t M : G.Also) {
        Entries.push_back({{Item(M)}, GroupMode::Serial});
        Names.push_back("also " + O.Specs[M].Label);
      }
      if (Entries.empty())
        continue;
      std::vector<Stats> All =
          take(timeInterleaved(*Ctx, Entries, Streams, O.Warmup, O.Repeat));
      check(syncAfter(*Ctx, "timing group '" + G.Name + "'"));
      if (G.Alone)
        GJ["alone"] = ojson::object();
      for (size_t E = 0; E < Entries.size(); ++E) {
        std::printf("time %s / %s: %s\n", G.Name.c_str(), Names[E].c_str(),
                    formatStats(All[E]).c_str());
        if (Names[E].rfind("alone ", 0) == 0)
          GJ["alone"][Names[E].substr(6)] = statsJson(All[E]);
        else if (Names[E].rfind("also ", 0) == 0)
          GJ["also"][Names[E].substr(5)] = statsJson(All[E]);
        else
          GJ[Names[E]] = statsJson(All[E]);
      }
      Report["groups"].push_back(GJ);
    }
  }

  if (!O.JsonOut.empty()) {
    std::ofstream Out(O.JsonOut);
    if (!Out || !(Out << Report.dump(2) << "\n"))
      fatal("cannot write " + O.JsonOut);
  }
  return ExitCode;
}
