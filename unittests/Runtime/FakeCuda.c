/*===- FakeCuda.c - A stand-in CUDA driver for the runtime's tests --------===//
//
// Lets the tests exercise the driver loader, Context::create and gpu-run on
// machines without a GPU. Built three times: FAKE_CUDA_NODEVICE exports
// every entry point the runtime requires, none of the optional ones
// (cuFuncGetParamInfo, the graph API), and reports zero devices (cuInit
// returns $FAKE_CUDA_INIT_RESULT when set); FAKE_CUDA_PARTIAL exports only a
// few, as a too-old driver would; FAKE_CUDA_EMULATED has one device whose
// memory is host memory and whose "kernels" are C functions chosen by name
// (fake_copy, fake_half, fake_add, fake_probe, fake_dyn, fake_const,
// fake_noop; see decode()), so that gpu-run's whole flow runs in lit tests.
// Its CUDA graphs record their kernel nodes (with copies of the arguments,
// as the driver's do) and run them on every cuGraphLaunch. With
// $FAKE_CUDA_LOG set, it appends a line per kernel run, graph call and
// function attribute set to that file, for tests to count; with
// $FAKE_CUDA_LOG_MODULES set too, also a line per module load and unload,
// and each launch line names its module instance (numbered from 1 in load
// order); with $FAKE_CUDA_LOG_PARAMS too, a line after each launch with its
// grid, block, dynamic shared memory and the listed parameters as u32
// (logShape). $FAKE_CUDA_FREE_MEMORY sets the free memory it reports (default:
// all of its 1 GiB), and allocations larger than $FAKE_CUDA_MAX_ALLOC bytes
// fail as out of memory. Every function reports $FAKE_CUDA_STATIC_SMEM bytes
// of static shared memory (default 0), and a launch fails as the driver's
// does when its dynamic shared memory exceeds the function's limit: 48 KiB
// less the static, until cuFuncSetAttribute raises it. Module-scope
// variables (cuModuleGetGlobal_v2) are host memory sized by their PTX
// declaration; they start zeroed (initializers are not emulated).
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
  case 1:
    *S = "CUDA_ERROR_INVALID_VALUE";
    return 0;
  case 2:
    *S = "CUDA_ERROR_OUT_OF_MEMORY";
    return 0;
  case 100:
    *S = "CUDA_ERROR_NO_DEVICE";
    return 0;
  case 500:
    *S = "CUDA_ERROR_NOT_FOUND";
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
  case 1:
    *S = "invalid argument";
    return 0;
  case 2:
    *S = "out of memory";
    return 0;
  case 100:
    *S = "no CUDA-capable device is detected";
    return 0;
  case 500:
    *S = "named symbol not found";
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
STUB(cuMemcpyDtoD_v2)
STUB(cuMemGetInfo_v2)
STUB(cuMemsetD8_v2)
STUB(cuMemsetD8Async)
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
  const char *Max = getenv("FAKE_CUDA_MAX_ALLOC");
  void *M;
  if (Max && *Max && Bytes > strtoull(Max, NULL, 0))
    return 2;
  M = malloc(Bytes);
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
static void logLine(const char *Format, ...);
CUresult cuMemsetD8Async(CUdeviceptr D, unsigned char V, size_t N, void *S) {
  (void)S;
  memset((void *)(uintptr_t)D, V, N);
  logLine("memset-async %zu bytes to %u", N, (unsigned)V);
  return 0;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr D, CUdeviceptr S, size_t N) {
  memmove((void *)(uintptr_t)D, (const void *)(uintptr_t)S, N);
  return 0;
}
CUresult cuMemGetInfo_v2(size_t *Free, size_t *Total) {
  const char *F = getenv("FAKE_CUDA_FREE_MEMORY");
  *Total = (size_t)1 << 30;
  *Free = F && *F ? (size_t)strtoull(F, NULL, 0) : *Total;
  return 0;
}

static void logLine(const char *Format, ...);
static int logModules(void) {
  const char *L = getenv("FAKE_CUDA_LOG_MODULES");
  return L && *L;
}

/* A module is its image, its instance number and the variables a caller
   asked for; a function is its name (first, so that the handle reads as
   the name), its module and its dynamic shared memory limit. Names have any
   length: fused kernels' names are long. */
typedef struct FakeVariable {
  struct FakeVariable *Next;
  char *Name;
  unsigned char *Data;
  size_t Bytes;
} FakeVariable;
typedef struct {
  int Id;
  char *Image;
  FakeVariable *Variables;
} FakeModule;
typedef struct {
  char *Name;
  FakeModule *Mod;
  unsigned MaxDynamicSmem;
} FakeFunction;
static int ModulesLoaded;

