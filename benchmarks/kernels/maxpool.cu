// 2-D max pooling forward pass over NCHW float tensors, writing both the
// pooled values and the argmax indices (like PyTorch's max_pool2d_with_indices
// CUDA kernel, dilation 1, floor rounding). Part of the project's own
// benchmark kernel suite.
//
// For every output element (n, c, ho, wo), with hs = ho * stride_h - pad_h
// and ws = wo * stride_w - pad_w:
//   window rows  h in [max(hs, 0), min(hs + KH, H))
//   window cols  w in [max(ws, 0), min(ws + KW, W))
//   output[n][c][ho][wo]  = max over the window of input[n][c][h][w]
//   indices[n][c][ho][wo] = h * W + w of that maximum (flat index inside the
//                           H x W plane, int64 as in PyTorch)
// Ties keep the first element in row-major scan order; a NaN counts as the
// maximum (the last NaN in scan order wins, as in PyTorch). An empty window
// yields -inf and index max(hs, 0) * W + max(ws, 0). The host computes
//   HO = (H + 2 * pad_h - KH) / stride_h + 1, WO likewise.
//
// Parameters:
//   input     const float*  [N][C][H][W]
//   batch     int           N
//   channels  int           C
//   height    int           H
//   width     int           W
//   out_h     int           HO
//   out_w     int           WO
//   kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w  int
//   output    float*        [N][C][HO][WO]
//   indices   long long*    [N][C][HO][WO]
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of
// ceil(N * C * HO * WO / 256) blocks (grid-stride loop, so fewer is fine), no
// dynamic shared memory. One thread per output element.
//
// Problem size that fills an H100: N = 32, C = 64, H = W = 112, 3x3 window,
// stride 2, pad 1 (HO = WO = 56): 6.4M outputs, 103 MB read.

extern "C" __global__ void
maxpool2d_fwd(const float *__restrict__ input, int batch, int channels,
              int height, int width, int out_h, int out_w, int kernel_h,
              int kernel_w, int stride_h, int stride_w, int pad_h, int pad_w,
              float *__restrict__ output, long long *__restrict__ indices) {
  const long long total = (long long)batch * channels * out_h * out_w;
  for (long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       index < total; index += (long long)gridDim.x * blockDim.x) {
    const int wo = (int)(index % out_w);
    const long long t0 = index / out_w;
    const int ho = (int)(t0 % out_h);
    const long long nc = t0 / out_h;

    int hstart = ho * stride_h - pad_h;
    int wstart = wo * stride_w - pad_w;
    const int hend = min(hstart + kernel_h, height);
    const int wend = min(wstart + kernel_w, width);
    hstart = max(hstart, 0);
    wstart = max(wstart, 0);

    const float *plane = input + nc * height * width;
    float maxval = -__int_as_float(0x7f800000); // -inf
    long long maxidx = (long long)hstart * width + wstart;
    for (int h = hstart; h < hend; ++h) {
      for (int w = wstart; w < wend; ++w) {
        const long long idx = (long long)h * width + w;
        const float val = plane[idx];
        // NaN propagates: once maxval is NaN only another NaN replaces it.
        if (val > maxval || isnan(val)) {
          maxval = val;
          maxidx = idx;
        }
      }
    }
    output[index] = maxval;
    indices[index] = maxidx;
  }
}
