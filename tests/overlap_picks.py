"""bench/compare/overlap.py without torch or a GPU: the plan of arms, the advisor's two picks
on a made-up run, the lines a user copies, and the table."""
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                "compare"))
import overlap  # noqa: E402


def arm(kind, c, max_ctas, target, p99, tflops, step):
    a = overlap.new_arm(kind, c, 132 - c if kind == "green" else 132, max_ctas, target)
    a.update(allreduce_us={"p50": p99 * 0.8, "p99": p99}, gemm_tflops=tflops, step_ms=step,
             p99_vs_alone=p99 / 40, gemm_vs_alone=tflops / 800, gemm_vs_whole=tflops / 850)
    return a


def made_up(whole=850):
    arms = [arm("ordinary", 0, 0, 0, 165, 820, 12.0),
            arm("ordinary_maxctas", 16, 16, 0, 170, 780, 11.5),
            arm("green", 16, 0, 0, 70, 700, 9.0),       # GEMM 0.82 of whole
            arm("green", 16, 16, 116, 60, 690, 8.0),    # the shortest step
            arm("green", 8, 0, 124, 90, 790, 8.5),      # GEMM 0.93: keeps it
            arm("green", 8, 8, 124, 120, 780, 8.7)]
    size = {"bytes": 4 << 20, "reps": 100, "steps": 7, "mix": {"gemms": 8, "allreduces": 357},
            "allreduce_whole_us": 36.1, "arms": arms}
    return {"overlap": {"nccl_version": 22809, "nccl_library": "libnccl.so.2",
                        "cublas_version": 130100, "cublas_library": "libcublas.so.13",
                        "init_changed_context": True,
                        "gpus": [{"name": "NVIDIA H200", "sm_count": 132}] * 2,
                        "gemm": {"m": 8192, "n": 8192, "k": 8192, "whole_tflops": whole},
                        "seconds": 55.6, "sizes": [size]}}


# Every arm of the C bench per size, in its order: ordinary streams, then per C ordinary
# streams with maxCTAs = C and the four green variants.
arms = overlap.plan([8, 16], [124, 116], 132)
assert [a["kind"] for a in arms[:2]] == ["ordinary", "ordinary_maxctas"], arms
assert [(a["comm_sms"], a["max_ctas"], a["sm_target"]) for a in arms if a["kind"] == "green"] == [
    (8, 0, 0), (8, 8, 0), (8, 0, 124), (8, 8, 124),
    (16, 0, 0), (16, 16, 0), (16, 0, 116), (16, 16, 116)], arms
assert len(arms) == 11 and arms[10]["label"] == "green 16 | 116, maxCTAs 16, SM target 116"
assert arms[6]["label"] == "ordinary streams, maxCTAs 16"

doc = made_up()
overlap.advise(doc)
size = doc["overlap"]["sizes"][0]
assert size["shortest_step"]["arm"] == 3, size["shortest_step"]
assert size["shortest_step"]["speedup_over_ordinary"] == 12.0 / 8.0
assert size["shortest_p99_keeping_gemm"]["arm"] == 4, size["shortest_p99_keeping_gemm"]
doc = made_up(whole=2000)  # no arm reaches 0.9 of it
overlap.advise(doc)
assert doc["overlap"]["sizes"][0]["shortest_p99_keeping_gemm"] is None

line = overlap.advice_line(arm("green", 16, 16, 116, 60, 690, 8.0))
for want in ("gctx_group groups[2] = {{.num_sms = 16}, {.backfill = 1}};",
             "ncclConfig_t config = NCCL_CONFIG_INITIALIZER; config.maxCTAs = 16;",
             "cublasSetSmCountTarget(handle, 116);"):
    assert want in line, line
line = overlap.advice_line(arm("green", 24, 0, 0, 60, 690, 8.0))
assert "{{.num_sms = 24}, {.backfill = 1}}" in line and "maxCTAs" not in line and \
    "cublasSetSmCountTarget" not in line, line
line = overlap.advice_line(arm("ordinary_maxctas", 8, 8, 0, 60, 690, 8.0))
assert "ordinary streams, no split" in line and "config.maxCTAs = 8;" in line, line

table = io.StringIO()
with contextlib.redirect_stdout(table):
    overlap.print_table(doc)
for want in ("NCCL 2.28.9 (libnccl.so.2), NCCL_NVLS_ENABLE=0", "GPU 1: NVIDIA H200 (132 SMs)",
             "4 MiB all-reduce (fp32 sum, 2 GPUs)", "8 GEMMs + 357 all-reduces",
             "green 16 | 116, maxCTAs 16, SM target 116", "pick, shortest step: green 16 | 116",
             "keeping the GEMM >= 0.9 of whole: none of the arms qualifies"):
    assert want in table.getvalue(), (want, table.getvalue())
assert [overlap.size_text(b) for b in (100, 640 << 10, 4 << 20, 1 << 30)] == [
    "100 B", "640 KiB", "4 MiB", "1 GiB"]