static unsigned staticSmem(void) {
  const char *S = getenv("FAKE_CUDA_STATIC_SMEM");
  return S && *S ? (unsigned)strtoul(S, NULL, 0) : 0;
}

CUresult cuModuleLoadDataEx(void **M, const void *Image, unsigned N, int *Opts,
                            void **Vals) {
  FakeModule *Mod;
  (void)N;
  (void)Opts;
  (void)Vals;
  if (strstr((const char *)Image, ".version") == NULL)
    return 218; /* CUDA_ERROR_INVALID_PTX */
  Mod = calloc(1, sizeof(FakeModule));
  if (!Mod)
    return 2;
  Mod->Id = ++ModulesLoaded;
  Mod->Image = strdup((const char *)Image);
  if (logModules())
    logLine("module-load %d", Mod->Id);
  *M = Mod;
  return 0;
}
CUresult cuModuleUnload(void *M) {
  FakeModule *Mod = (FakeModule *)M;
  FakeVariable *V = Mod->Variables;
  if (logModules())
    logLine("module-unload %d", Mod->Id);
  while (V) {
    FakeVariable *Next = V->Next;
    free(V->Name);
    free(V->Data);
    free(V);
    V = Next;
  }
  free(Mod->Image);
  free(Mod);
  return 0;
}
CUresult cuModuleGetFunction(void **F, void *M, const char *Name) {
  FakeModule *Mod = (FakeModule *)M;
  FakeFunction *Fn;
  if (strstr(Mod->Image, Name) == NULL)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  Fn = calloc(1, sizeof(FakeFunction));
  if (!Fn)
    return 2;
  Fn->Name = strdup(Name);
  if (!Fn->Name) {
    free(Fn);
    return 2;
  }
  Fn->Mod = Mod;
  Fn->MaxDynamicSmem = 48 * 1024 - staticSmem();
  *F = Fn;
  return 0;
}

static int isNameChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_' || C == '$' || C == '.';
}

/* The bytes of a module-scope `.global` or `.const` variable Name declared
   in Image (`.const .align 4 .f32 c[4][8];`), or 0 when there is none. */
static size_t declaredBytes(const char *Image, const char *Name) {
  size_t Len = strlen(Name);
  const char *P = Image;
  while ((P = strstr(P, Name)) != NULL) {
    const char *Start = P, *Stmt, *Q;
    size_t Elem = 0, Count = 1;
    P += Len;
    if ((Start > Image && isNameChar(Start[-1])) || isNameChar(*P))
      continue;
    /* The statement it ends: back to the previous ';', '{' or '}'. */
    for (Stmt = Start; Stmt > Image && !strchr(";{}", Stmt[-1]); --Stmt)
      ;
    for (Q = Stmt; Q < Start; ++Q) {
      if (*Q != '.' || (Q > Stmt && isNameChar(Q[-1])))
        continue;
      if (!strncmp(Q, ".entry", 6) || !strncmp(Q, ".func", 5) ||
          !strncmp(Q, ".param", 6) || !strncmp(Q, ".reg", 4)) {
        Elem = 0;
        break;
      }
      if ((!strncmp(Q, ".const", 6) || !strncmp(Q, ".global", 7)) && !Elem)
        Elem = 1; /* A variable; its type follows. */
      else if (Elem && strchr("bsuf", Q[1]) && Q[2] >= '1' && Q[2] <= '9')
        Elem = (size_t)strtoul(Q + 2, NULL, 10) / 8;
    }
    if (!Elem)
      continue;
    for (Q = P; *Q == '[' && strchr(Q, ']'); Q = strchr(Q, ']') + 1)
      Count *= (size_t)strtoul(Q + 1, NULL, 10);
    return Elem * Count;
  }
  return 0;
}

