/*===- FakeCuda.c - A stand-in CUDA driver for the runtime's tests --------===//
//
// Lets the tests exercise the driver loader, Context::create and gpu-run on
// machines without a GPU. Built three times: FAKE_CUDA_NODEVICE exports
// every entry point the runtime needs and reports zero devices (cuInit
// returns $FAKE_CUDA_INIT_RESULT when set); FAKE_CUDA_PARTIAL exports only a
// few, as a too-old driver would; FAKE_CUDA_EMULATED has one device whose
// memory is host memory and whose "kernels" are C functions chosen by name
// (fake_copy, fake_half, fake_noop; see emulate()), so that gpu-run's whole
// flow runs in lit tests.
//
//===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

CUresult cuInit(unsigned Flags) {
  (void)Flags;
  const char *R = getenv("FAKE_CUDA_INIT_RESULT");
  return R ? atoi(R) : 0;
}

CUresult cuGetErrorName(CUresult E, const char **S) {
  switch (E) {
  case 0:
    *S = "CUDA_SUCCESS";
    return 0;
  case 2:
    *S = "CUDA_ERROR_OUT_OF_MEMORY";
    return 0;
  case 100:
    *S = "CUDA_ERROR_NO_DEVICE";
    return 0;
  default:
    *S = NULL;
    return 1;
  }
}

CUresult cuGetErrorString(CUresult E, const char **S) {
  switch (E) {
  case 0:
    *S = "no error";
    return 0;
  case 2:
    *S = "out of memory";
    return 0;
  case 100:
    *S = "no CUDA-capable device is detected";
    return 0;
  default:
    *S = NULL;
    return 1;
  }
}

#ifdef FAKE_CUDA_NODEVICE
#define STUB(NAME)                                                             \
  CUresult NAME(void) { return 999; }

CUresult cuDeviceGetCount(int *Count) {
  *Count = 0;
  return 0;
}
CUresult cuDriverGetVersion(int *V) {
  *V = 13000;
  return 0;
}
STUB(cuDeviceGet)
STUB(cuDeviceGetName)
STUB(cuDeviceGetAttribute)
STUB(cuDeviceTotalMem_v2)
STUB(cuDevicePrimaryCtxRetain)
STUB(cuDevicePrimaryCtxRelease_v2)
STUB(cuCtxSetCurrent)
STUB(cuCtxSynchronize)
STUB(cuMemAlloc_v2)
STUB(cuMemFree_v2)
STUB(cuMemcpyHtoD_v2)
STUB(cuMemcpyDtoH_v2)
STUB(cuMemsetD8_v2)
STUB(cuModuleLoadDataEx)
STUB(cuModuleUnload)
STUB(cuModuleGetFunction)
STUB(cuFuncGetAttribute)
STUB(cuFuncSetAttribute)
STUB(cuLaunchKernel)
STUB(cuStreamCreate)
STUB(cuStreamDestroy_v2)
STUB(cuStreamSynchronize)
STUB(cuStreamWaitEvent)
STUB(cuEventCreate)
STUB(cuEventDestroy_v2)
STUB(cuEventRecord)
STUB(cuEventSynchronize)
/* Only the original name, as before CUDA 12.8: the loader falls back. */
STUB(cuEventElapsedTime)
#endif

#ifdef FAKE_CUDA_EMULATED
typedef unsigned long long CUdeviceptr;

