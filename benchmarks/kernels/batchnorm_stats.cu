// Batch-norm "collect statistics" over an NCHW float tensor: per-channel mean
// and biased (population) variance, as used by training-mode batch norm.
// Part of the project's own benchmark kernel suite.
//
// For every channel c, over all n in [0, N) and p in [0, H * W):
//   mean[c] = sum x[n][c][p] / (N * H * W)
//   var[c]  = sum (x[n][c][p] - mean[c])^2 / (N * H * W)   (biased, no eps)
//
// Each thread runs Welford's online update over a strided slice of the
// channel; the per-thread (count, mean, M2) triples are then merged with
// Chan's pairwise formula in a shared-memory tree reduction separated by
// __syncthreads().
//
// Parameters:
//   input     const float*  [N][C][H][W]
//   batch     int           N
//   channels  int           C
//   spatial   int           H * W
//   mean      float*        [C]
//   var       float*        [C]
//
// Launch shape: 1-D blocks of exactly 256 threads (BLOCK below; the tree
// reduction relies on it), grid of C blocks (one block per channel), no
// dynamic shared memory (3 KB static).
//
// Counts are kept in float, so N * H * W must stay below 2^24.
//
// Problem size that fills an H100: N = 64, C = 512, H = W = 28
// (102.8 MB read, 50176 elements per channel, 512 blocks).

#define BLOCK 256

struct WelfordState {
  float count;
  float mean;
  float m2;
};

// Chan et al. parallel merge of two partial Welford states.
__device__ __forceinline__ WelfordState welfordMerge(WelfordState a,
                                                     WelfordState b) {
  const float count = a.count + b.count;
  if (count == 0.0f)
    return a;
  const float delta = b.mean - a.mean;
  const float nb_over_n = b.count / count;
  WelfordState r;
  r.count = count;
  r.mean = a.mean + delta * nb_over_n;
  r.m2 = a.m2 + b.m2 + delta * delta * a.count * nb_over_n;
  return r;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    batchnorm_collect_stats(const float *__restrict__ input, int batch,
                            int channels, int spatial, float *__restrict__ mean,
                            float *__restrict__ var) {
  __shared__ float s_count[BLOCK];
  __shared__ float s_mean[BLOCK];
  __shared__ float s_m2[BLOCK];

  const int c = blockIdx.x;
  const int tid = threadIdx.x;

  WelfordState st = {0.0f, 0.0f, 0.0f};
  for (int n = 0; n < batch; ++n) {
    const float *plane = input + ((long long)n * channels + c) * spatial;
    // Consecutive threads read consecutive elements: coalesced.
    for (int p = tid; p < spatial; p += BLOCK) {
      const float x = plane[p];
      st.count += 1.0f;
      const float delta = x - st.mean;
      st.mean += delta / st.count;
      st.m2 += delta * (x - st.mean);
    }
  }

  s_count[tid] = st.count;
  s_mean[tid] = st.mean;
  s_m2[tid] = st.m2;
  __syncthreads();

  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      WelfordState a = {s_count[tid], s_mean[tid], s_m2[tid]};
      WelfordState b = {s_count[tid + stride], s_mean[tid + stride],
                        s_m2[tid + stride]};
      WelfordState r = welfordMerge(a, b);
      s_count[tid] = r.count;
      s_mean[tid] = r.mean;
      s_m2[tid] = r.m2;
    }
    __syncthreads();
  }

  if (tid == 0) {
    const float count = s_count[0];
    mean[c] = s_mean[0];
    var[c] = count > 0.0f ? s_m2[0] / count : 0.0f;
  }
}
