"""CPU test of bench/conv_picks.py (run by ctest): the kernel-switch-aware choice of per-layer configs."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from conv_picks import kernel_function, pick_chain  # noqa: E402


class KernelFunction(unittest.TestCase):
    def test_launch_parameters_share_a_function(self):
        self.assertEqual(kernel_function("128x64-sk2-rowmajor"), kernel_function("128x64-streamk"))
        self.assertEqual(kernel_function("128x64-sk3-rs"), kernel_function("128x64-sk2"))
        self.assertEqual(kernel_function("128x128-sk2-dsm"), kernel_function("128x128-sk3-rs-rowmajor"))

    def test_tile_epilogue_and_fixup_make_functions(self):
        self.assertNotEqual(kernel_function("128x64"), kernel_function("128x64-sk2"))  # whole-tile kernel
        self.assertNotEqual(kernel_function("128x64"), kernel_function("128x64-staged"))
        self.assertNotEqual(kernel_function("128x64"), kernel_function("64x128"))
        self.assertNotEqual(kernel_function("64x64-mc2"), kernel_function("64x64"))  # filter multicast
        self.assertNotEqual(kernel_function("64x32-sk2-o2"), kernel_function("64x32-sk2"))  # two CTAs per SM
        self.assertEqual(kernel_function("64x128-mc2-sk2"), kernel_function("64x128-mc2-streamk"))
        with self.assertRaises(ValueError):
            kernel_function("fast")


class PickChain(unittest.TestCase):
    layers = [{"128x64": 10.0, "64x128": 10.5}, {"64x128": 9.0, "128x64": 10.0}, {"128x64": 8.0, "64x128": 8.2}]

    def test_without_switch_cost_each_layer_takes_its_fastest(self):
        self.assertEqual(pick_chain(self.layers, 0.0), ["128x64", "64x128", "128x64"])

    def test_switch_cost_keeps_one_function_when_it_pays(self):
        # a layer entered from another function counts (1 + switch_frac) x its time.
        # 0.5: each layer's fastest 10 + 13.5 + 12 = 35.5; all 128x64 28; all 64x128 27.7
        self.assertEqual(pick_chain(self.layers, 0.5), ["64x128", "64x128", "64x128"])
        # 0.02: two switches 10 + 9.18 + 8.16 = 27.34 < one 10 + 9.18 + 8.2 = 27.38 < none 27.7
        self.assertEqual(pick_chain(self.layers, 0.02), ["128x64", "64x128", "128x64"])
        # 0.03: one switch 10 + 9.27 + 8.2 = 27.47 < two 10 + 9.27 + 8.24 = 27.51 < none 27.7
        self.assertEqual(pick_chain(self.layers, 0.03), ["128x64", "64x128", "64x128"])

    def test_configs_of_one_function_switch_for_free(self):
        layers = [{"128x64-sk2": 5.0, "64x64": 5.5}, {"128x64-streamk": 4.0, "64x64": 4.1}]
        self.assertEqual(pick_chain(layers, 0.5), ["128x64-sk2", "128x64-streamk"])

    def test_edges(self):
        self.assertEqual(pick_chain([], 0.5), [])
        self.assertEqual(pick_chain([{"64x64": 1.0}], 0.5), ["64x64"])
        with self.assertRaises(ValueError):
            pick_chain([{"64x64": 1.0}, {}], 0.5)


if __name__ == "__main__":
    unittest.main()
