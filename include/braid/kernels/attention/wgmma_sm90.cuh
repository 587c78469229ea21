// The warpgroup tensor-core primitives of braid's Hopper attention kernel (flash_sm90_kernel.cuh) and of
// the skinny GEMM's wgmma consumer (kernels/skinny/skinny_gemm.cuh, Mma64xN):
// shared-memory matrix descriptors for the 128-byte swizzle that braid's TMA tensor maps write
// (tma_sm90.cuh), and wgmma.mma_async m64n128k16 with fp32 accumulators, both operands from shared
// memory (SS) or A from registers (RS), for fp16 and bf16.
//
// Shared-memory operands are "panels": rows of 64 16-bit elements (128 bytes), 16-byte chunk c of row
// r stored at chunk c ^ (r % 8), panels 1024-byte aligned -- exactly what a TMA box of 64 columns x R
// rows with CU_TENSOR_MAP_SWIZZLE_128B leaves in shared memory. In the descriptor's terms (PTX ISA,
// "Matrix Descriptor Format"; CuTe's make_gmma_desc spells out the same canonical layouts):
//   K-major  (the contraction dimension runs along a row, e.g. Q and K for S = Q.K^T): 8-row groups
//            1024 bytes apart (SBO), the leading offset unused; a 16-deep k-step inside the 128-byte
//            row is +32 bytes on the start address (the hardware applies the swizzle to the address).
//   MN-major (the output dimension runs along a row, e.g. V [keys][dims] for O = P.V): 8-row groups
//            of the contraction dimension 1024 bytes apart (SBO), 64-wide panels of the output
//            dimension LBO bytes apart; a 16-deep k-step is +16 rows = +2048 bytes.
//
// Accumulator layout of m64nN (per warp w of the warpgroup, g = lane / 4, c = 2 * (lane % 4)):
// register 4j + e holds row 16w + g + 8 * (e / 2), column 8j + c + (e % 2) -- the mma.sync m16n8
// C layout repeated over the N/8 column groups, so the probabilities S produces are, packed to 16
// bits in the same order, the register A fragments of the next wgmma (4 registers per k-step).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace braid::attention::wg {

