//===- CompareRun.cpp - A kernel against another on the same inputs -------===//
//
// The other kernel's layout comes from its PTX's headers, or from the driver
// for a cubin; it must take the same arguments as the kernel spec gives.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CompareRun.h"
#include "gpuopt/Runtime/PTXScanner.h"
#include "gpuopt/Runtime/Session.h"

using namespace gpuopt::runtime;

Expected<RunComparison> gpuopt::runtime::compareRun(
    Session &S, size_t Index, const std::string &OtherPath,
    const std::string &OtherKernel, std::optional<double> Tolerance) {
  KernelSpec &K = S.kernel(Index);
  KernelRun &P = S.run(Index);
  const Context &C = S.context();
  // The other kernel's layout: from its PTX headers, else the driver.
  std::vector<ParamInfo> OtherParams;
  Expected<const Function *> OtherFn =
      S.getFunction(OtherPath, OtherKernel, Index);
  if (!OtherFn)
    return OtherFn.takeStatus();
  if (isBinaryModule(OtherPath)) {
    Expected<std::vector<ParamInfo>> Params = queryParamLayout(C, **OtherFn);
    if (!Params)
      return Params.takeStatus();
    OtherParams = std::move(*Params);
  } else {
    Expected<Manifest> OM = scanPTXFile(OtherPath);
    if (!OM)
      return OM.takeStatus();
    const KernelInfo *OK = OM->findKernel(OtherKernel);
    if (!OK)
      return Status::error(OtherPath + ": no kernel '" + OtherKernel + "'");
    OtherParams = OK->Params;
  }
  // The other kernel takes the same arguments; this one's probe buffers
  // and capacities are not among them.
  if (OtherParams.size() != K.Args.size())
    return Status::error(OtherPath + ": kernel '" + OtherKernel + "' has " +
                         std::to_string(OtherParams.size()) + " parameters, '" +
                         K.Label + "' has " + std::to_string(K.Args.size()) +
                         (!K.Kernel.ShapeParams.empty()
                              ? " besides the launch shapes gpu-run sets"
                          : K.Kernel.Probes.empty() ? ""
                          : hasDynamicProbes(K.Kernel)
                              ? " besides its probe buffers and "
                                "capacities"
                              : " besides its probe buffers"));
  for (size_t I = 0; I < OtherParams.size(); ++I)
    if (Status St =
            checkArgAgainstParam(K.Args[I], OtherParams[I], unsigned(I)))
      return St;
  if (Status St = prepareDynamicSmem(C, **OtherFn, K.Config.DynamicSmem))
    return St;

  // Outputs of the checked launch of the first module...
  std::vector<std::vector<uint8_t>> First(K.Args.size());
  for (size_t I = 0; I < K.Args.size(); ++I)
    if (K.Args[I].isBuffer()) {
      First[I].resize(P.Buffers[I].size());
      if (Status St = P.Buffers[I].download(First[I].data(), First[I].size()))
        return St;
    }
  // ...against the second on freshly initialised buffers.
  Expected<std::unique_ptr<ArgPack>> OtherArgs =
      S.packArgs(Index, OtherParams, P.Buffers, P.Probes, /*Probed=*/false);
  if (!OtherArgs)
    return OtherArgs.takeStatus();
  if (Status St = S.initialise(Index))
    return St;
  if (Status St = launch(C, **OtherFn, K.Config, **OtherArgs))
    return St;
  if (Status St = S.syncAfter("kernel '" + OtherKernel + "' of " + OtherPath +
                              " failed"))
    return St;
  RunComparison R;
  R.Module = OtherPath;
  R.Kernel = OtherKernel;
  bool AllWithin = true;
  for (size_t I = 0; I < K.Args.size(); ++I) {
    if (!K.Args[I].isBuffer())
      continue;
    std::vector<uint8_t> Second(P.Buffers[I].size());
    if (Status St = P.Buffers[I].download(Second.data(), Second.size()))
      return St;
    CompareResult CR = compareBuffers(K.Args[I].Type, Second.data(),
                                      First[I].data(), Second.size());
    AllWithin &=
        CR.NaNMismatches == 0 && (!Tolerance || CR.RelNorm <= *Tolerance);
    R.BitIdentical &= CR.bitIdentical();
    R.Buffers.push_back({I, K.Args[I].Type, CR});
  }
  R.Pass = R.BitIdentical || (Tolerance && AllWithin);
  // Leave the buffers as the first module's checked launch left them.
  if (Status St = S.initialise(Index))
    return St;
  return R;
}
