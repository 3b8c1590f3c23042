// Bilinear 2-D upsampling of NCHW float tensors with align_corners = false,
// matching PyTorch's upsample_bilinear2d (no explicit scale factors: the
// scale is input size / output size). Part of the project's own benchmark
// kernel suite.
//
// For every output element (n, c, oy, ox):
//   sy = max((IH / OH) * (oy + 0.5) - 0.5, 0),  y0 = (int)sy,
//   y1 = y0 + (y0 < IH - 1 ? 1 : 0),            ly = sy - y0
//   sx, x0, x1, lx likewise along the width
//   out = (1 - ly) * ((1 - lx) * in[y0][x0] + lx * in[y0][x1])
//       +      ly  * ((1 - lx) * in[y1][x0] + lx * in[y1][x1])
// all in float arithmetic (IH / OH is a float division).
//
// Parameters:
//   input    const float*  [N][C][IH][IW]
//   batch    int           N
//   channels int           C
//   in_h     int           IH
//   in_w     int           IW
//   out_h    int           OH
//   out_w    int           OW
//   output   float*        [N][C][OH][OW]
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of
// ceil(N * C * OH * OW / 256) blocks (grid-stride loop, so fewer is fine), no
// dynamic shared memory. One thread per output element.
//
// Problem size that fills an H100: N = 32, C = 64, 64x64 -> 128x128
// (33.6M outputs, 134 MB written).

__device__ __forceinline__ float sourceIndex(float scale, int dst) {
  // align_corners = false: pixel centres map onto pixel centres; clamp at 0
  // because the first output centres fall left of the first input centre.
  const float src = scale * ((float)dst + 0.5f) - 0.5f;
  return src < 0.0f ? 0.0f : src;
}

extern "C" __global__ void upsample_bilinear2d(const float *__restrict__ input,
                                               int batch, int channels,
                                               int in_h, int in_w, int out_h,
                                               int out_w,
                                               float *__restrict__ output) {
  const float scale_h = (float)in_h / (float)out_h;
  const float scale_w = (float)in_w / (float)out_w;
  const long long total = (long long)batch * channels * out_h * out_w;

  for (long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       index < total; index += (long long)gridDim.x * blockDim.x) {
    const int ox = (int)(index % out_w);
    const long long t0 = index / out_w;
    const int oy = (int)(t0 % out_h);
    const long long nc = t0 / out_h;

    const float sy = sourceIndex(scale_h, oy);
    const int y0 = (int)sy;
    const int yp = (y0 < in_h - 1) ? 1 : 0;
    const float ly1 = sy - (float)y0;
    const float ly0 = 1.0f - ly1;

    const float sx = sourceIndex(scale_w, ox);
    const int x0 = (int)sx;
    const int xp = (x0 < in_w - 1) ? 1 : 0;
    const float lx1 = sx - (float)x0;
    const float lx0 = 1.0f - lx1;

    const float *plane = input + nc * in_h * in_w;
    const float *row0 = plane + (long long)y0 * in_w;
    const float *row1 = row0 + yp * in_w;
    output[index] = ly0 * (lx0 * row0[x0] + lx1 * row0[x0 + xp]) +
                    ly1 * (lx0 * row1[x0] + lx1 * row1[x0 + xp]);
  }
}
