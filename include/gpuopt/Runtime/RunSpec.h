//===- RunSpec.h - What to run, check and time ------------------*- C++ -*-===//
//
// A run spec names kernels (module, kernel, launch shape, arguments, module
// variables, outputs, trace) and groups of them to time together. gpu-run
// builds one from its command line or reads one from a JSON file (--spec);
// Python and other launchers build the structs directly. Resolving a spec
// checks it against the kernels' manifests before any GPU is touched.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_RUNSPEC_H
#define GPUOPT_RUNTIME_RUNSPEC_H

#include "gpuopt/Runtime/ArgSpec.h"
#include "gpuopt/Runtime/Device.h"
#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/Status.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuopt::runtime {

/// A module variable and its contents (gpu-run --const NAME:TYPE:COUNT:INIT).
struct ConstSpec {
  /// As given, and the PTX symbol it names once resolved.
  std::string Name, Symbol;
  /// A buffer spec (buf:TYPE:COUNT:INIT) for the contents.
  ArgSpec Value;
  /// The option's text, for messages.
  std::string Text;
};

/// One kernel to run: what the user gave, then what resolveKernelSpec and
/// the checks derive from it and the kernel's manifest.
struct KernelSpec {
  /// The name in reports; resolving defaults it to the kernel's name.
  std::string Label;
  std::string ModulePath;
  std::string KernelName;
  std::string ManifestPath;
  std::optional<Dim3> Grid, Block;
  std::optional<uint64_t> Smem;
  /// The arguments given: one per parameter, probe parameters excepted.
  std::vector<ArgSpec> Args;
  /// Module variables to fill, in order.
  std::vector<ConstSpec> Consts;
  /// Arguments (by index into Args) to write to files after the checked
  /// launch.
  std::vector<std::pair<unsigned, std::string>> Outs;
  /// Where to write the probe records, or empty.
  std::string TraceDir;
  /// Time the kernel alone too, not only in the groups that name it.
  bool TimeAlone = true;
  /// Buffer arguments (by index into Args) zeroed before every timed and
  /// warm-up launch, outside the timed interval: state a library resets
  /// before each launch (a tile counter).
  std::vector<unsigned> Resets;
  /// A launch-agnostic fused kernel: each part's grid and dynamic shared
  /// memory, by part (--part-grid, --part-smem); absent ones take the
  /// manifest's defaults.
  std::vector<std::optional<Dim3>> PartGrids;
  std::vector<std::optional<uint64_t>> PartSmem;

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
  /// With a trace, the NumPy descr of each probe map's records.
  std::vector<std::string> ProbeDescrs;
  /// A launch-agnostic kernel's shape parameters' values, in the order of
  /// Kernel.ShapeParams (computeFusedLaunch).
  std::vector<uint32_t> ShapeValues;
};

/// Kernels timed together, by index into RunSpec::Kernels.
struct GroupSpec {
  /// Empty: the members' labels joined by '+'.
  std::string Name;
  std::vector<size_t> Members;
  /// The modes: each member alone, back to back on one stream, on one
  /// stream each, as one CUDA graph.
  bool Alone = false, Serial = false, Concurrent = false, Graph = false;
  /// Kernels timed alone in the group's rounds ("also").
  std::vector<size_t> Also;
};

struct RunSpec {
  std::vector<KernelSpec> Kernels;
  std::vector<GroupSpec> Groups;
  /// Untimed and timed repetitions; Repeat 0 runs each kernel once only.
  unsigned Warmup = 3, Repeat = 20;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Parses an unsigned integer (decimal or 0x hex); errors read
/// "<What>: expected an unsigned integer, got '<Text>'".
Expected<uint64_t> parseUnsignedOption(const std::string &Text,
                                       const char *What);
/// Parses NAME:TYPE:COUNT:INIT (NAME may hold colons, as ns::coeffs);
/// errors read "<Where> '<Text>': <what>".
Expected<ConstSpec> parseConstSpec(const std::string &Text,
                                   const std::string &Where);
/// Parses INDEX:PATH and adds it to K.Outs.
Status addOutSpec(KernelSpec &K, const std::string &Text);
/// Parses PART=X[xY[xZ]] (or X,Y,Z) and sets K.PartGrids[PART].
Status addPartGridSpec(KernelSpec &K, const std::string &Text);
/// Parses PART=BYTES and sets K.PartSmem[PART].
Status addPartSmemSpec(KernelSpec &K, const std::string &Text);
/// True when parameter Index of K receives a shape of a launch-agnostic
/// fused kernel (which the launcher sets, as it does probe capacities).
bool isShapeParam(const KernelInfo &K, size_t Index);
/// Reads a JSON run spec (gpu-run --help, "Run spec"), adding its kernels
/// and groups to Spec and setting its warmup and repeat when it gives them.
/// Errors read "<Path>: <json.path>: <what>".
Status readRunSpec(const std::string &Path, RunSpec &Spec);
/// readRunSpec of JSON text; Name stands for the path in errors.
Status readRunSpecText(const std::string &Text, const std::string &Name,
                       RunSpec &Spec);

//===----------------------------------------------------------------------===//
// Resolving (no GPU)
//===----------------------------------------------------------------------===//

/// The manifest of a kernel spec: the given one (setting K.ModulePath from
/// it when empty), or one scanned from its PTX; std::nullopt for a cubin
/// without manifest.
Expected<std::optional<Manifest>> manifestFor(KernelSpec &K);
/// Chooses the kernel and its launch configuration from the manifest and
/// the options.
Status resolveKernelSpec(KernelSpec &K);
/// Checks the arguments against the parameters that take one (all but the
/// probe buffers and capacities) and maps them onto those; checks --out.
Status checkKernelArgs(KernelSpec &K);
/// Resolves each module variable against the PTX's declarations.
Status checkKernelConsts(KernelSpec &K);
/// Everything that can be checked without a GPU: each kernel resolved, its
/// arguments (when its layout is known), trace and variables checked; no
/// two traces into one directory; the groups named.
Status resolveRunSpec(RunSpec &Spec);

/// The C++ name of a mangled variable (_ZN2ns5coeffE is ns::coeff), or ""
/// for a name that is not mangled.
std::string demangleVariable(const std::string &Name);
/// True for a .cubin or .fatbin path: no PTX to scan.
bool isBinaryModule(const std::string &Path);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_RUNSPEC_H
