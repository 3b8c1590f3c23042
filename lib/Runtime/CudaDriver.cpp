//===- CudaDriver.cpp - Loading the CUDA driver with dlopen ---------------===//
//
// Resolves the driver API at run time so that nothing in the project links
// against libcuda (see CudaDriver.h).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace gpuopt::runtime;

std::string gpuopt::runtime::defaultCudaDriverName() {
  if (const char *Env = std::getenv("GPUOPT_CUDA_DRIVER"); Env && *Env)
    return Env;
  return "libcuda.so.1";
}

namespace {
/// One entry point: the member to fill and the symbol names to try in order.
struct Symbol {
  void **Slot;
  const char *Names[2];
  bool Optional;
};
} // namespace

Expected<std::unique_ptr<CudaDriver>>
CudaDriver::load(const std::string &LibraryName) {
  std::string Name =
      LibraryName.empty() ? defaultCudaDriverName() : LibraryName;
  void *Handle = dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Why = dlerror();
    return Status::error("CUDA driver " + Name +
                         " not found: " + (Why ? Why : "dlopen failed") +
                         " (is an NVIDIA driver installed? $GPUOPT_CUDA_DRIVER "
                         "names another library)");
  }
  std::unique_ptr<CudaDriver> D(new CudaDriver());
  D->Handle = Handle;
  D->LibraryName = Name;

  CudaDriverAPI &A = D->API;
#define SYM(MEMBER, NAME1, NAME2, OPTIONAL)                                    \
  Symbol { reinterpret_cast<void **>(&A.MEMBER), {NAME1, NAME2}, OPTIONAL }
  const Symbol Symbols[] = {
      SYM(cuInit, "cuInit", nullptr, false),
      SYM(cuDriverGetVersion, "cuDriverGetVersion", nullptr, false),
      SYM(cuGetErrorName, "cuGetErrorName", nullptr, false),
      SYM(cuGetErrorString, "cuGetErrorString", nullptr, false),
      SYM(cuDeviceGetCount, "cuDeviceGetCount", nullptr, false),
      SYM(cuDeviceGet, "cuDeviceGet", nullptr, false),
      SYM(cuDeviceGetName, "cuDeviceGetName", nullptr, false),
      SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr, false),
      SYM(cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2", nullptr, false),
      SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr, false),
      SYM(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2", nullptr,
          false),
      SYM(cuCtxSetCurrent, "cuCtxSetCurrent", nullptr, false),
      SYM(cuCtxSynchronize, "cuCtxSynchronize", nullptr, false),
      SYM(cuMemAlloc_v2, "cuMemAlloc_v2", nullptr, false),
      SYM(cuMemFree_v2, "cuMemFree_v2", nullptr, false),
      SYM(cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", nullptr, false),
      SYM(cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2", nullptr, false),
      SYM(cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2", nullptr, false),
      SYM(cuMemGetInfo_v2, "cuMemGetInfo_v2", nullptr, false),
      SYM(cuMemsetD8_v2, "cuMemsetD8_v2", nullptr, false),
      SYM(cuMemsetD8Async, "cuMemsetD8Async", nullptr, false),
      SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx", nullptr, false),
      SYM(cuModuleUnload, "cuModuleUnload", nullptr, false),
      SYM(cuModuleGetFunction, "cuModuleGetFunction", nullptr, false),
      SYM(cuFuncGetAttribute, "cuFuncGetAttribute", nullptr, false),
      SYM(cuFuncSetAttribute, "cuFuncSetAttribute", nullptr, false),
      SYM(cuLaunchKernel, "cuLaunchKernel", nullptr, false),
      SYM(cuStreamCreate, "cuStreamCreate", nullptr, false),
      SYM(cuStreamDestroy_v2, "cuStreamDestroy_v2", nullptr, false),
      SYM(cuStreamSynchronize, "cuStreamSynchronize", nullptr, false),
      SYM(cuStreamWaitEvent, "cuStreamWaitEvent", nullptr, false),
      SYM(cuEventCreate, "cuEventCreate", nullptr, false),
      SYM(cuEventDestroy_v2, "cuEventDestroy_v2", nullptr, false),
      SYM(cuEventRecord, "cuEventRecord", nullptr, false),
      SYM(cuEventSynchronize, "cuEventSynchronize", nullptr, false),
      // CUDA 12.8 added _v2; older drivers have only the original.
      SYM(cuEventElapsedTime_v2, "cuEventElapsedTime_v2", "cuEventElapsedTime",
          false),
      SYM(cuModuleGetGlobal_v2, "cuModuleGetGlobal_v2", nullptr, true),
      SYM(cuFuncGetParamInfo, "cuFuncGetParamInfo", nullptr, true),
      SYM(cuOccupancyMaxActiveBlocksPerMultiprocessor,
          "cuOccupancyMaxActiveBlocksPerMultiprocessor", nullptr, true),
      // Graphs. cuda.h maps cuGraphAddKernelNode to _v2 (CUDA 12.0), whose
      // parameters extend the original's, and cuGraphInstantiate to
      // cuGraphInstantiateWithFlags (CUDA 11.4); the exported
      // cuGraphInstantiate has another signature and is never used.
      SYM(cuGraphCreate, "cuGraphCreate", nullptr, true),
      SYM(cuGraphAddKernelNode_v2, "cuGraphAddKernelNode_v2",
          "cuGraphAddKernelNode", true),
      SYM(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", nullptr,
          true),
      SYM(cuGraphLaunch, "cuGraphLaunch", nullptr, true),
      SYM(cuGraphExecDestroy, "cuGraphExecDestroy", nullptr, true),
      SYM(cuGraphDestroy, "cuGraphDestroy", nullptr, true),
  };
#undef SYM

  for (const Symbol &S : Symbols) {
    for (const char *N : S.Names) {
      if (!N)
        continue;
      if ((*S.Slot = dlsym(Handle, N)))
        break;
    }
    if (!*S.Slot && !S.Optional)
      return Status::error(std::string("CUDA driver ") + Name +
                           " lacks the entry point " + S.Names[0] +
                           " (driver too old?)");
  }
  return D;
}

CudaDriver::~CudaDriver() {
  if (Handle)
    dlclose(Handle);
}

Expected<CudaDriver *> CudaDriver::get() {
  static std::once_flag Once;
  static std::unique_ptr<CudaDriver> Driver;
  static Status LoadError;
  std::call_once(Once, [] {
    Expected<std::unique_ptr<CudaDriver>> D = load();
    if (!D) {
      LoadError = D.status();
      return;
    }
    Driver = std::move(*D);
  });
  if (!Driver)
    return LoadError;
  return Driver.get();
}

std::string CudaDriver::describe(CUresult Result) const {
  const char *Name = nullptr;
  const char *Text = nullptr;
  if (API.cuGetErrorName)
    API.cuGetErrorName(Result, &Name);
  if (API.cuGetErrorString)
    API.cuGetErrorString(Result, &Text);
  std::string Out = Name ? Name : "CUDA error " + std::to_string(Result);
  if (Text)
    Out += std::string(" (") + Text + ")";
  return Out;
}

Status CudaDriver::check(CUresult Result, const char *Call) const {
  if (Result == CUDA_SUCCESS)
    return Status::success();
  return Status::error(std::string(Call) + " failed: " + describe(Result));
}
