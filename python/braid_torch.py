"""braid from PyTorch: tile-synchronized chains of 3x3 convolutions on PyTorch tensors.

Loads libbraid_capi.so (include/braid/capi.h) with ctypes; no build step beyond braid's own. A chain
runs on PyTorch's current stream, so it is captured by torch.cuda.graph like any PyTorch op.

    import braid_torch
    lib = braid_torch.load("build/libbraid_capi.so")
    chain = braid_torch.ConvChain(lib, x, [braid_torch.ConvLayer(w1, b1, y1), braid_torch.ConvLayer(w2, b2, y2, residual=x)],
                                  configs=["128x64", "128x64"], variant="conv2dtilesync-pdl")
    chain.run()       # y1 = relu(conv(x, w1) + b1); y2 = relu(conv(y1, w2) + b2 + x)
    chain.check()     # synchronizes; raises BraidError if a bounded wait got stuck

Tensors: activations N x C x H x W in channels_last memory format (NHWC in memory), weights
K x C x 3 x 3 in channels_last (KRSC in memory), biases [K]; all fp16 or all bf16, on one CUDA device.
The chain keeps references to every tensor it was given.
"""
import ctypes
import os

import torch

_DTYPES = {torch.float16: 0, torch.bfloat16: 1}


class BraidError(RuntimeError):
    pass


def load(path=None):
    """Opens libbraid_capi.so (path, $BRAID_CAPI, or build/libbraid_capi.so next to this file's repo)."""
    if path is None:
        path = os.environ.get("BRAID_CAPI") or os.path.join(os.path.dirname(__file__), "..", "build", "libbraid_capi.so")
    lib = ctypes.CDLL(os.path.abspath(path))
    vp, ip = ctypes.c_void_p, ctypes.c_int
    lib.braid_last_error.restype = ctypes.c_char_p
    lib.braid_conv_chain_create.argtypes = [ctypes.POINTER(vp), ip, ip, ip, ip, ip, vp, ip, ctypes.POINTER(ip),
                                            ctypes.POINTER(vp), ctypes.POINTER(vp), ctypes.POINTER(vp),
                                            ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p]
    lib.braid_conv_chain_bind.argtypes = [vp, vp, ctypes.POINTER(vp)]
    lib.braid_conv_chain_run.argtypes = [vp, vp]
    lib.braid_conv_chain_check.argtypes = [vp, vp]
    lib.braid_conv_chain_diagnose.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t]
    lib.braid_conv_chain_name.argtypes = [vp]
    lib.braid_conv_chain_name.restype = ctypes.c_char_p
    lib.braid_conv_chain_destroy.argtypes = [vp]
    return lib


class ConvLayer:
    """One 3x3 convolution of a chain: out = relu(conv(in, weight) + bias (+ residual))."""

    def __init__(self, weight, bias, out, residual=None):
        self.weight, self.bias, self.out, self.residual = weight, bias, out, residual


def _require_nhwc(t, what, shape=None):
    if not t.is_cuda:
        raise BraidError(f"{what} must be a CUDA tensor")
    if t.dtype not in _DTYPES:
        raise BraidError(f"{what} must be fp16 or bf16 (got {t.dtype})")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise BraidError(f"{what} has shape {tuple(t.shape)}, expected {tuple(shape)}")
    if t.dim() == 4 and not t.is_contiguous(memory_format=torch.channels_last):
        raise BraidError(f"{what} must be channels_last (NHWC in memory)")
    if t.dim() != 4 and not t.is_contiguous():
        raise BraidError(f"{what} must be contiguous")


