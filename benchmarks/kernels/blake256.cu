// BLAKE-256 (the SHA-3 finalist, version 1.3: 14 rounds, 32-bit words, no
// salt) of an 80-byte block header per nonce, with the real IV (SHA-256's),
// the 16 constants from the digits of pi and the sigma permutations. Part of
// the project's own benchmark kernel suite; HFuse's Blake256 crypto kernel.
//
// Header of thread g (80 bytes): bytes 0..75 are header bytes 0..75, bytes
// 76..79 are nonce = start_nonce + g (32-bit, wraps) in little-endian order,
// as in sha256d.cu and blake2b.cu.
// digest = BLAKE-256(header): message words big-endian; block 1 is bytes
// 0..63 with counter t = 512 bits; block 2 is bytes 64..79, the 0x80 padding
// byte, zeros, the 0x01 bit that marks BLAKE-256 (last byte before the length)
// and the 64-bit big-endian length 640, with counter t = 640. Both blocks are
// compressed in the kernel (no host-side midstate).
//
// Parameters:
//   header       const unsigned int*  [20], the 80 header bytes
//                                     (bytes 76..79 are ignored)
//   start_nonce  unsigned int
//   num_nonces   unsigned int
//   out          unsigned int*        [num_nonces][8]; the 32 digest bytes of
//                                     nonce start_nonce + i at out[8i]
//                                     (big-endian words: byte order of the
//                                     BLAKE reference's digest)
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of
// ceil(num_nonces / 256) blocks, no dynamic shared memory.
//
// Problem size that fills an H100: num_nonces = 2^26 (262144 blocks);
// compute bound, 2 GiB of digests written.

__device__ __forceinline__ unsigned int rotr32(unsigned int x, int n) {
  return __funnelshift_r(x, x, n);
}

__device__ __forceinline__ unsigned int bswap32(unsigned int x) {
  return __byte_perm(x, 0, 0x0123);
}

// The BLAKE-256 G function on column or diagonal (a, b, c, d) with message
// and constant indices x = sigma_r(2i), y = sigma_r(2i + 1); kc holds the 16
// constants.
__device__ __forceinline__ void mixG(unsigned int &a, unsigned int &b,
                                     unsigned int &c, unsigned int &d,
                                     const unsigned int m[16],
                                     const unsigned int kc[16], int x, int y) {
  a = a + b + (m[x] ^ kc[y]);
  d = rotr32(d ^ a, 16);
  c = c + d;
  b = rotr32(b ^ c, 12);
  a = a + b + (m[y] ^ kc[x]);
  d = rotr32(d ^ a, 8);
  c = c + d;
  b = rotr32(b ^ c, 7);
}

// One BLAKE-256 compression (salt 0) of the 16 big-endian message words m
// into h, with the bit counter t (its high word is 0 here).
__device__ __forceinline__ void blake256Compress(unsigned int h[8],
                                                 const unsigned int m[16],
                                                 unsigned int t) {
  // The 16 constants: the first digits of pi.
  constexpr unsigned int kC[16] = {
      0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0,
      0x082EFA98, 0xEC4E6C89, 0x452821E6, 0x38D01377, 0xBE5466CF, 0x34E90C6C,
      0xC0AC29B7, 0xC97C50DD, 0x3F84D5B5, 0xB5470917};
  // Rounds 10..13 reuse rows 0..3. Indexed only with compile-time constants
  // after unrolling, so it folds away.
  constexpr unsigned char kSigma[10][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
      {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
      {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
      {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
      {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};

  unsigned int v[16];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    v[i] = h[i];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    v[i + 8] = kC[i]; // salt 0
  v[12] = t ^ kC[4];
  v[13] = t ^ kC[5];
  v[14] = kC[6]; // high word of t is 0
  v[15] = kC[7];

#pragma unroll
  for (int r = 0; r < 14; ++r) {
    const unsigned char *s = kSigma[r % 10];
    mixG(v[0], v[4], v[8], v[12], m, kC, s[0], s[1]);
    mixG(v[1], v[5], v[9], v[13], m, kC, s[2], s[3]);
    mixG(v[2], v[6], v[10], v[14], m, kC, s[4], s[5]);
    mixG(v[3], v[7], v[11], v[15], m, kC, s[6], s[7]);
    mixG(v[0], v[5], v[10], v[15], m, kC, s[8], s[9]);
    mixG(v[1], v[6], v[11], v[12], m, kC, s[10], s[11]);
    mixG(v[2], v[7], v[8], v[13], m, kC, s[12], s[13]);
    mixG(v[3], v[4], v[9], v[14], m, kC, s[14], s[15]);
  }

#pragma unroll
  for (int i = 0; i < 8; ++i)
    h[i] ^= v[i] ^ v[i + 8]; // salt 0
}

extern "C" __global__ void __launch_bounds__(256)
    blake256(const unsigned int *__restrict__ header, unsigned int start_nonce,
             unsigned int num_nonces, unsigned int *__restrict__ out) {
  const unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= num_nonces)
    return;
  const unsigned int nonce = start_nonce + gid;

  // IV: the same words as SHA-256's.
  unsigned int h[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                       0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
  unsigned int m[16];

  // Block 1: header bytes 0..63, 512 message bits so far.
#pragma unroll
  for (int i = 0; i < 16; ++i)
    m[i] = bswap32(header[i]);
  blake256Compress(h, m, 512);

  // Block 2: header bytes 64..79 (nonce last), the padding 1 bit, zeros, the
  // BLAKE-256 0x01 bit and the 640-bit length; 640 message bits in all.
  m[0] = bswap32(header[16]);
  m[1] = bswap32(header[17]);
  m[2] = bswap32(header[18]);
  m[3] = bswap32(nonce);
  m[4] = 0x80000000u;
#pragma unroll
  for (int i = 5; i < 13; ++i)
    m[i] = 0;
  m[13] = 1;
  m[14] = 0;
  m[15] = 640;
  blake256Compress(h, m, 640);

  // Store big-endian so that memory holds the digest bytes in order.
#pragma unroll
  for (int i = 0; i < 8; ++i)
    out[(unsigned long long)gid * 8 + i] = bswap32(h[i]);
}
