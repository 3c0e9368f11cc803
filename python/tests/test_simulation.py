"""greenctx.simulate(): a model the simulated driver does not know is refused at once, with
the models it does know (asked of the driver's own table), before anything is set."""
import os
import subprocess
import sys

import pytest

SIM_PATH = os.environ.get("GREENCTX_CUDA_LIBRARY", "")
pytestmark = pytest.mark.skipif("libgreenctx_sim" not in SIM_PATH,
                                reason="needs the simulated driver")

SCRIPT = """
import os, sys, greenctx
try:
    greenctx.simulate(sys.argv[1])
except ValueError as e:
    print("refused:", e)
    print("devices:", os.environ.get("GREENCTX_SIM_DEVICES"))
    sys.exit(0)
print("devices:", os.environ["GREENCTX_SIM_DEVICES"])
print("count:", greenctx.device_count())
"""


def simulate(spec):
    env = dict(os.environ, GREENCTX_SIM_LIBRARY=SIM_PATH)
    for name in ("GREENCTX_CUDA_LIBRARY", "GREENCTX_SIM_DEVICES", "GREENCTX_SIM_DRIVER_VERSION"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-c", SCRIPT, spec], env=env, text=True,
                          capture_output=True, check=True).stdout


def test_an_unknown_model_is_refused_with_the_known_ones():
    out = simulate("h20")
    assert "refused: simulate(): no simulated model 'h20'; the models are h200, h100, a100, " \
           "l4, b200" in out, out
    assert "devices: None" in out, out
    out = simulate("h200,a10@13000")
    assert "no simulated model 'a10'" in out, out


def test_known_models_in_any_case_are_taken():
    out = simulate("H200,a100@13000")
    assert "devices: H200,a100" in out and "count: 2" in out, out
