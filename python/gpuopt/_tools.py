"""The command-line tools the self-contained wheel ships: gpu-opt,
gpu-translate and gpu-run, in gpuopt/bin beside libgpuopt.so (gpuopt/lib).

The wheel's launchers (`gpu-opt` etc. on PATH after `pip install`) call
`main(NAME)`, which replaces the process with the tool. Every tool finds
ptxas in the CUDA toolkit or, without one, in an installed Python package
(Triton's bundled ptxas, NVIDIA's wheels): `export_python_path` tells it
where Python's packages are.
"""

import os
import sys

BIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")
TOOLS = ("gpu-opt", "gpu-translate", "gpu-run")
PYTHON_PATH_ENV = "GPUOPT_PYTHON_PATH"


def bundled_tool(name):
    """The path of tool `name` in this package's bin/, or None (a package
    built against an installed gpu-opt has none)."""
    path = os.path.join(BIN_DIR, name)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def export_python_path():
    """Sets $GPUOPT_PYTHON_PATH to the folders of sys.path, after any it
    already names: where gpu-opt (gpuopt._core in this process, and the
    tools it starts, which inherit it) looks for Triton's and NVIDIA's ptxas
    when there is no CUDA toolkit. `import gpuopt` calls it."""
    folders = [p for p in os.environ.get(PYTHON_PATH_ENV, "").split(os.pathsep) if p]
    for p in sys.path:
        p = os.path.abspath(p or os.curdir)
        if os.path.isdir(p) and p not in folders:
            folders.append(p)
    os.environ[PYTHON_PATH_ENV] = os.pathsep.join(folders)


def main(name=None, argv=None):
    """Runs tool `name` (default: this program's name) with `argv` (default:
    this program's arguments) in this process's place."""
    name = name or os.path.basename(sys.argv[0])
    argv = sys.argv[1:] if argv is None else list(argv)
    if name not in TOOLS:
        sys.exit(f"gpuopt: no tool {name!r}; the tools are {', '.join(TOOLS)}")
    path = bundled_tool(name)
    if path is None:
        sys.exit(f"{name}: this gpuopt package has no tools of its own (it was "
                 f"built against an installed gpu-opt): use that gpu-opt's "
                 f"bin/{name}, or install the self-contained wheel "
                 f"(utils/build-wheel.sh)")
    sys.stdout.flush()
    sys.stderr.flush()
    # $GPUOPT_PYTHON_PATH is set: importing this module imported gpuopt.
    os.execv(path, [name] + argv)


if __name__ == "__main__":
    main()