// Descriptor of a K-major operand at shared address `addr` (the rows of this wgmma: 8-row groups
// 1024 bytes apart).
__device__ __forceinline__ uint64_t desc_k_major(uint32_t addr) {
  return uint64_t((addr & 0x3FFFFu) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}
// Descriptor of an MN-major operand: 64-wide panels of the output dimension `panel_bytes` apart.
__device__ __forceinline__ uint64_t desc_mn_major(uint32_t addr, uint32_t panel_bytes) {
  return uint64_t((addr & 0x3FFFFu) >> 4) | (uint64_t((panel_bytes >> 4) & 0x3FFFu) << 16) |
         (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of accumulator registers across the asynchronous MMAs.
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int M, int N>
__device__ __forceinline__ void fence_regs(float (&r)[M][N]) {
#pragma unroll
  for (int i = 0; i < M; ++i) fence_regs(r[i]);
}
template <int N>
__device__ __forceinline__ void fence_regs(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Register-count management of warp-specialized kernels (all threads of a warpgroup).
template <int N>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

#define BRAID_WG_D64                                                                                            \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "  \
  "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define BRAID_WG_D64_OPERANDS(d)                                                                                 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),    \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),     \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),    \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),    \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),    \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),    \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),    \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// D[64 x 128] (+)= A[64 x 16] . B[16 x 128]; A K-major from shared memory, B from shared memory
// (K-major when kTransB == 0, MN-major when 1). accumulate == false overwrites D.
template <class T, int kTransB>
struct Mma64x128;

#define BRAID_WG_DEFINE(TYPE, PTXTYPE)                                                                           \
  template <int kTransB>                                                                                         \
  struct Mma64x128<TYPE, kTransB> {                                                                              \
    static __device__ __forceinline__ void ss(float (&d)[64], uint64_t a, uint64_t b, bool accumulate) {         \
      asm volatile(                                                                                              \
          "{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"                                                             \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTXTYPE "." PTXTYPE " " BRAID_WG_D64                    \
          ", %64, %65, p, 1, 1, 0, %67; }"                                                                       \
          : BRAID_WG_D64_OPERANDS(d)                                                                             \
          : "l"(a), "l"(b), "r"(int(accumulate)), "n"(kTransB));                                                 \
    }                                                                                                            \
    static __device__ __forceinline__ void rs(float (&d)[64], const uint32_t (&a)[4], uint64_t b, bool accumulate) { \
      asm volatile(                                                                                              \
          "{ .reg .pred p; setp.ne.b32 p, %69, 0;\n"                                                             \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTXTYPE "." PTXTYPE " " BRAID_WG_D64                    \
          ", {%64, %65, %66, %67}, %68, p, 1, 1, %70; }"                                                         \
          : BRAID_WG_D64_OPERANDS(d)                                                                             \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(int(accumulate)), "n"(kTransB));             \
    }                                                                                                            \
  };

BRAID_WG_DEFINE(__half, "f16")
BRAID_WG_DEFINE(__nv_bfloat16, "bf16")
#undef BRAID_WG_DEFINE
#undef BRAID_WG_D64_OPERANDS
#undef BRAID_WG_D64

// D[64 x N] += A[64 x 16] . B[16 x N] for the narrow N of braid's skinny GEMM (8, 16, 32, 64), both
// operands from shared memory; kTransA / kTransB = 1: that operand is MN-major (desc_mn_major), else
// K-major. The accumulators are d[j][e] = register 4j + e of the layout above (the mma.sync m16n8
// C layout per 8-column group j), always accumulated into (zero them to start).
template <class T, int N, int kTransA, int kTransB>
struct Mma64xN;

// Per N: the accumulator registers, their operands, and the operand numbers after them.
#define BRAID_WGN_D8 "{%0, %1, %2, %3}"
#define BRAID_WGN_OPS8(d) "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3])
#define BRAID_WGN_SETP8 "%6"
#define BRAID_WGN_TAIL8 ", %4, %5, p, 1, 1, %7, %8; }"
#define BRAID_WGN_D16 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define BRAID_WGN_OPS16(d) \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), \
  "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3])
#define BRAID_WGN_SETP16 "%10"
#define BRAID_WGN_TAIL16 ", %8, %9, p, 1, 1, %11, %12; }"
#define BRAID_WGN_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define BRAID_WGN_OPS32(d) \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), \
  "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
  "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
  "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
#define BRAID_WGN_SETP32 "%18"
#define BRAID_WGN_TAIL32 ", %16, %17, p, 1, 1, %19, %20; }"
#define BRAID_WGN_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
  " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define BRAID_WGN_OPS64(d) \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), \
  "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
  "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
  "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), \
  "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), \
  "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
  "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
  "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#define BRAID_WGN_SETP64 "%34"
#define BRAID_WGN_TAIL64 ", %32, %33, p, 1, 1, %35, %36; }"
#define BRAID_WGN_DEFINE(TYPE, PTXTYPE, N)                                                                        \
  template <int kTransA, int kTransB>                                                                            \
  struct Mma64xN<TYPE, N, kTransA, kTransB> {                                                                    \
    static __device__ __forceinline__ void ss(float (&d)[N / 8][4], uint64_t a, uint64_t b) {                    \
      asm volatile("{ .reg .pred p; setp.ne.b32 p, " BRAID_WGN_SETP##N ", 0;\n"                                 \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTXTYPE "." PTXTYPE " " BRAID_WGN_D##N      \
                   BRAID_WGN_TAIL##N                                                                             \
                   : BRAID_WGN_OPS##N(d)                                                                         \
                   : "l"(a), "l"(b), "r"(1), "n"(kTransA), "n"(kTransB));                                        \
    }                                                                                                            \
  };
BRAID_WGN_DEFINE(__half, "f16", 8)
BRAID_WGN_DEFINE(__half, "f16", 16)
BRAID_WGN_DEFINE(__half, "f16", 32)
BRAID_WGN_DEFINE(__half, "f16", 64)
BRAID_WGN_DEFINE(__nv_bfloat16, "bf16", 8)
BRAID_WGN_DEFINE(__nv_bfloat16, "bf16", 16)
BRAID_WGN_DEFINE(__nv_bfloat16, "bf16", 32)
BRAID_WGN_DEFINE(__nv_bfloat16, "bf16", 64)
#undef BRAID_WGN_DEFINE
#undef BRAID_WGN_D8
#undef BRAID_WGN_OPS8
#undef BRAID_WGN_SETP8
#undef BRAID_WGN_TAIL8
#undef BRAID_WGN_D16
#undef BRAID_WGN_OPS16
#undef BRAID_WGN_SETP16
#undef BRAID_WGN_TAIL16
#undef BRAID_WGN_D32
#undef BRAID_WGN_OPS32
#undef BRAID_WGN_SETP32
#undef BRAID_WGN_TAIL32
#undef BRAID_WGN_D64
#undef BRAID_WGN_OPS64
#undef BRAID_WGN_SETP64
#undef BRAID_WGN_TAIL64

}  // namespace braid::attention::wg
