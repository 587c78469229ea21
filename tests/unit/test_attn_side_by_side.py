"""CPU test of bench/attn_side_by_side.py (run by ctest): PyTorch's run after braid's merged into the results
CSV under its own name, and braid's speedup over each PyTorch run and over the faster of them."""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import attn_side_by_side as sbs  # noqa: E402

BRAID = """gpu,date,commit,workload,shape,dtype,variant,time_us,floor_us,check
H200,2026-11-29,abc,attention-prompt,model=gpt3;B=1;S=512,fp16,braid:stream/a+b+c,133.0,104.0,pass
H200,2026-11-29,abc,attention-prompt,model=gpt3;B=1;S=512,fp16,braid:sweep,130.0,104.0,pass
H200,2026-11-29,abc,attention-prompt,model=gpt3;B=1;S=512,fp16,braid,132.0,104.0,pass
H200,2026-11-29,abc,attention-prompt,model=gpt3;B=1;S=512,fp16,peer:torch-sdpa-graph,142.0,104.0,pass
H200,2026-11-29,abc,attention-prompt,model=gpt3;B=1;S=512,fp16,peer:torch-sdpa-eager,150.0,104.0,pass
H200,2026-11-29,abc,attention-decode,model=llama;B=1;cache=512,fp16,braid,40.0,25.0,fail
H200,2026-11-29,abc,attention-decode,model=llama;B=1;cache=512,fp16,peer:torch-sdpa-graph,50.0,25.0,pass
"""
AFTER = """shape,variant,time_us,check,rel_err,backend
model=gpt3;B=1;S=512,peer:torch-sdpa-graph,128.0,pass,4e-4,flash
model=gpt3;B=1;S=512,peer:torch-sdpa-eager,140.0,pass,4e-4,flash
model=gpt3;B=1;S=1024,peer:torch-sdpa-graph,200.0,pass,4e-4,flash
model=llama;B=1;cache=512,peer:torch-sdpa-graph,51.0,fail,4e-1,flash
"""


class AttnSideBySide(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.braid = os.path.join(self.dir.name, "b.csv")
        self.after = os.path.join(self.dir.name, "a.csv")
        open(self.braid, "w").write(BRAID)
        open(self.after, "w").write(AFTER)

    def tearDown(self):
        self.dir.cleanup()

    def test_merge_names_the_second_run_and_skips_cases_braid_did_not_run(self):
        rows = sbs.merge_after(sbs.load_results(self.braid), [self.after])
        added = rows[len(BRAID.strip().splitlines()) - 1:]
        self.assertEqual([r["variant"] for r in added],
                         ["peer:torch-sdpa-graph@2", "peer:torch-sdpa-eager@2", "peer:torch-sdpa-graph@2"])
        self.assertTrue(all(r["shape"] != "model=gpt3;B=1;S=1024" for r in added))
        self.assertEqual(added[0]["floor_us"], "104.0")  # the case's floor, from braid's rows
        self.assertEqual(added[0]["workload"], "attention-prompt")

    def test_ratios_against_each_run_and_the_faster(self):
        cases = sbs.side_by_side(sbs.merge_after(sbs.load_results(self.braid), [self.after]))
        c = cases["model=gpt3;B=1;S=512"]
        self.assertEqual(c["braid"], 132.0)  # the re-timed pick, not the sweep's minimum
        self.assertEqual(c["sweep"], 130.0)
        self.assertEqual([t for _, t in c["peers"]], [142.0, 128.0])  # graph rows only, in run order
        self.assertAlmostEqual(c["ratios"][0], 142.0 / 132.0)
        self.assertAlmostEqual(c["vs_best"], 128.0 / 132.0)  # the faster PyTorch run: braid slower here
        d = cases["model=llama;B=1;cache=512"]
        self.assertIsNone(d["braid"])  # a failed check is no result
        self.assertIsNone(d["vs_best"])
        self.assertEqual([t for _, t in d["peers"]], [50.0])  # the after run failed its check

    def test_main_writes_the_merged_csv_and_reports_the_slower_cases(self):
        merged = os.path.join(self.dir.name, "m.csv")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sbs.main([self.braid, self.after, "--csv", merged])
        rows = list(csv.DictReader(open(merged)))
        self.assertEqual(len(rows), 7 + 3)
        self.assertEqual(list(rows[0].keys()), sbs.FIELDS)
        text = out.getvalue()
        self.assertIn("| attention-prompt | model=gpt3;B=1;S=512 | 132.0 (130.0) | 142.0, 128.0 | 1.076x, 0.970x | 0.970x | 0.79 |",
                      text)
        self.assertIn("braid faster than the faster PyTorch run in 0 of 1 cases; not in: model=gpt3;B=1;S=512", text)


if __name__ == "__main__":
    unittest.main()
