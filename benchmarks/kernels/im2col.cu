// im2col for NCHW convolution, in the style of the Caffe / PyTorch im2col
// kernel. Part of the project's own benchmark kernel suite.
//
// Computes, for a batch of images `data_im` of shape [N][C][H][W] (float),
// the column buffer `data_col` of shape [N][C * KH * KW][HO * WO] with
//
//   data_col[n][(c * KH + i) * KW + j][ho * WO + wo] =
//       data_im[n][c][h][w]   if 0 <= h < H and 0 <= w < W, else 0
//   where h = ho * stride_h - pad_h + i * dilation_h
//         w = wo * stride_w - pad_w + j * dilation_w
//
// and HO = (H + 2 * pad_h - (dilation_h * (KH - 1) + 1)) / stride_h + 1,
//     WO = (W + 2 * pad_w - (dilation_w * (KW - 1) + 1)) / stride_w + 1
// (computed by the host and passed in as height_col / width_col).
//
// Parameters:
//   data_im     const float*  input images, [N][C][H][W]
//   batch       int           N
//   channels    int           C
//   height      int           H
//   width       int           W
//   kernel_h    int           KH
//   kernel_w    int           KW
//   pad_h       int
//   pad_w       int
//   stride_h    int
//   stride_w    int
//   dilation_h  int
//   dilation_w  int
//   height_col  int           HO
//   width_col   int           WO
//   data_col    float*        output, [N][C * KH * KW][HO * WO]
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of
// ceil(N * C * HO * WO / 256) blocks (a grid-stride loop makes any smaller
// grid correct too), no dynamic shared memory. One thread handles one
// (n, c, ho, wo) and writes its KH * KW column entries.
//
// Problem size that fills an H100: N = 16, C = 64, H = W = 56, 3x3 kernel,
// pad 1, stride 1, dilation 1 (HO = WO = 56): 3.2M threads, 12.8 MB read and
// 115.6 MB written.

extern "C" __global__ void
im2col_kernel(const float *__restrict__ data_im, int batch, int channels,
              int height, int width, int kernel_h, int kernel_w, int pad_h,
              int pad_w, int stride_h, int stride_w, int dilation_h,
              int dilation_w, int height_col, int width_col,
              float *__restrict__ data_col) {
  // 64-bit indices: the column buffer easily exceeds 2^31 elements.
  const long long plane_col = (long long)height_col * width_col;
  const long long total = (long long)batch * channels * plane_col;
  const long long kernel_size = (long long)kernel_h * kernel_w;

  for (long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       index < total; index += (long long)gridDim.x * blockDim.x) {
    const int w_out = (int)(index % width_col);
    const long long t0 = index / width_col;
    const int h_out = (int)(t0 % height_col);
    const long long nc = t0 / height_col; // n * C + c
    const int h_in = h_out * stride_h - pad_h;
    const int w_in = w_out * stride_w - pad_w;

    // Column rows for channel c start at c * KH * KW inside image n; with
    // nc = n * C + c that is row nc * KH * KW of the flattened buffer.
    float *col = data_col + nc * kernel_size * plane_col +
                 (long long)h_out * width_col + w_out;
    const float *im = data_im + nc * height * width;

    for (int i = 0; i < kernel_h; ++i) {
      for (int j = 0; j < kernel_w; ++j) {
        const int h = h_in + i * dilation_h;
        const int w = w_in + j * dilation_w;
        *col = (h >= 0 && w >= 0 && h < height && w < width)
                   ? im[(long long)h * width + w]
                   : 0.0f;
        col += plane_col;
      }
    }
  }
}
