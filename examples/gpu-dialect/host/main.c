/*===- main.c - Calls pair.mlir's @forward as an ML framework would -------===//
//
// Usage: PROGRAM OUT_DIR [SEED]
//
// Fills x (n = 135000 floats in (0, 1)) and in (528 x 256 floats in
// [-1, 1)) from SEED (default 1) with a 64-bit linear congruential generator
// whose values convert to floats exactly, so that every build makes the
// same inputs; copies them to device buffers of its own; calls pair.mlir's
// @forward through its C interface (_mlir_ciface_forward, memrefs as
// descriptors); copies x and sums back and writes OUT_DIR/x0 and OUT_DIR/in
// (the inputs) and OUT_DIR/x and OUT_DIR/sums (the outputs) as raw float32.
// sums starts as NaNs (all bits set), so a block that writes nothing shows.
// Linked with the lowered @forward and mgpu.c (examples/gpu-dialect/run.sh).
//
//===----------------------------------------------------------------------===*/

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pair.mlir's sizes: @forward launches 528 blocks of 256 threads. */
enum { N = 135000, GRID = 528, M = GRID * 256 };

/* A memref<?xf32> descriptor, as MLIR lays it out. */
typedef struct {
  float *Allocated;
  float *Aligned;
  int64_t Offset;
  int64_t Sizes[1];
  int64_t Strides[1];
} MemRef1D;

void _mlir_ciface_forward(float R, MemRef1D *X, int64_t Count, MemRef1D *In,
                          MemRef1D *Sums);

/* mgpu.c. */
void *mgpuMemAlloc(uint64_t Bytes, void *Stream, bool IsHostShared);
void mgpuMemFree(void *Ptr, void *Stream);
void copyToDevice(void *Device, const void *Host, size_t Bytes);
void copyToHost(void *Host, const void *Device, size_t Bytes);

/* The top 24 bits of the next state (Knuth's MMIX constants). */
static uint32_t next24(uint64_t *State) {
  *State = *State * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(*State >> 40);
}

static MemRef1D deviceBuffer(int64_t Count) {
  float *P = mgpuMemAlloc((uint64_t)Count * sizeof(float), NULL, false);
  MemRef1D M = {P, P, 0, {Count}, {1}};
  return M;
}

static void writeFile(const char *Dir, const char *Name, const float *Data,
                      size_t Count) {
  char Path[4096];
  FILE *F;
  snprintf(Path, sizeof(Path), "%s/%s", Dir, Name);
  F = fopen(Path, "wb");
  if (!F || fwrite(Data, sizeof(float), Count, F) != Count || fclose(F)) {
    fprintf(stderr, "main: cannot write %s\n", Path);
    exit(1);
  }
}

int main(int Argc, char **Argv) {
  static float X0[N], X[N], In[M], Sums[GRID];
  const float R = 3.7f;
  uint64_t State;
  MemRef1D DX, DIn, DSums;
  size_t I;
  if (Argc < 2 || Argc > 3) {
    fprintf(stderr, "usage: %s OUT_DIR [SEED]\n", Argv[0]);
    return 2;
  }
  State = Argc == 3 ? strtoull(Argv[2], NULL, 10) : 1;
  /* (k | 1) / 2^24 and (k - 2^23) / 2^23 for a 24-bit k: exact floats. */
  for (I = 0; I < N; ++I)
    X0[I] = (float)(next24(&State) | 1) * 0x1p-24f;
  for (I = 0; I < M; ++I)
    In[I] = (float)((int32_t)next24(&State) - (1 << 23)) * 0x1p-23f;
  memset(Sums, 0xff, sizeof(Sums));

  DX = deviceBuffer(N);
  DIn = deviceBuffer(M);
  DSums = deviceBuffer(GRID);
  copyToDevice(DX.Aligned, X0, sizeof(X0));
  copyToDevice(DIn.Aligned, In, sizeof(In));
  copyToDevice(DSums.Aligned, Sums, sizeof(Sums));
  /* Both launches are synchronous: the results are there on return. */
  _mlir_ciface_forward(R, &DX, N, &DIn, &DSums);
  copyToHost(X, DX.Aligned, sizeof(X));
  copyToHost(Sums, DSums.Aligned, sizeof(Sums));
  mgpuMemFree(DX.Allocated, NULL);
  mgpuMemFree(DIn.Allocated, NULL);
  mgpuMemFree(DSums.Allocated, NULL);

  writeFile(Argv[1], "x0", X0, N);
  writeFile(Argv[1], "in", In, M);
  writeFile(Argv[1], "x", X, N);
  writeFile(Argv[1], "sums", Sums, GRID);
  printf("forward(r = %g, n = %d): x[0] %.9g -> %.9g, sums[0] %.9g; wrote "
         "%s/x0, in, x, sums\n",
         (double)R, N, (double)X0[0], (double)X[0], (double)Sums[0], Argv[1]);
  return 0;
}
