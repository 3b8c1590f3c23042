/*===- FakeCuda.c - A stand-in CUDA driver for the runtime's tests --------===//
//
// Lets the tests exercise the driver loader, Context::create and gpu-run on
// machines without a GPU. Built three times: FAKE_CUDA_NODEVICE exports
// every entry point the runtime requires, none of the optional ones
// (cuFuncGetParamInfo, the graph API), and reports zero devices (cuInit
// returns $FAKE_CUDA_INIT_RESULT when set); FAKE_CUDA_PARTIAL exports only a
// few, as a too-old driver would; FAKE_CUDA_EMULATED has one device whose
// memory is host memory and whose "kernels" are C functions chosen by name
// (fake_copy, fake_half, fake_add, fake_probe, fake_noop; see decode()), so
// that gpu-run's whole flow runs in lit tests. Its CUDA graphs record their
// kernel nodes (with copies of the arguments, as the driver's do) and run
// them on every cuGraphLaunch. With $FAKE_CUDA_LOG set, it appends a line
// per kernel run and graph call to that file, for tests to count.
//
//===----------------------------------------------------------------------===*/

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
/* One kernel run, with its arguments decoded (and so copied) when it is
   enqueued. Kernels take (src, dst, n): fake_copy copies n bytes, fake_half
   the first n / 2, fake_add adds n bytes of src to dst (mod 256); further
   parameters (probe buffers) are ignored. fake_probe takes (buf, n, value)
   and stores the u64 value at byte n of buf. Any other kernel does
   nothing. */
typedef struct {
  char Name[64];
  int Kind; /* 0: nothing, 1: copy, 2: half, 3: add, 4: probe */
  CUdeviceptr Src, Dst;
  unsigned N;
  unsigned long long Value;
} FakeLaunch;

static void logLine(const char *Format, ...) {
  const char *Path = getenv("FAKE_CUDA_LOG");
  if (!Path || !*Path)
    return;
  FILE *F = fopen(Path, "a");
  if (!F)
    return;
  va_list Args;
  va_start(Args, Format);
  vfprintf(F, Format, Args);
  va_end(Args);
  fputc('\n', F);
  fclose(F);
}

static void decode(const char *Name, void **Params, FakeLaunch *L) {
  memset(L, 0, sizeof(*L));
  strncpy(L->Name, Name, sizeof(L->Name) - 1);
  if (strcmp(Name, "fake_copy") == 0)
    L->Kind = 1;
  else if (strcmp(Name, "fake_half") == 0)
    L->Kind = 2;
  else if (strcmp(Name, "fake_add") == 0)
    L->Kind = 3;
  else if (strcmp(Name, "fake_probe") == 0)
    L->Kind = 4;
  if (L->Kind == 0)
    return;
  if (L->Kind == 4) {
    L->Dst = *(CUdeviceptr *)Params[0];
    L->N = *(unsigned *)Params[1];
    L->Value = *(unsigned long long *)Params[2];
    return;
  }
  L->Src = *(CUdeviceptr *)Params[0];
  L->Dst = *(CUdeviceptr *)Params[1];
  L->N = *(unsigned *)Params[2];
}

static void run(const FakeLaunch *L) {
  unsigned char *Dst = (unsigned char *)(uintptr_t)L->Dst;
  const unsigned char *Src = (const unsigned char *)(uintptr_t)L->Src;
  unsigned I;
  switch (L->Kind) {
  case 1:
    memcpy(Dst, Src, L->N);
    break;
  case 2:
    memcpy(Dst, Src, L->N / 2);
    break;
  case 3:
    for (I = 0; I < L->N; ++I)
      Dst[I] = (unsigned char)(Dst[I] + Src[I]);
    break;
  case 4:
    memcpy(Dst + L->N, &L->Value, sizeof(L->Value));
    break;
  default:
    break;
  }
}

static int validShape(unsigned BX, unsigned BY, unsigned BZ, unsigned Smem) {
  return (unsigned long long)BX * BY * BZ <= 1024 && Smem <= 232448;
}

CUresult cuLaunchKernel(void *F, unsigned GX, unsigned GY, unsigned GZ,
                        unsigned BX, unsigned BY, unsigned BZ, unsigned Smem,
                        void *Stream, void **Params, void **Extra) {
  FakeLaunch L;
  (void)GX;
  (void)GY;
  (void)GZ;
  (void)Stream;
  (void)Extra;
  if (!validShape(BX, BY, BZ, Smem))
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  decode((const char *)F, Params, &L);
  logLine("launch %s", L.Name);
  run(&L);
  return 0;
}

/* A graph, and an executable graph, is its list of kernel nodes. */
typedef struct {
  size_t Count;
  FakeLaunch *Nodes;
} FakeGraph;

/* CUDA_KERNEL_NODE_PARAMS_v2. */
typedef struct {
  void *Func;
  unsigned GX, GY, GZ, BX, BY, BZ, Smem;
  void **Params;
  void **Extra;
  void *Kern;
  void *Ctx;
} FakeKernelNodeParams;

CUresult cuGraphCreate(void **G, unsigned Flags) {
  if (Flags != 0)
    return 1;
  *G = calloc(1, sizeof(FakeGraph));
  return *G ? 0 : 2;
}
CUresult cuGraphAddKernelNode_v2(void **Node, void *Graph, void **Deps,
                                 size_t NumDeps,
                                 const FakeKernelNodeParams *P) {
  FakeGraph *G = (FakeGraph *)Graph;
  FakeLaunch *Nodes;
  if ((NumDeps && !Deps) || !P->Func || P->Kern || P->Extra)
    return 1;
  if (!validShape(P->BX, P->BY, P->BZ, P->Smem))
    return 1;
  Nodes = realloc(G->Nodes, (G->Count + 1) * sizeof(FakeLaunch));
  if (!Nodes)
    return 2;
  G->Nodes = Nodes;
  decode((const char *)P->Func, P->Params, &G->Nodes[G->Count]);
  logLine("graph-node %s", G->Nodes[G->Count].Name);
  ++G->Count;
  *Node = (void *)(uintptr_t)G->Count; /* Nodes move; a handle is an index. */
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void **Exec, void *Graph,
                                     unsigned long long Flags) {
  const FakeGraph *G = (const FakeGraph *)Graph;
  FakeGraph *E;
  if (Flags != 0)
    return 1;
  E = calloc(1, sizeof(FakeGraph));
  if (!E)
    return 2;
  E->Count = G->Count;
  E->Nodes = malloc((G->Count ? G->Count : 1) * sizeof(FakeLaunch));
  if (!E->Nodes) {
    free(E);
    return 2;
  }
  memcpy(E->Nodes, G->Nodes, G->Count * sizeof(FakeLaunch));
  logLine("graph-instantiate %zu nodes", E->Count);
  *Exec = E;
  return 0;
}
CUresult cuGraphLaunch(void *Exec, void *Stream) {
  const FakeGraph *E = (const FakeGraph *)Exec;
  size_t I;
  (void)Stream;
  logLine("graph-launch");
  for (I = 0; I < E->Count; ++I) {
    logLine("graph-run %s", E->Nodes[I].Name);
    run(&E->Nodes[I]);
  }
  return 0;
}
static void freeGraph(FakeGraph *G) {
  if (G)
    free(G->Nodes);
  free(G);
}
CUresult cuGraphExecDestroy(void *Exec) {
  freeGraph((FakeGraph *)Exec);
  return 0;
}
CUresult cuGraphDestroy(void *Graph) {
  freeGraph((FakeGraph *)Graph);
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
