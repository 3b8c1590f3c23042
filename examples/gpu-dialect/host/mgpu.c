/*===- mgpu.c - MLIR CUDA runtime wrappers for the example ----------------===//
//
// Host code lowered by upstream's gpu-to-llvm calls MLIR's CUDA runtime
// wrappers (mgpuModuleLoad, mgpuLaunchKernel, ...), which upstream builds as
// libmlir_cuda_runtime from mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp.
// Debian's LLVM packages do not ship that library, and a GPU machine need
// not have LLVM at all, so this file implements, over the CUDA driver API,
// the wrappers that pair.mlir's lowered @forward calls (and the allocation
// ones main.c uses), with the signatures of CudaRuntimeWrappers.cpp in LLVM
// 22. Where upstream's wrappers print a failed call and go on, these exit
// with a message (and without running the lowered module's destructor,
// which would unload its module).
//
// The driver is opened with dlopen, as gpu-run opens it (libcuda.so.1, or
// the library $GPUOPT_CUDA_DRIVER names), so that the executables start with
// libc alone and build without the CUDA toolkit. With $MGPU_TRACE set, every
// module load and kernel launch is printed on stderr.
//
//===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API's types and the few constants used (cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
enum {
  CUDA_ERROR_DEINITIALIZED = 4,
  CU_STREAM_NON_BLOCKING = 1,
  CU_MEM_ATTACH_GLOBAL = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
};

/* The entry points used, resolved when the driver is opened. */
static struct {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
} cu;

static const char *driverName(void) {
  const char *Name = getenv("GPUOPT_CUDA_DRIVER");
  return Name && *Name ? Name : "libcuda.so.1";
}

/* Exits without running the destructors of the lowered module, which would
   call the driver again (mgpuModuleUnload). */
static void fail(void) {
  fflush(stdout);
  _Exit(1);
}

static void check(CUresult Result, const char *Call) {
  const char *Name = NULL;
  if (Result == 0)
    return;
  if (cu.cuGetErrorName(Result, &Name) != 0 || !Name)
    Name = "an unknown error";
  fprintf(stderr, "mgpu: %s failed: %s (%d)\n", Call, Name, Result);
  fail();
}
#define CHECK(CALL) check(cu.CALL, #CALL)

/* Opens the driver and makes device 0's primary context current, once. */
static void init(void) {
  static int Done;
  void *Handle;
  CUdevice Device;
  CUcontext Context;
  if (Done)
    return;
  Done = 1;
  Handle = dlopen(driverName(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    fprintf(stderr,
            "mgpu: CUDA driver %s not found: %s ($GPUOPT_CUDA_DRIVER names "
            "another library)\n",
            driverName(), dlerror());
    fail();
  }
#define RESOLVE(NAME, REQUIRED)                                                \
  do {                                                                         \
    *(void **)&cu.NAME = dlsym(Handle, #NAME);                                 \
    if (REQUIRED && !cu.NAME) {                                                \
      fprintf(stderr, "mgpu: CUDA driver %s has no %s\n", driverName(),        \
              #NAME);                                                          \
      fail();                                                                  \
    }                                                                          \
  } while (0)
  RESOLVE(cuInit, true);
  RESOLVE(cuGetErrorName, true);
  RESOLVE(cuDeviceGet, true);
  RESOLVE(cuDevicePrimaryCtxRetain, true);
  RESOLVE(cuCtxSetCurrent, true);
  RESOLVE(cuCtxSynchronize, true);
  RESOLVE(cuModuleLoadDataEx, true);
  RESOLVE(cuModuleUnload, true);
  RESOLVE(cuModuleGetFunction, true);
  RESOLVE(cuFuncSetAttribute, true);
  RESOLVE(cuLaunchKernel, true);
  RESOLVE(cuStreamCreate, true);
  RESOLVE(cuStreamSynchronize, true);
  RESOLVE(cuStreamDestroy_v2, true);
  RESOLVE(cuMemAlloc_v2, true);
  RESOLVE(cuMemAllocManaged, false); /* only for mgpuMemAlloc's shared memory */
  RESOLVE(cuMemFree_v2, true);
  RESOLVE(cuMemcpyHtoD_v2, true);
  RESOLVE(cuMemcpyDtoH_v2, true);
#undef RESOLVE
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&Device, 0));
  CHECK(cuDevicePrimaryCtxRetain(&Context, Device));
  CHECK(cuCtxSetCurrent(Context));
}

static bool tracing(void) {
  const char *Trace = getenv("MGPU_TRACE");
  return Trace && *Trace;
}

/* The names mgpuModuleGetFunction was asked for, for the trace. */
static struct {
  CUfunction Function;
  const char *Name;
} Names[64];

static const char *functionName(CUfunction Function) {
  size_t I;
  for (I = 0; I < sizeof(Names) / sizeof(Names[0]) && Names[I].Name; ++I)
    if (Names[I].Function == Function)
      return Names[I].Name;
  return "(unknown)";
}

static CUmodule loadModule(void *Data, int OptLevel, const char *What) {
  char Log[8192] = "";
  int Options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_OPTIMIZATION_LEVEL};
  void *Values[] = {Log, (void *)(uintptr_t)sizeof(Log),
                    (void *)(uintptr_t)OptLevel};
  CUmodule Module = NULL;
  CUresult Result;
  init();
  /* The error log always; the optimization level only for PTX. */
  Result = cu.cuModuleLoadDataEx(&Module, Data, OptLevel < 0 ? 2 : 3, Options,
                                 Values);
  if (Result != 0 && Log[0])
    fprintf(stderr, "mgpu: the driver's JIT log:\n%s\n", Log);
  check(Result, "cuModuleLoadDataEx");
  if (tracing())
    fprintf(stderr, "mgpu: loaded %s\n", What);
  return Module;
}