CUresult cuDriverGetVersion(int *V) {
  *V = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int *Count) {
  *Count = 1;
  return 0;
}
CUresult cuDeviceGet(int *D, int Ordinal) {
  *D = Ordinal;
  return Ordinal == 0 ? 0 : 101;
}
CUresult cuDeviceGetName(char *Name, int Len, int D) {
  (void)D;
  strncpy(Name, "Fake GPU", (size_t)Len);
  return 0;
}
CUresult cuDeviceGetAttribute(int *V, int Attr, int D) {
  (void)D;
  switch (Attr) {
  case 75: /* compute capability major */
    *V = 9;
    break;
  case 16: /* multiprocessors */
    *V = 4;
    break;
  case 97: /* max shared memory per block, opt-in */
    *V = 232448;
    break;
  default:
    *V = 0;
  }
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *Bytes, int D) {
  (void)D;
  *Bytes = (size_t)1 << 30;
  return 0;
}
static int Context;
CUresult cuDevicePrimaryCtxRetain(void **Ctx, int D) {
  (void)D;
  *Ctx = &Context;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int D) {
  (void)D;
  return 0;
}
CUresult cuCtxSetCurrent(void *Ctx) {
  (void)Ctx;
  return 0;
}
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *P, size_t Bytes) {
  void *M = malloc(Bytes);
  if (!M)
    return 2;
  *P = (CUdeviceptr)(uintptr_t)M;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr P) {
  free((void *)(uintptr_t)P);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr D, const void *H, size_t N) {
  memcpy((void *)(uintptr_t)D, H, N);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *H, CUdeviceptr D, size_t N) {
  memcpy(H, (const void *)(uintptr_t)D, N);
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr D, unsigned char V, size_t N) {
  memset((void *)(uintptr_t)D, V, N);
  return 0;
}
/* A module is its image; a function is its name. */
CUresult cuModuleLoadDataEx(void **M, const void *Image, unsigned N, int *Opts,
                            void **Vals) {
  (void)N;
  (void)Opts;
  (void)Vals;
  if (strstr((const char *)Image, ".version") == NULL)
    return 218; /* CUDA_ERROR_INVALID_PTX */
  *M = strdup((const char *)Image);
  return 0;
}
CUresult cuModuleUnload(void *M) {
  free(M);
  return 0;
}
CUresult cuModuleGetFunction(void **F, void *M, const char *Name) {
  if (strstr((const char *)M, Name) == NULL)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  *F = strdup(Name);
  return 0;
}
CUresult cuFuncGetAttribute(int *V, int Attr, void *F) {
  (void)F;
  *V = Attr == 4 ? 16 : Attr == 0 ? 1024 : 0; /* 16 registers */
  return 0;
}
CUresult cuFuncSetAttribute(void *F, int Attr, int V) {
  (void)F;
  (void)Attr;
  return V > 232448 ? 1 : 0;
}
/* (src, dst, n): fake_copy copies n bytes, fake_half the first n / 2; any
   other kernel does nothing. */
static void emulate(const char *Name, void **Params) {
  if (strcmp(Name, "fake_copy") != 0 && strcmp(Name, "fake_half") != 0)
    return;
  CUdeviceptr Src = *(CUdeviceptr *)Params[0];
  CUdeviceptr Dst = *(CUdeviceptr *)Params[1];
  unsigned N = *(unsigned *)Params[2];
  if (strcmp(Name, "fake_half") == 0)
    N /= 2;
  memcpy((void *)(uintptr_t)Dst, (const void *)(uintptr_t)Src, N);
}
CUresult cuLaunchKernel(void *F, unsigned GX, unsigned GY, unsigned GZ,
                        unsigned BX, unsigned BY, unsigned BZ, unsigned Smem,
                        void *Stream, void **Params, void **Extra) {
  (void)GX;
  (void)GY;
  (void)GZ;
  (void)Stream;
  (void)Extra;
  if ((unsigned long long)BX * BY * BZ > 1024 || Smem > 232448)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  emulate((const char *)F, Params);
  return 0;
}
static int Object;
CUresult cuStreamCreate(void **S, unsigned Flags) {
  (void)Flags;
  *S = &Object;
  return 0;
}
CUresult cuStreamDestroy_v2(void *S) {
  (void)S;
  return 0;
}
CUresult cuStreamSynchronize(void *S) {
  (void)S;
  return 0;
}
CUresult cuStreamWaitEvent(void *S, void *E, unsigned Flags) {
  (void)S;
  (void)E;
  (void)Flags;
  return 0;
}
CUresult cuEventCreate(void **E, unsigned Flags) {
  (void)Flags;
  *E = &Object;
  return 0;
}
CUresult cuEventDestroy_v2(void *E) {
  (void)E;
  return 0;
}
CUresult cuEventRecord(void *E, void *S) {
  (void)E;
  (void)S;
  return 0;
}
CUresult cuEventSynchronize(void *E) {
  (void)E;
  return 0;
}
CUresult cuEventElapsedTime_v2(float *Ms, void *A, void *B) {
  (void)A;
  (void)B;
  *Ms = 0.5f;
  return 0;
}
#endif
