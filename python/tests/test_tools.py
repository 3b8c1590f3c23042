"""gpuopt.tools: where a tool is found, and what the error says."""

import pytest

from gpuopt import tools


def exe(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_find_tool(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    (tmp_path / "path").mkdir()
    built = exe(tmp_path / "bin" / "gpu-run")
    on_path = exe(tmp_path / "path" / "gpu-run")
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.delenv(tools.BIN_DIR_ENV, raising=False)
    assert tools.find_tool("gpu-run") == on_path
    monkeypatch.setenv(tools.BIN_DIR_ENV, str(tmp_path / "bin"))
    assert tools.find_tool("gpu-run") == built
    # an explicit path wins, and must be an executable
    assert tools.find_tool("gpu-run", on_path) == on_path
    (tmp_path / "plain").write_text("")
    with pytest.raises(tools.ToolNotFound, match="is not an executable"):
        tools.find_tool("gpu-run", str(tmp_path / "plain"))
    # a $GPUOPT_BIN_DIR without the tool is an error, not a fall-back to PATH
    with pytest.raises(tools.ToolNotFound, match=r"gpu-opt: not in \$GPUOPT_BIN_DIR"):
        tools.find_tool("gpu-opt")
    monkeypatch.delenv(tools.BIN_DIR_ENV)
    with pytest.raises(tools.ToolNotFound) as e:
        tools.find_tool("gpu-opt")
    assert str(e.value) == ("gpu-opt not found: pass --gpu-opt PATH, set $GPUOPT_BIN_DIR to "
                            "the folder that holds it (a build's bin/), or put it on PATH")


def test_run_watchdog():
    r = tools.run_watchdog(["sh", "-c", "echo out; echo err >&2; exit 3"], 10)
    assert (r.rc, r.out, r.err, r.hung) == (3, "out\n", "err\n", False)
    assert r.message() == "err"
    r = tools.run_watchdog(["sh", "-c", "sleep 30"], 0.5)
    assert r.hung and r.wall < 10


def test_find_tool_takes_the_package_tools_before_path(tmp_path, monkeypatch):
    # The self-contained wheel ships its tools in gpuopt/bin.
    from gpuopt import _tools
    (tmp_path / "pkg").mkdir()
    (tmp_path / "path").mkdir()
    bundled = exe(tmp_path / "pkg" / "gpu-opt")
    exe(tmp_path / "path" / "gpu-opt")
    monkeypatch.setattr(_tools, "BIN_DIR", str(tmp_path / "pkg"))
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.delenv(tools.BIN_DIR_ENV, raising=False)
    assert _tools.bundled_tool("gpu-opt") == bundled
    assert tools.find_tool("gpu-opt") == bundled
    # $GPUOPT_BIN_DIR still wins over the package's own.
    (tmp_path / "bin").mkdir()
    built = exe(tmp_path / "bin" / "gpu-opt")
    monkeypatch.setenv(tools.BIN_DIR_ENV, str(tmp_path / "bin"))
    assert tools.find_tool("gpu-opt") == built


def test_export_python_path(tmp_path, monkeypatch):
    # gpu-opt finds Triton's ptxas through the folders of sys.path.
    from gpuopt import _tools
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr("sys.path", [str(site), str(tmp_path / "missing")])
    monkeypatch.setenv(_tools.PYTHON_PATH_ENV, "/earlier")
    _tools.export_python_path()
    import os
    assert os.environ[_tools.PYTHON_PATH_ENV].split(os.pathsep) == ["/earlier", str(site)]
