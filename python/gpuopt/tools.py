"""Finding gpu-opt's tools (gpu-opt, gpu-run, ptxas) and running them.

A tool is taken from, in order: the path the caller was given (a
command-line option), $GPUOPT_BIN_DIR (a build's bin/ folder), the
package's own bin/ (the self-contained wheel's), PATH. When
none has it, ToolNotFound (a gpuopt.Error) says what to set.
"""

import argparse
import os
import shutil
import signal
import subprocess
import time

from gpuopt.errors import ToolNotFound  # noqa: F401 (importable from here)

BIN_DIR_ENV = "GPUOPT_BIN_DIR"


def command_parser(prog, doc):
    """The parser of a module's command line: the first line of its docstring
    as the description, the rest (after the blank line) as the epilog."""
    lines = doc.splitlines()
    return argparse.ArgumentParser(prog=prog, description=lines[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog="\n".join(lines[2:]))


def add_tool_option(parser, name):
    """`--NAME`: the tool's path, else find_tool's search."""
    parser.add_argument(f"--{name}", default=None,
                        help=f"{name} binary (default: ${BIN_DIR_ENV}/{name}, else PATH)")


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_tool(name, explicit=None):
    """The path of tool `name` (explicit, else $GPUOPT_BIN_DIR/name, else
    the one the self-contained wheel ships in the package, else on PATH);
    raises ToolNotFound naming what to set."""
    if explicit:
        found = explicit if os.sep in explicit else shutil.which(explicit) or explicit
        if not _executable(found):
            raise ToolNotFound(f"{name}: {explicit} is not an executable")
        return os.path.abspath(found)
    bin_dir = os.environ.get(BIN_DIR_ENV)
    if bin_dir:
        path = os.path.join(bin_dir, name)
        if not _executable(path):
            raise ToolNotFound(f"{name}: not in ${BIN_DIR_ENV} ({bin_dir})")
        return os.path.abspath(path)
    from ._tools import bundled_tool
    found = bundled_tool(name) or shutil.which(name)
    if found:
        return os.path.abspath(found)
    raise ToolNotFound(f"{name} not found: pass --{name} PATH, set ${BIN_DIR_ENV} to the "
                       f"folder that holds it (a build's bin/), or put it on PATH")


class Run:
    """A finished process: exit status, output, whether the watchdog killed
    it, and its wall time in seconds."""

    def __init__(self, rc, out, err, hung, wall):
        self.rc, self.out, self.err, self.hung, self.wall = rc, out, err, hung, wall

    def message(self, lines=6):
        text = (self.err.strip() or self.out.strip()).splitlines()
        return " / ".join(text[-lines:]) if text else f"exit status {self.rc}"


def run_watchdog(cmd, timeout, cwd=None):
    """Runs cmd in its own process group; past `timeout` seconds the group is
    killed and the run reported as hung."""
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", cwd=cwd, start_new_session=True)
    hung = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        _kill_group(proc)
        out, err = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    return Run(proc.returncode, out, err, hung, time.time() - start)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
