"""The package's exceptions and warnings, importable without the compiler.

    Error                       every failure of gpuopt's calls
    +-- CompileError            the compiler's diagnostics (import_ptx, fuse,
    |                           probe, run_passes, to_cubin, ...)
    +-- RunError                the runtime (gpuopt.run: a bad run spec, no
    |                           GPU or driver, a failed launch)
    +-- ToolNotFound            a tool (gpu-opt, gpu-run, ptxas) is not found
    |                           (gpuopt.tools.ToolNotFound)
    +-- OptionError             a bad argument value (also a ValueError)
    +-- OptionTypeError         an argument of the wrong type, or an unknown
                                keyword (also a TypeError)

    CompilerWarning (UserWarning)   a compiler diagnostic of severity
                                    "warning", issued through `warnings`

str(e) is the reason: the compiler's diagnostics as gpu-opt prints them
(`file:line:col: error: message`), or the message.
"""

import collections

Diagnostic = collections.namedtuple(
    "Diagnostic", ["severity", "file", "line", "col", "message"], module="gpuopt")
Diagnostic.__doc__ = """One diagnostic: severity ("error", "warning",
"remark" or "note"), file, line and col (None, None, None without a source
position) and message."""


def _diagnostic(d):
    severity, file, line, col, message = d
    if not file:
        file = line = col = None
    return Diagnostic(severity, file, line, col, message)


def _diagnostic_text(d):
    where = f"{d.file}:{d.line}:{d.col}: " if d.file else ""
    return f"{where}{d.severity}: {d.message}"


class Error(Exception):
    """A failed compile or run, or a bad argument: `message`, and `file`,
    `line`, `col` of the first error (None where it has no position);
    `diagnostics`, every diagnostic of the call (Diagnostic tuples; empty
    where the failure is not the compiler's)."""

    def __init__(self, message, file=None, line=None, col=None,
                 diagnostics=()):
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.diagnostics = list(diagnostics)
        super().__init__(message)

    @classmethod
    def from_diagnostics(cls, diagnostics):
        """The error of a failed compiler call, from its diagnostics (the
        first error's message and position). gpuopt._core raises
        `Error.from_diagnostics(...)`: called on Error itself, it makes a
        CompileError."""
        if cls is Error:
            cls = CompileError
        diagnostics = [_diagnostic(d) for d in diagnostics]
        first = next((d for d in diagnostics if d.severity == "error"),
                     diagnostics[0] if diagnostics else
                     Diagnostic("error", None, None, None, "failed"))
        return cls(first.message, first.file, first.line, first.col,
                   diagnostics)

    def __str__(self):
        if self.diagnostics:
            return "\n".join(_diagnostic_text(d) for d in self.diagnostics)
        if self.file:
            return _diagnostic_text(Diagnostic("error", self.file, self.line,
                                               self.col, self.message))
        return str(self.message)


class CompileError(Error):
    """The compiler refused: a PTX, MLIR or probe spec error, a pass option
    or a plan it rejects, ptxas failing. `diagnostics` holds what it said."""


class RunError(Error):
    """gpuopt.run failed: the run spec, the driver (no GPU), a launch."""


class ToolNotFound(Error):
    """A tool (gpu-opt, gpu-run, ptxas) is not where it was looked for; the
    message says what to set."""


class OptionError(Error, ValueError):
    """A bad argument value (an option value, a text that is not UTF-8,
    lists of unequal lengths)."""


class OptionTypeError(Error, TypeError):
    """An argument of the wrong type, or an unknown keyword argument (the
    message lists the valid ones)."""


class CompilerWarning(UserWarning):
    """A compiler diagnostic of severity "warning" (e.g. the fusion model's
    `the choice is a guess` without a profile), issued once by the call that
    produced it. `diagnostic` is the Diagnostic."""

    def __init__(self, message, diagnostic=None):
        super().__init__(message)
        self.diagnostic = diagnostic


# Shown as the package's names (gpuopt re-exports them).
for _cls in (Error, CompileError, RunError, ToolNotFound, OptionError,
             OptionTypeError, CompilerWarning):
    _cls.__module__ = "gpuopt"
del _cls
