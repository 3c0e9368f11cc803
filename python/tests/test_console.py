"""The console script without the package's build of the tool (a source tree imported as is):
it says how greenctx is really installed, never `pip install greenctx`, which is not on PyPI."""
import pytest

import greenctx.__main__ as console


def test_a_missing_tool_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(console, "PACKAGED_TOOL", str(tmp_path / "greenctx"))
    with pytest.raises(SystemExit) as exit:
        console.main()
    message = str(exit.value.code)
    assert "the package's build of the tool is missing" in message, message
    assert "scripts/build_wheel.sh" in message and "pip install /path/to/greenctx" in message
    assert "greenctx is not on PyPI" in message, message
