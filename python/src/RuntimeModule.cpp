//===- RuntimeModule.cpp - gpuopt._runtime: gpu-run in process ------------===//
//
// Runs a gpu-run run spec (JSON text) through the runtime library as gpu-run
// does (tools/gpu-run/gpu-run.cpp): resolve, open a session, the checked
// launch of every kernel with its probe buffers, trace and outputs, the
// comparison, timing alone and in groups, and returns the JSON report. It
// links only the runtime, which has no LLVM or MLIR dependency and opens
// the CUDA driver with dlopen, so that it loads on a GPU machine that has
// neither; gpuopt.run (gpuopt/api.py) wraps it. `device()` is the GPU it
// would run on (gpuopt.find_gpu, which decides whether strategy=auto is
// measured by default). Errors are raised as
// RuntimeError with the runtime's message, which gpuopt.run turns into
// gpuopt.Error.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CompareRun.h"
#include "gpuopt/Runtime/OccupancySweep.h"
#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/RunReport.h"
#include "gpuopt/Runtime/RunSpec.h"
#include "gpuopt/Runtime/Session.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace nb = nanobind;
using namespace gpuopt::runtime;

namespace {

/// A runtime error, as its message.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(const Status &S) {
  if (!S.ok())
    throw RunError(S.message());
}

template <typename T> T take(Expected<T> E) {
  if (!E)
    throw RunError(E.status().message());
  return std::move(*E);
}

/// The checked launch of kernel I: its probes, trace and outputs.
KernelReport runChecked(Session &S, size_t I) {
  KernelSpec &K = S.kernel(I);
  (void)take(S.launchChecked(I));
  const Function &Fn = *S.run(I).Fn;
  KernelReport R = KernelReport::of(K, Fn);
  if (!K.Kernel.Probes.empty()) {
    R.Probed = true;
    R.Probes = take(readProbes(S, I, /*WithRecords=*/!K.TraceDir.empty()));
    if (!K.TraceDir.empty())
      check(writeTrace(S, I, R.Probes));
    for (ProbeResult &P : R.Probes)
      P.Records = {};
  }
  for (const auto &[Index, Path] : K.Outs)
    (void)take(S.writeOutput(I, Index, Path));
  return R;
}

/// "OTHER[:KERNEL]" of a comparison; KERNEL defaults to Kernel.
std::pair<std::string, std::string> splitCompare(const std::string &Text,
                                                 const std::string &Kernel) {
  size_t Colon = Text.rfind(':');
  if (Colon != std::string::npos && Text.find('/', Colon) == std::string::npos)
    return {Text.substr(0, Colon), Text.substr(Colon + 1)};
  return {Text, Kernel};
}

/// gpu-run --spec on JSON text; returns the --json report.
std::string run(const std::string &SpecText, int Device, bool Sweep,
                const std::string &Compare, std::optional<double> Tolerance) {
  RunSpec Spec;
  check(readRunSpecText(SpecText, "run spec", Spec));
  if (Spec.Kernels.empty())
    throw RunError("no kernels to run");
  if (!Compare.empty() && Spec.Kernels.size() != 1)
    throw RunError("compare takes exactly one kernel spec");
  if (Tolerance && Compare.empty())
    throw RunError("tolerance applies to compare");
  check(resolveRunSpec(Spec));
  std::unique_ptr<Session> S = take(Session::create(Spec));
  check(S->open(Device));

  RunReport Report;
  Report.Device = S->context().info();
  Report.Warmup = Spec.Warmup;
  Report.Repeat = Spec.Repeat;
  for (size_t I = 0; I < Spec.Kernels.size(); ++I)
    Report.Kernels.push_back(runChecked(*S, I));
  if (!Compare.empty()) {
    auto [OtherPath, OtherKernel] =
        splitCompare(Compare, Spec.Kernels[0].Kernel.Name);
    Report.Compare = take(compareRun(*S, 0, OtherPath, OtherKernel, Tolerance));
  }
  if (Spec.Repeat == 0)
    return writeRunReport(Report);

  check(S->startTiming());
  Report.Timed = true;
  for (size_t I = 0; I < Spec.Kernels.size(); ++I) {
    if (!Spec.Kernels[I].TimeAlone)
      continue;
    Report.Kernels[I].Time = take(S->timeAlone(I));
    if (Sweep)
      Report.Kernels[I].Occupancy = take(sweepOccupancy(*S, I));
  }
  for (const GroupSpec &G : Spec.Groups) {
    GroupTiming Timing = take(S->timeGroup(G));
    if (!Timing.Entries.empty())
      Report.Groups.push_back(GroupReport::of(Spec, G, Timing));
  }
  return writeRunReport(Report);
}

/// The GPU the runtime would run on, as the report's "device" describes it;
/// raises RunError with the reason when there is none.
nb::dict device(int Ordinal) {
  DeviceInfo Info;
  {
    nb::gil_scoped_release Release;
    Info = take(queryDevice(Ordinal));
  }
  nb::dict D;
  D["name"] = Info.Name;
  D["compute_capability"] = std::to_string(Info.ComputeMajor) + "." +
                            std::to_string(Info.ComputeMinor);
  D["multiprocessors"] = Info.Multiprocessors;
  D["l2_bytes"] = Info.L2Bytes;
  D["total_memory"] = Info.TotalMemory;
  D["driver_version"] = Info.DriverVersion;
  return D;
}

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "gpu-run's runtime in process (wrapped by gpuopt.run)";
  nb::exception<RunError>(m, "RunError", PyExc_RuntimeError);
  m.def(
      "run",
      [](const std::string &SpecText, int Device, bool OccupancySweep,
         const std::string &Compare, std::optional<double> Tolerance) {
        nb::gil_scoped_release Release;
        return run(SpecText, Device, OccupancySweep, Compare, Tolerance);
      },
      nb::arg("spec"), nb::arg("device") = 0,
      nb::arg("occupancy_sweep") = false, nb::arg("compare") = "",
      nb::arg("tolerance") = nb::none());
  m.def("device", &device, nb::arg("device") = 0,
        "The GPU the runtime opens (no context is made); RunError says why "
        "there is none");
}