/* The module's copy of variable Name, allocated zeroed on first use. */
static FakeVariable *variable(FakeModule *Mod, const char *Name) {
  FakeVariable *V;
  size_t Bytes;
  for (V = Mod->Variables; V; V = V->Next)
    if (strcmp(V->Name, Name) == 0)
      return V;
  Bytes = declaredBytes(Mod->Image, Name);
  if (!Bytes)
    return NULL;
  V = calloc(1, sizeof(FakeVariable));
  if (!V)
    return NULL;
  V->Name = strdup(Name);
  V->Data = calloc(1, Bytes);
  V->Bytes = Bytes;
  V->Next = Mod->Variables;
  Mod->Variables = V;
  return V;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *P, size_t *Bytes, void *M,
                              const char *Name) {
  FakeVariable *V = variable((FakeModule *)M, Name);
  if (!V)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  if (P)
    *P = (CUdeviceptr)(uintptr_t)V->Data;
  if (Bytes)
    *Bytes = V->Bytes;
  return 0;
}
CUresult cuFuncGetAttribute(int *V, int Attr, void *F) {
  const FakeFunction *Fn = (const FakeFunction *)F;
  switch (Attr) {
  case 0: /* max threads per block */
    *V = 1024;
    break;
  case 1: /* static shared memory */
    *V = (int)staticSmem();
    break;
  case 4: /* registers */
    *V = 16;
    break;
  case 8: /* max dynamic shared memory */
    *V = (int)Fn->MaxDynamicSmem;
    break;
  default:
    *V = 0;
  }
  return 0;
}
CUresult cuFuncSetAttribute(void *F, int Attr, int V) {
  FakeFunction *Fn = (FakeFunction *)F;
  if (Attr != 8)
    return 0;
  if (V < 0 || (unsigned)V + staticSmem() > 232448)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  Fn->MaxDynamicSmem = (unsigned)V;
  logLine("func-attribute %s max-dynamic-smem %d", Fn->Name, V);
  return 0;
}
/* One kernel run, with its arguments decoded (and so copied) when it is
   enqueued. Kernels take (src, dst, n): fake_copy copies n bytes, fake_half
   the first n / 2, fake_add adds n bytes of src to dst (mod 256); further
   parameters (probe buffers) are ignored. fake_probe takes (buf, n, value)
   and stores the u64 value at byte n of buf. fake_dyn takes (src, dst, n,
   buf, capacity): it adds as fake_add does and writes a warp-level probe map
   of dynamic capacity with slot counts and an overflow counter
   (docs/manifest.md) into buf: the writer of slot s (a warp of the launch,
   s = block * warps per block + warp) tries to save (s % 3) * src[0]
   records, so with src[0] == 1 at most 2. Each try takes the next index of
   its slot from the slot's count, as an atomicAdd would, saves the 8-byte
   record {u32 s, u32 index} when the index is below capacity and adds 1 to
   the overflow counter otherwise; the counts and the counter accumulate
   over launches, as a real kernel's would. fake_const takes (src, dst, n)
   and adds to each of the n bytes of src the byte of its module's variable
   `coeffs` (a `.const` array) at the same index modulo its size, writing
   dst. Any other kernel does nothing. */
