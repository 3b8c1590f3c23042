// Bitcoin-style double SHA-256 of an 80-byte block header per nonce, with the
// real FIPS 180-4 constants. Part of the project's own benchmark kernel suite.
//
// Header of thread g (80 bytes): bytes 0..75 are header bytes 0..75, bytes
// 76..79 are nonce = start_nonce + g (32-bit, wraps) in little-endian order,
// as in a Bitcoin block header.
// digest = SHA-256(SHA-256(header)), i.e.
// hashlib.sha256(hashlib.sha256(header).digest()).digest(). Both blocks of
// the first hash and the one block of the second are compressed in the
// kernel (no host-side midstate).
//
// Parameters:
//   header       const unsigned int*  [20], the 80 header bytes
//                                     (bytes 76..79 are ignored)
//   start_nonce  unsigned int
//   num_nonces   unsigned int
//   out          unsigned int*        [num_nonces][8]; the 32 digest bytes of
//                                     nonce start_nonce + i at out[8i]
//                                     (byte order as hashlib prints them)
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

// One SHA-256 compression of the 16 big-endian message words w into state.
__device__ __forceinline__ void sha256Compress(unsigned int state[8],
                                               unsigned int w[16]) {
  constexpr unsigned int kK[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
      0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
      0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
      0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
      0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
      0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
      0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
      0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

  unsigned int a = state[0], b = state[1], c = state[2], d = state[3];
  unsigned int e = state[4], f = state[5], g = state[6], h = state[7];

#pragma unroll
  for (int i = 0; i < 64; ++i) {
    // Rolling 16-word message schedule: w[i % 16] becomes W[i].
    if (i >= 16) {
      const unsigned int w15 = w[(i - 15) % 16];
      const unsigned int w2 = w[(i - 2) % 16];
      const unsigned int s0 = rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3);
      const unsigned int s1 = rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10);
      w[i % 16] += s0 + w[(i - 7) % 16] + s1;
    }
    const unsigned int S1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
    const unsigned int ch = (e & f) ^ (~e & g);
    const unsigned int t1 = h + S1 + ch + kK[i] + w[i % 16];
    const unsigned int S0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
    const unsigned int maj = (a & b) ^ (a & c) ^ (b & c);
    const unsigned int t2 = S0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }

  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

__device__ __forceinline__ void sha256Init(unsigned int state[8]) {
  state[0] = 0x6a09e667;
  state[1] = 0xbb67ae85;
  state[2] = 0x3c6ef372;
  state[3] = 0xa54ff53a;
  state[4] = 0x510e527f;
  state[5] = 0x9b05688c;
  state[6] = 0x1f83d9ab;
  state[7] = 0x5be0cd19;
}

extern "C" __global__ void __launch_bounds__(256)
    sha256d(const unsigned int *__restrict__ header, unsigned int start_nonce,
            unsigned int num_nonces, unsigned int *__restrict__ out) {
  const unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= num_nonces)
    return;
  const unsigned int nonce = start_nonce + gid;

  unsigned int w[16];
  unsigned int state[8];

  // First hash, block 1: header bytes 0..63.
  sha256Init(state);
#pragma unroll
  for (int i = 0; i < 16; ++i)
    w[i] = bswap32(header[i]);
  sha256Compress(state, w);

  // First hash, block 2: header bytes 64..79 (nonce last), then padding and
  // the 640-bit message length.
  w[0] = bswap32(header[16]);
  w[1] = bswap32(header[17]);
  w[2] = bswap32(header[18]);
  w[3] = bswap32(nonce);
  w[4] = 0x80000000u;
#pragma unroll
  for (int i = 5; i < 15; ++i)
    w[i] = 0;
  w[15] = 640;
  sha256Compress(state, w);

  // Second hash: the 32-byte digest, padding, 256-bit length.
#pragma unroll
  for (int i = 0; i < 8; ++i)
    w[i] = state[i];
  w[8] = 0x80000000u;
#pragma unroll
  for (int i = 9; i < 15; ++i)
    w[i] = 0;
  w[15] = 256;
  sha256Init(state);
  sha256Compress(state, w);

  // Store big-endian so that memory holds the digest bytes in order.
#pragma unroll
  for (int i = 0; i < 8; ++i)
    out[(unsigned long long)gid * 8 + i] = bswap32(state[i]);
}
