// Separate compilation (-rdc=true), the kernel half: calls device functions
// and uses device/constant variables that rdc_device_lib.cu defines.
// Its PTX declares them `.extern .func` / `.extern .global` /
// `.extern .const`; ptxas must assemble it with -c (relocatable), and
// nvlink would resolve the references.
//
// Exercises: `.extern .func` prototypes with .param lists and struct return
// values, `.extern .global` / `.extern .const` arrays and scalars, call.uni
// with prototypes across translation units, a file-local `.global`
// variable next to the externs, and a device-side kernel launch (dynamic
// parallelism, which needs -rdc=true: `.extern .func`
// __cudaCDP2GetParameterBufferV2 / __cudaCDP2LaunchDeviceV2).
#include <cstdint>

struct Stats {
  float mean;
  float m2;
  int count;
};

extern __device__ float g_scale;
extern __device__ unsigned long long g_counter;
extern __device__ int g_table[64];
extern __constant__ float c_coeffs[8];
extern __device__ float poly(float x);
extern __device__ Stats welford_push(Stats s, float x);
extern "C" __device__ unsigned long long lib_ticket(unsigned inc);
extern __device__ int gcd_rec(int a, int b);

__device__ int local_hits;

__global__ void rdc_poly_stats(const float *__restrict__ x, float *__restrict__ y,
                               float *__restrict__ stats_out, int n) {
  Stats s{0.0f, 0.0f, 0};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = poly(x[i]) + c_coeffs[i % 8];
    y[i] = v;
    s = welford_push(s, v);
  }
  float *o = stats_out + 3 * (blockIdx.x * blockDim.x + threadIdx.x);
  o[0] = s.mean;
  o[1] = s.count > 1 ? s.m2 / (s.count - 1) : 0.0f;
  o[2] = g_scale;
}

__global__ void rdc_tickets(const int *__restrict__ a, const int *__restrict__ b,
                            unsigned long long *__restrict__ tickets, int *__restrict__ g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int d = gcd_rec(a[i], b[i]);
  g[i] = d + g_table[d & 63];
  tickets[i] = lib_ticket(static_cast<unsigned>(d)) + g_counter;
  if (d == 1)
    atomicAdd(&local_hits, 1);
}

// Dynamic parallelism: one thread per block launches a child grid over the
// block's slice.
__global__ void rdc_scale_child(float *__restrict__ y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = poly(y[i]) * s;
}

__global__ void rdc_launch_children(float *__restrict__ y, int per_block, int n) {
  if (threadIdx.x == 0) {
    int begin = blockIdx.x * per_block;
    int count = min(per_block, n - begin);
    if (count > 0)
      rdc_scale_child<<<(count + 127) / 128, 128>>>(y + begin, g_scale, count);
  }
}