typedef struct {
  const char *Name; /* The function's, which lives as long as the driver. */
  int Module;
  int Kind; /* 0: nothing, 1: copy, 2: half, 3: add, 4: probe, 5: dyn,
               6: const */
  CUdeviceptr Src, Dst, Buf;
  unsigned N, Capacity;
  unsigned long long Value;
  unsigned GX, GY, GZ, BX, BY, BZ;
  const FakeVariable *Coeffs;
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

/* With $FAKE_CUDA_LOG_PARAMS set to parameter indices ("3,4,5"), a line
   per kernel launch after its launch line: its grid, block and dynamic
   shared memory, and those parameters read as u32. */
static void logShape(unsigned GX, unsigned GY, unsigned GZ, unsigned BX,
                     unsigned BY, unsigned BZ, unsigned Smem, void **Params) {
  const char *List = getenv("FAKE_CUDA_LOG_PARAMS");
  char Line[1024];
  int N;
  if (!List || !*List)
    return;
  N = snprintf(Line, sizeof(Line), "  grid %u,%u,%u block %u,%u,%u smem %u",
               GX, GY, GZ, BX, BY, BZ, Smem);
  while (*List && N > 0 && (size_t)N < sizeof(Line)) {
    char *End;
    unsigned long I = strtoul(List, &End, 10), V;
    if (End == List)
      break;
    V = *(const unsigned *)Params[I];
    N += snprintf(Line + N, sizeof(Line) - (size_t)N, " %lu=%lu", I, V);
    List = *End == ',' ? End + 1 : End;
  }
  logLine("%s", Line);
}

static void decode(const void *F, unsigned GX, unsigned GY, unsigned GZ,
                   unsigned BX, unsigned BY, unsigned BZ, void **Params,
                   FakeLaunch *L) {
  const FakeFunction *Fn = (const FakeFunction *)F;
  const char *Name = Fn->Name;
  memset(L, 0, sizeof(*L));
  L->Name = Name;
  L->Module = Fn->Mod->Id;
  L->GX = GX;
  L->GY = GY;
  L->GZ = GZ;
  L->BX = BX;
  L->BY = BY;
  L->BZ = BZ;
  if (strcmp(Name, "fake_copy") == 0)
    L->Kind = 1;
  else if (strcmp(Name, "fake_half") == 0)
    L->Kind = 2;
  else if (strcmp(Name, "fake_add") == 0)
    L->Kind = 3;
  else if (strcmp(Name, "fake_probe") == 0)
    L->Kind = 4;
  else if (strcmp(Name, "fake_dyn") == 0)
    L->Kind = 5;
  else if (strcmp(Name, "fake_const") == 0)
    L->Kind = 6;
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
  if (L->Kind == 5) {
    L->Buf = *(CUdeviceptr *)Params[3];
    L->Capacity = *(unsigned *)Params[4];
  }
  if (L->Kind == 6)
    L->Coeffs = variable(Fn->Mod, "coeffs");
}

/* fake_dyn's probe map (see FakeLaunch). */
static void runDynamicProbe(const FakeLaunch *L) {
  unsigned long long Blocks = (unsigned long long)L->GX * L->GY * L->GZ;
  unsigned long long Warps = ((unsigned long long)L->BX * L->BY * L->BZ + 31) / 32;
  unsigned long long Slots = Blocks * Warps, S;
  unsigned char *Buf = (unsigned char *)(uintptr_t)L->Buf;
  unsigned char Scale = *(const unsigned char *)(uintptr_t)L->Src;
  unsigned long long RecordBytes = Slots * L->Capacity * 8;
  unsigned long long CountsAt = (RecordBytes + 7) / 8 * 8;
  unsigned long long OverflowAt = CountsAt + (Slots * 4 + 7) / 8 * 8;
  unsigned long long Overflow;
  memcpy(&Overflow, Buf + OverflowAt, 8);
  for (S = 0; S < Slots; ++S) {
    unsigned Tries = (unsigned)(S % 3) * Scale, T, Count;
    for (T = 0; T < Tries; ++T) {
      memcpy(&Count, Buf + CountsAt + 4 * S, 4);
      if (Count < L->Capacity) {
        unsigned Record[2];
        Record[0] = (unsigned)S;
        Record[1] = Count;
        memcpy(Buf + (S * L->Capacity + Count) * 8, Record, 8);
      } else {
        ++Overflow;
      }
      ++Count;
      memcpy(Buf + CountsAt + 4 * S, &Count, 4);
    }
  }
  memcpy(Buf + OverflowAt, &Overflow, 8);
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
  case 5:
    for (I = 0; I < L->N; ++I)
      Dst[I] = (unsigned char)(Dst[I] + Src[I]);
    runDynamicProbe(L);
    break;
  case 6:
    for (I = 0; I < L->N; ++I)
      Dst[I] =
          (unsigned char)(Src[I] + (L->Coeffs
                                        ? L->Coeffs->Data[I % L->Coeffs->Bytes]
                                        : 0));
    break;
  default:
    break;
  }
}

/* The driver's checks: at most 1024 threads, and no more dynamic shared
   memory than the function's limit (48 KiB less its static shared memory
   unless raised by cuFuncSetAttribute). */
static int validLaunch(const void *F, unsigned BX, unsigned BY, unsigned BZ,
                       unsigned Smem) {
  const FakeFunction *Fn = (const FakeFunction *)F;
  return (unsigned long long)BX * BY * BZ <= 1024 && Smem <= Fn->MaxDynamicSmem;
}

CUresult cuLaunchKernel(void *F, unsigned GX, unsigned GY, unsigned GZ,
                        unsigned BX, unsigned BY, unsigned BZ, unsigned Smem,
                        void *Stream, void **Params, void **Extra) {
  FakeLaunch L;
  (void)Stream;
  (void)Extra;
  if (!validLaunch(F, BX, BY, BZ, Smem))
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  decode(F, GX, GY, GZ, BX, BY, BZ, Params, &L);
  if (logModules() && L.Kind == 5)
    logLine("launch %s module %d capacity %u", L.Name, L.Module, L.Capacity);
  else if (logModules())
    logLine("launch %s module %d", L.Name, L.Module);
  else
    logLine("launch %s", L.Name);
  logShape(GX, GY, GZ, BX, BY, BZ, Smem, Params);
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
  if (!validLaunch(P->Func, P->BX, P->BY, P->BZ, P->Smem))
    return 1;
  Nodes = realloc(G->Nodes, (G->Count + 1) * sizeof(FakeLaunch));
  if (!Nodes)
    return 2;
  G->Nodes = Nodes;
  decode(P->Func, P->GX, P->GY, P->GZ, P->BX, P->BY, P->BZ, P->Params,
         &G->Nodes[G->Count]);
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
