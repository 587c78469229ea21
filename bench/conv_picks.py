"""Per-layer convolution configurations for a chain of convs, aware of the kernel-switch cost.

The first run of a kernel function after a different one runs its mainloop 15-60% slower (4-11 us per
conv on an H100, 15-47% of the layer's warm time; docs/hopper-conv.md, "The kernel-switch penalty,
traced"): the timing of each layer alone (warm, its function run back to back) misses that, so a chain
whose layers each pick their own fastest configuration can pay it at every layer. `pick_chain` chooses
one configuration per layer that minimizes the chain's time with each layer entered from a different
kernel function counted switch_frac slower (time x (1 + switch_frac)), by dynamic programming over the
layers (Viterbi). With switch_frac = 0 it returns each layer's fastest.
"""
import re

_TILE = re.compile(r"^(\d+)x(\d+)")


def kernel_function(cfg):
    """The kernel instantiation a conv configuration name runs (hopper::make_conv_kernel): tile shape,
    staged epilogue, whether it carries the split-K/stream-K fixup, the filter multicast cluster
    (-mc2) and the CTAs per SM (-o2). Order, split count and the reduction variant (-rs, -dsm) are launch parameters of the same
    function."""
    m = _TILE.match(cfg)
    if not m:
        raise ValueError(f"not a configuration name: {cfg!r}")
    segmented = any(tag in cfg for tag in ("-sk", "-streamk"))
    mc = re.search(r"-mc(\d+)", cfg)
    o = re.search(r"-o(\d+)", cfg)
    return (int(m.group(1)), int(m.group(2)), "-staged" in cfg, segmented, int(mc.group(1)) if mc else 1,
            int(o.group(1)) if o else 1)


def pick_chain(layer_times, switch_frac):
    """layer_times: one dict {config name: time in us} per layer, in chain order (every dict non-empty).
    Returns the list of chosen configuration names."""
    if not layer_times:
        return []
    if any(not t for t in layer_times):
        raise ValueError("every layer needs at least one timed configuration")
    # best[cfg] = (total cost of the chain so far ending in cfg, the choices)
    best = {c: (t, [c]) for c, t in layer_times[0].items()}
    for times in layer_times[1:]:
        nxt = {}
        for c, t in times.items():
            f = kernel_function(c)
            cost, path = min(
                ((prev_cost + (switch_frac * t if kernel_function(p) != f else 0.0), prev_path)
                 for p, (prev_cost, prev_path) in best.items()),
                key=lambda x: x[0])
            nxt[c] = (cost + t, path + [c])
        best = nxt
    return min(best.values(), key=lambda x: x[0])[1]
