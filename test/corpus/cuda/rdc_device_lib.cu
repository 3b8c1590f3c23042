// Separate compilation (-rdc=true), the library half: device functions and
// device/constant variables with external linkage that rdc_kernels.cu uses.
// Its PTX has no kernels; ptxas must assemble it with -c (relocatable).
//
// Exercises: `.visible .func` definitions that are not inlined into any
// kernel, `.visible .global` / `.visible .const` variables, an
// extern "C" function, a function returning a struct by value (.param
// .align .b8 func_retval0[N]), and a recursive function.
#include <cstdint>

struct Stats {
  float mean;
  float m2;
  int count;
};

__device__ float g_scale = 1.0f;
__device__ unsigned long long g_counter;
__device__ int g_table[64];
__constant__ float c_coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f};

__device__ float poly(float x) {
  float r = 0.0f;
#pragma unroll
  for (int k = 7; k >= 0; --k)
    r = fmaf(r, x, c_coeffs[k]);
  return r * g_scale;
}

__device__ Stats welford_push(Stats s, float x) {
  s.count += 1;
  float delta = x - s.mean;
  s.mean += delta / static_cast<float>(s.count);
  s.m2 += delta * (x - s.mean);
  return s;
}

extern "C" __device__ unsigned long long lib_ticket(unsigned inc) {
  return atomicAdd(&g_counter, static_cast<unsigned long long>(inc));
}

__device__ int gcd_rec(int a, int b) { return b == 0 ? a : gcd_rec(b, a % b); }
