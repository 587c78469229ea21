"""CPU test of bench/mlp_table.py (run by ctest): the table's ratios, the autotuner's pick, and the launch-aware
reachable fraction of the floor read from the same run's log."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import mlp_table  # noqa: E402

CSV = """gpu,date,commit,workload,shape,dtype,variant,time_us,floor_us,check
H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-swiglu-graph,44.00,32.00,pass
H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-other-graph,50.00,32.00,pass
H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-wrong-graph,30.00,32.00,fail
H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid:stream/skinny-a1s4+skinny-a1s4,42.00,32.00,pass
H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid:pdl-only/skinny-a1s4+skinny-a1s4,40.00,32.00,pass
H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid,40.00,32.00,pass
"""
LOG = """braid-bench-mlp on NVIDIA H200 (132 SMs), commit abc, fp16: peak 750 TFLOP/s, copy 4.24 TB/s
empty-kernel graphs (same timing): 1 kernel 3.20 us, 2 4.30 (PDL 4.00), 3 5.10 (PDL 4.70)
  llama  T=1     braid                                                           40.0 us   0.80 of floor  err 2.1e-04
"""


def run_table(argv):
    out = io.StringIO()
    old = sys.argv
    sys.argv = ["mlp_table.py"] + argv
    try:
        with contextlib.redirect_stdout(out):
            mlp_table.main()
    finally:
        sys.argv = old
    return out.getvalue().splitlines()


class MlpTable(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.dir.name, "r.csv")
        self.log = os.path.join(self.dir.name, "r.log")
        with open(self.csv, "w") as f:
            f.write(CSV)
        with open(self.log, "w") as f:
            f.write(LOG)

    def tearDown(self):
        self.dir.cleanup()

    def test_row_takes_the_best_passing_peer_and_names_the_pick(self):
        lines = run_table([self.csv])
        self.assertEqual(len(lines), 3)
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        # the failed 30 us peer is ignored; the best passing one is 44
        self.assertEqual(cells[:5], ["llama", "1", "32", "44 (0.73)", "42"])
        self.assertEqual(cells[5], "40 (0.80)")
        self.assertEqual(cells[6], "1.10x")
        self.assertEqual(cells[7], "pdl-only/skinny-a1s4+skinny-a1s4")

    def test_log_adds_the_reachable_fraction(self):
        lines = run_table([self.csv, "--log", self.log])
        self.assertIn("reachable", lines[0])
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[8], f"{32 / (32 + 3.2):.2f} (+3.2 µs)")  # 0.91

    def test_each_model_takes_its_own_logs_launch(self):
        other = os.path.join(self.dir.name, "gpt3.log")
        with open(other, "w") as f:
            f.write(LOG.replace("1 kernel 3.20", "1 kernel 9.00").replace("llama  T=1", "gpt3   T=1"))
        lines = run_table([self.csv, "--log", other, "--log", self.log])
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[8], f"{32 / (32 + 3.2):.2f} (+3.2 µs)")  # the llama log's, not gpt3's 9.0

    def test_also_gives_the_ratio_in_every_call(self):
        other = os.path.join(self.dir.name, "other.csv")
        with open(other, "w") as f:  # a second call: cuBLASLt 42, braid 43 (0.977x); this call's 44 / 40 (1.100x)
            f.write(CSV.replace("swiglu-graph,44.00", "swiglu-graph,42.00").replace(",braid,40.00", ",braid,43.00"))
        lines = run_table([self.csv, "--also", other])
        self.assertIn("in 2 calls", lines[0])
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[-1], f"{42 / 43:.3f}-{44 / 40:.3f} (2)")

    def test_interleaved_rounds_give_the_median_ratio_and_stay_out_of_the_peer(self):
        rounds = [(41.0, 40.0), (42.0, 41.0), (40.0, 41.0)]  # (cuBLASLt, pick) per round: 1.025, 1.024, 0.976
        with open(self.csv, "a") as f:
            for i, (p, b) in enumerate(rounds, 1):
                f.write(f"H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-swiglu-graph-interleaved-r{i},{p},32.00,pass\n")
                f.write(f"H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid:interleaved-r{i}/pdl-only/skinny-a1s4+skinny-a1s4,{b},32.00,pass\n")
        lines = run_table([self.csv])
        self.assertIn("alternately", lines[0])
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[3], "44 (0.73)")  # the tuning phase's peer, not a round's 40-42
        self.assertEqual(cells[6], "1.10x")
        self.assertEqual(cells[-1], f"{42 / 41:.3f}x (3 rounds)")  # the median of the three ratios

    def test_interleaved_column_spans_the_calls_that_have_rounds(self):
        other = os.path.join(self.dir.name, "other.csv")
        with open(other, "w") as f:  # another call with one round: cuBLASLt 45 / pick 40 = 1.125
            f.write(CSV + "H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-swiglu-graph-interleaved-r1,45,32.00,pass\n"
                    "H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid:interleaved-r1/x,40,32.00,pass\n")
        with open(self.csv, "a") as f:  # this call: one round, 41 / 40.5
            f.write("H200,2026-11-29,abc,mlp-llama,T=1,fp16,peer:cublaslt-swiglu-graph-interleaved-r1,41,32.00,pass\n")
            f.write("H200,2026-11-29,abc,mlp-llama,T=1,fp16,braid:interleaved-r1/x,40.5,32.00,pass\n")
        cells = [c.strip() for c in run_table([self.csv, "--also", other])[2].strip("|").split("|")]
        self.assertEqual(cells[-1], f"{41 / 40.5:.3f}-{45 / 40:.3f}x (2 calls)")

    def test_log_without_the_line_is_an_error(self):
        with open(self.log, "w") as f:
            f.write("no such line\n")
        with self.assertRaises(SystemExit):
            run_table([self.csv, "--log", self.log])


if __name__ == "__main__":
    unittest.main()