/* A cubin (gpu.binary of format bin). */
CUmodule mgpuModuleLoad(void *Data, size_t Size) {
  (void)Size;
  return loadModule(Data, -1, "a cubin module");
}

/* PTX (gpu.binary of format isa, the default), compiled by the driver. */
CUmodule mgpuModuleLoadJIT(void *Data, int OptLevel) {
  return loadModule(Data, OptLevel, "a PTX module (driver JIT)");
}

/* Called by the lowered module's destructor at exit, which may come after
   the driver's own shutdown: that unloaded every module already. */
void mgpuModuleUnload(CUmodule Module) {
  CUresult Result;
  init();
  Result = cu.cuModuleUnload(Module);
  if (Result != CUDA_ERROR_DEINITIALIZED)
    check(Result, "cuModuleUnload(Module)");
}

CUfunction mgpuModuleGetFunction(CUmodule Module, const char *Name) {
  CUfunction Function = NULL;
  size_t I;
  init();
  CHECK(cuModuleGetFunction(&Function, Module, Name));
  for (I = 0; I < sizeof(Names) / sizeof(Names[0]); ++I)
    if (!Names[I].Name || Names[I].Function == Function) {
      Names[I].Function = Function;
      Names[I].Name = Name;
      break;
    }
  return Function;
}

/* Sizes are intptr_t, as MLIR's index is; the driver takes unsigned. */
void mgpuLaunchKernel(CUfunction Function, intptr_t GridX, intptr_t GridY,
                      intptr_t GridZ, intptr_t BlockX, intptr_t BlockY,
                      intptr_t BlockZ, int32_t Smem, CUstream Stream,
                      void **Params, void **Extra, size_t ParamsCount) {
  init();
  if (tracing())
    fprintf(stderr,
            "mgpu: launch %s: grid %ldx%ldx%ld, block %ldx%ldx%ld, dynamic "
            "smem %d, %zu parameters\n",
            functionName(Function), (long)GridX, (long)GridY, (long)GridZ,
            (long)BlockX, (long)BlockY, (long)BlockZ, Smem, ParamsCount);
  /* As upstream: allow the dynamic shared memory asked for (the driver
     refuses more than the device has). */
  if (Smem > 0)
    CHECK(cuFuncSetAttribute(
        Function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, Smem));
  CHECK(cuLaunchKernel(Function, (unsigned)GridX, (unsigned)GridY,
                       (unsigned)GridZ, (unsigned)BlockX, (unsigned)BlockY,
                       (unsigned)BlockZ, (unsigned)Smem, Stream, Params,
                       Extra));
}

CUstream mgpuStreamCreate(void) {
  CUstream Stream = NULL;
  init();
  CHECK(cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING));
  return Stream;
}

void mgpuStreamSynchronize(CUstream Stream) {
  init();
  CHECK(cuStreamSynchronize(Stream));
}

void mgpuStreamDestroy(CUstream Stream) {
  init();
  CHECK(cuStreamDestroy_v2(Stream));
}

/* Device memory, or managed memory when IsHostShared (gpu.alloc
   host_shared). Synchronous: the stream is not used, as upstream. */
void *mgpuMemAlloc(uint64_t Bytes, CUstream Stream, bool IsHostShared) {
  CUdeviceptr Ptr = 0;
  (void)Stream;
  init();
  if (IsHostShared && !cu.cuMemAllocManaged) {
    fprintf(stderr, "mgpu: CUDA driver %s has no cuMemAllocManaged\n",
            driverName());
    fail();
  }
  if (IsHostShared)
    CHECK(cuMemAllocManaged(&Ptr, Bytes, CU_MEM_ATTACH_GLOBAL));
  else
    CHECK(cuMemAlloc_v2(&Ptr, Bytes));
  return (void *)(uintptr_t)Ptr;
}

void mgpuMemFree(void *Ptr, CUstream Stream) {
  (void)Stream;
  init();
  CHECK(cuMemFree_v2((CUdeviceptr)(uintptr_t)Ptr));
}

/* Not MLIR wrappers: the copies of the program that calls @forward
   (main.c), done when they return. The kernels of @forward run on a stream
   of their own that does not wait for the legacy stream, hence the context
   synchronization after a copy to the device. */
void copyToDevice(void *Device, const void *Host, size_t Bytes) {
  init();
  CHECK(cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)Device, Host, Bytes));
  CHECK(cuCtxSynchronize());
}

void copyToHost(void *Host, const void *Device, size_t Bytes) {
  init();
  CHECK(cuMemcpyDtoH_v2(Host, (CUdeviceptr)(uintptr_t)Device, Bytes));
}