class ConvChain:
    def __init__(self, lib, x, layers, configs, variant):
        if len(layers) == 0 or len(configs) != len(layers):
            raise BraidError("a chain needs at least one layer and one config per layer")
        n, c, h, w = x.shape
        _require_nhwc(x, "the chain input")
        self._lib = lib
        self._keep = [x]
        ks, wts, biases, outs, res = [], [], [], [], []
        cin = c
        for i, l in enumerate(layers):
            k = l.weight.shape[0]
            _require_nhwc(l.weight, f"layer {i} weight", (k, cin, 3, 3))
            _require_nhwc(l.bias, f"layer {i} bias", (k,))
            _require_nhwc(l.out, f"layer {i} output", (n, k, h, w))
            if l.residual is not None:
                _require_nhwc(l.residual, f"layer {i} residual", (n, k, h, w))
            for t in (l.weight, l.bias, l.out) + ((l.residual,) if l.residual is not None else ()):
                if t.dtype != x.dtype:
                    raise BraidError(f"layer {i}: all tensors must have the input's dtype {x.dtype}")
            ks.append(k)
            wts.append(l.weight.data_ptr())
            biases.append(l.bias.data_ptr())
            outs.append(l.out.data_ptr())
            res.append(l.residual.data_ptr() if l.residual is not None else None)
            self._keep += [l.weight, l.bias, l.out] + ([l.residual] if l.residual is not None else [])
            cin = k
        cnt = len(layers)
        arr = lambda ctype, vals: (ctype * cnt)(*vals)
        handle = ctypes.c_void_p()
        rc = lib.braid_conv_chain_create(
            ctypes.byref(handle), _DTYPES[x.dtype], n, h, w, c, x.data_ptr(), cnt, arr(ctypes.c_int, ks),
            arr(ctypes.c_void_p, wts), arr(ctypes.c_void_p, biases), arr(ctypes.c_void_p, outs),
            arr(ctypes.c_void_p, res), arr(ctypes.c_char_p, [s.encode() for s in configs]), variant.encode())
        if rc != 0:
            raise BraidError(lib.braid_last_error().decode())
        self._h = handle
        self._n, self._x_shape, self._dtype = cnt, tuple(x.shape), x.dtype
        self._outs = [l.out for l in layers]
        self.name = lib.braid_conv_chain_name(handle).decode()

    def bind(self, x, residuals=None):
        """The same chain on another input (and residuals: one per layer, None for none), same shapes;
        host only, so it may be called inside torch.cuda.graph capture."""
        _require_nhwc(x, "the chain input", self._x_shape)
        residuals = residuals or [None] * self._n
        if len(residuals) != self._n or x.dtype != self._dtype:
            raise BraidError("bind: one residual per layer and the chain's dtype")
        for i, r in enumerate(residuals):
            if r is not None:
                _require_nhwc(r, f"layer {i} residual", tuple(self._outs[i].shape))
        ptrs = (ctypes.c_void_p * self._n)(*[r.data_ptr() if r is not None else None for r in residuals])
        if self._lib.braid_conv_chain_bind(self._h, ctypes.c_void_p(x.data_ptr()), ptrs) != 0:
            raise BraidError(self._lib.braid_last_error().decode())
        self._bound = [x] + [r for r in residuals if r is not None]  # alive while the chain reads them

    def _call(self, fn, stream):
        s = (stream or torch.cuda.current_stream()).cuda_stream
        if fn(self._h, ctypes.c_void_p(s)) != 0:
            raise BraidError(self._lib.braid_last_error().decode())

    def run(self, stream=None):
        self._call(self._lib.braid_conv_chain_run, stream)

    def check(self, stream=None):
        self._call(self._lib.braid_conv_chain_check, stream)

    def diagnose(self):
        """Where the chain stands on the device now (works while its kernels run or are stuck)."""
        buf = ctypes.create_string_buffer(1 << 16)
        if self._lib.braid_conv_chain_diagnose(self._h, buf, len(buf)) != 0:
            raise BraidError(self._lib.braid_last_error().decode())
        return buf.value.decode()

    def __del__(self):
        if getattr(self, "_h", None):
            self._lib.braid_conv_chain_destroy(self._h)
            self._h = None
