//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime never links against libcuda: it opens the driver with dlopen
// when a GPU is first needed. Tools and tests therefore build and run on
// machines without CUDA, and fail with a clear message only when they try to
// use a GPU that is not there. The types below mirror the few declarations of
// cuda.h that are needed (the driver ABI is stable), so no CUDA header is
// needed to build either.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDADRIVER_H
#define GPUOPT_RUNTIME_CUDADRIVER_H

#include "gpuopt/Runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace gpuopt::runtime {

// Driver API types, as in cuda.h.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphNode = struct CUgraphNode_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUkernel = struct CUkern_st *;
using CUjit_option = int;

// The enumerators of cuda.h that the runtime uses.
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_FOUND = 500,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
};

/// CUDA_KERNEL_NODE_PARAMS_v2 of cuda.h (CUDA 12.0+), which
/// cuGraphAddKernelNode_v2 takes. Its first fields are the _v1 struct, which
/// the unversioned cuGraphAddKernelNode of older drivers reads.
struct CudaKernelNodeParams {
  CUfunction func;
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void **kernelParams;
  void **extra;
  /// Unused: func is always set.
  CUkernel kern;
  /// Unused: null means the current context.
  CUcontext ctx;
};

/// The driver entry points, resolved with dlsym. Members are named after the
/// symbol they hold, so that errors name the call exactly; where CUDA renamed
/// an entry point (cuMemAlloc -> cuMemAlloc_v2 ...), the versioned one is
/// used.
struct CudaDriverAPI {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD_v2)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
  CUresult (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned,
                                 CUjit_option *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime_v2)(float *, CUevent, CUevent);
  /// Optional: a module-scope variable's address and size, which only
  /// gpu-run's --const needs; null when the driver lacks it.
  CUresult (*cuModuleGetGlobal_v2)(CUdeviceptr *, size_t *, CUmodule,
                                   const char *);
  /// Optional (CUDA 12.4+): parameter layout of a loaded function; null when
  /// the driver lacks it.
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
  /// Optional: how many blocks of a function fit on one SM, which only
  /// gpu-run's --occupancy-sweep needs; null when the driver lacks it.
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, size_t);
  /// Optional (CUDA 11.4+): CUDA graphs, which only gpu-run's graph mode
  /// needs (KernelGraph in Device.h); null when the driver lacks them.
  CUresult (*cuGraphCreate)(CUgraph *, unsigned);
  CUresult (*cuGraphAddKernelNode_v2)(CUgraphNode *, CUgraph,
                                      const CUgraphNode *, size_t,
                                      const CudaKernelNodeParams *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

/// The loaded driver library. One per process is enough; see
/// CudaDriver::get().
class CudaDriver {
public:
  /// Opens the driver library and resolves every entry point. LibraryName
  /// defaults to $GPUOPT_CUDA_DRIVER, else "libcuda.so.1". Does not call
  /// cuInit.
  static Expected<std::unique_ptr<CudaDriver>>
  load(const std::string &LibraryName = "");
  /// The process-wide driver, loaded on first use (Context::create calls
  /// cuInit); the same error is returned on every call once loading failed.
  static Expected<CudaDriver *> get();

  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  const CudaDriverAPI &api() const { return API; }
  const std::string &libraryName() const { return LibraryName; }

  /// Success for CUDA_SUCCESS, else "<Call> failed: CUDA_ERROR_X (text)".
  Status check(CUresult Result, const char *Call) const;
  /// "CUDA_ERROR_X (text)" for a driver result.
  std::string describe(CUresult Result) const;

private:
  CudaDriver() = default;
  void *Handle = nullptr;
  std::string LibraryName;
  CudaDriverAPI API{};
};

/// The default library name: $GPUOPT_CUDA_DRIVER or "libcuda.so.1".
std::string defaultCudaDriverName();

} // namespace gpuopt::runtime

/// Evaluates a driver call through Driver `D` and returns its Status from
/// the enclosing function on failure.
#define GPUOPT_CU_CHECK(D, CALL, ...)                                          \
  do {                                                                         \
    if (::gpuopt::runtime::Status S_ =                                         \
            (D).check((D).api().CALL(__VA_ARGS__), #CALL))                     \
      return S_;                                                               \
  } while (false)

#endif // GPUOPT_RUNTIME_CUDADRIVER_H
