// A warp-specialized elementwise stage: Y[M,N] = act(X[M,N]) * scale, X produced by another stage.
// It exists to show (and test) braid's elected-lane API inside warp roles:
//   warp 0 (loader):   lane 0 waits on X's semaphore (wait_elected), the warp copies the tile to
//                      shared memory, then arrives at the FULL named barrier;
//   warps 1..3 (math): wait at FULL, compute, store, meet at the STORED named barrier (math warps
//                      only), and one elected lane posts the tile (post_elected).
// No __syncthreads inside a role branch; the loop head (next_tile) is outside the roles.
#pragma once
#include <cuda_fp16.h>

#include "braid/core/stage.cuh"
#include "braid/kernels/simple_gemm.cuh"

namespace braid::kernels {

struct ElementwiseOperands {
  const __half* X = nullptr;
  __half* Y = nullptr;
  int M = 0, N = 0;
  int x_input = -1;  // StageParams input producing X, -1: external
  Epilogue act = Epilogue::GeLU;
  float scale = 1.0f;
};

constexpr int kWsThreads = 128;
constexpr uint32_t kBarFull = 1, kBarStored = 2;  // named barrier ids (0 is __syncthreads)

template <int TM = 64, int TN = 64>
__global__ void __launch_bounds__(kWsThreads) ws_elementwise_kernel(ElementwiseOperands op, StageParams sp) {
  __shared__ __half tile[TM][TN];
  __shared__ BlockSync bs;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  begin_block(sp, bs);
  Tile t;
  while (next_tile(sp, bs, t)) {  // its __syncthreads also means "the buffer is free again"
    const int m0 = int(t.y) * TM, n0 = int(t.x) * TN;
    if (warp == 0) {  // loader role
      bool ok = true;
      if (lane == 0 && op.x_input >= 0) {
        const InputRef& ir = sp.inputs[op.x_input];
        // every producer tile under this TM x TN block (equal tile shapes: exactly one)
        for (uint32_t y = ir.shape.row_tile(uint32_t(m0)); ok && y <= ir.shape.row_tile(uint32_t(min(m0 + TM, op.M) - 1)); ++y)
          for (uint32_t x = ir.shape.col_tile(uint32_t(n0)); ok && x <= ir.shape.col_tile(uint32_t(min(n0 + TN, op.N) - 1)); ++x)
            ok = wait_elected(sp, bs.epoch, uint32_t(op.x_input), Tile{x, y, 0}, t, nullptr);
        if (!ok) bs.ok = 0;
      }
      ok = __shfl_sync(0xffffffffu, ok ? 1 : 0, 0) != 0;
      if (ok)
        for (int e = lane; e < TM * TN; e += 32) {
          const int r = e / TN, c = e % TN, m = m0 + r, n = n0 + c;
          tile[r][c] = (m < op.M && n < op.N) ? (op.x_input >= 0 ? ld_produced(op.X + size_t(m) * op.N + n)
                                                                 : op.X[size_t(m) * op.N + n])
                                              : __float2half(0.f);
        }
      ptx::named_barrier_sync(kBarFull, kWsThreads);  // loader arrives: tile is in shared memory
    } else {  // math role
      ptx::named_barrier_sync(kBarFull, kWsThreads);
      if (bs.ok) {
        for (int e = threadIdx.x - 32; e < TM * TN; e += kWsThreads - 32) {
          const int r = e / TN, c = e % TN, m = m0 + r, n = n0 + c;
          if (m < op.M && n < op.N)
            op.Y[size_t(m) * op.N + n] = __float2half(apply_epilogue(__half2float(tile[r][c]), op.act) * op.scale);
        }
        ptx::named_barrier_sync(kBarStored, kWsThreads - 32);  // all math warps' stores are done
        if (warp == 1 && lane == 0) post_elected(sp, bs.epoch, t);
      }
    }
    if (!bs.ok) return;  // uniform after the FULL barrier: a wait gave up, the host reports it
  }
  end_block(sp, bs);
}

}  // namespace braid::kernels
