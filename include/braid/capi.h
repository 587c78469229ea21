/* braid's C interface: what a framework binds to (bench/net_torch.py calls it through ctypes from
 * PyTorch, on PyTorch's stream, inside CUDA-graph capture). Pointers are device pointers; a stream is
 * a cudaStream_t passed as void*. Every function returns 0 on success, or -1 with the reason in
 * braid_last_error() (per thread). Built as libbraid_capi.so (CUDA builds with CUTLASS headers).
 */
#ifndef BRAID_CAPI_H_
#define BRAID_CAPI_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct braid_conv_chain braid_conv_chain;

/* The reason the latest call on this thread failed ("" after a success). */
const char* braid_last_error(void);

/* A chain of n dependent 3x3 same-padding stride-1 convolutions with bias + ReLU, NHWC / KRSC:
 *   Y[0] = relu(conv(X, Wt[0]) + bias[0] (+ residual[0])), Y[i] = relu(conv(Y[i-1], Wt[i]) + ...).
 * dtype: 0 fp16, 1 bf16. K[i]: filters of layer i. residual: null, or n entries each null or [N,H,W,K[i]].
 * configs: n tile configurations as GemmConfig names ("128x64", "64x128-sk2", "128x64-streamk").
 * variant: "stream", "pdl-only", "conv2dtilesync-pdl", "rowsync-pdl", "conv2dtilesync-wait-kernel", ...
 */
int braid_conv_chain_create(braid_conv_chain** out, int dtype, int N, int H, int W, int C, const void* X, int n,
                            const int* K, const void* const* Wt, const void* const* bias, void* const* Y,
                            const void* const* residual, const char* const* configs, const char* variant);
/* Points the chain at another input X and other residuals (n entries or null), same shapes; the outputs
 * stay. Host only, so it may be called while a CUDA graph is captured (frameworks whose tensors move
 * between calls bind before each run). */
int braid_conv_chain_bind(braid_conv_chain* chain, const void* X, const void* const* residual);
/* Enqueues one run on the stream (graph-capturable). */
int braid_conv_chain_run(braid_conv_chain* chain, void* stream);
/* Synchronizes the stream; fails (and resets the chain) if a bounded wait got stuck. Bounded itself:
 * fails, saying where the chain stands, when the chain is stuck (its kernels then still run: the
 * process has to exit). */
int braid_conv_chain_check(braid_conv_chain* chain, void* stream);
/* Where the chain stands on the device right now (per layer: runs completed, blocks finished, tiles
 * posted; a recorded failure), read on the chain's own stream: usable while its kernels still run or
 * are stuck, e.g. from a watchdog thread. Writes at most len - 1 characters and a NUL to buf. */
int braid_conv_chain_diagnose(braid_conv_chain* chain, char* buf, size_t len);
/* The chain's description: variant and per-layer kernels. The string lives as long as the chain. */
const char* braid_conv_chain_name(const braid_conv_chain* chain);
void braid_conv_chain_destroy(braid_conv_chain* chain);

#ifdef __cplusplus
}
#endif
#endif /* BRAID_CAPI_H_ */
