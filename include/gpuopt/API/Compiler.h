//===- Compiler.h - gpu-opt's compiler in process ---------------*- C++ -*-===//
//
// What gpu-opt does, for a program that embeds it without a process per
// kernel (gpuopt._core is one): PTX or MLIR in, a pass pipeline, PTX, cubin
// and the launch manifest out; and the command-line tools as functions.
//
// The interface names no MLIR or LLVM type, so that its users need neither
// the headers nor the libraries: in the self-contained build
// (GPUOPT_SELF_CONTAINED, docs/design.md) it is all that libgpuopt.so
// exports, and MLIR and LLVM stay hidden inside it, beside any other LLVM
// in the same process (Triton's, PyTorch's).
//
// Every Module holds a module op in a context that it shares with the
// modules derived from it; calls on modules of one context are serialised
// by the context's mutex, so a module may be used from any thread. A call
// that fails throws Error with every diagnostic it reported and leaves its
// Module unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_API_COMPILER_H
#define GPUOPT_API_COMPILER_H

#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace gpuopt::api {

/// One diagnostic: its severity ("error", "warning", "remark" or "note"),
/// the file, line and column of its first source position (empty and 0
/// without one: PTX inputs and YAML specs have positions), and its message.
struct Diagnostic {
  std::string severity;
  std::string file;
  unsigned line = 0;
  unsigned col = 0;
  std::string message;
};

/// A call that failed, with every diagnostic it reported (at least one
/// error).
class Error : public std::exception {
public:
  explicit Error(std::vector<Diagnostic> diagnostics);
  ~Error() override;
  /// The first error's message.
  const char *what() const noexcept override;

  std::vector<Diagnostic> diagnostics;

private:
  std::string message;
};

/// A builtin module of ptx.modules (or any MLIR) and its context.
class Module {
public:
  /// PTX texts, one ptx.module each, named after `files` (one per text).
  static std::unique_ptr<Module> importPTX(const std::vector<std::string> &texts,
                                           const std::vector<std::string> &files);
  /// MLIR text or bytecode (a builtin module of ptx.modules, as gpu-opt
  /// writes it, or gpu dialect kernels) read as from `file`.
  static std::unique_ptr<Module> parseMLIR(const std::string &text,
                                           const std::string &file);

  class Impl;
  explicit Module(std::unique_ptr<Impl> impl);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Runs `pipeline` (passes as --pass-pipeline takes them, with or without
  /// the builtin.module(...) around them) on a clone and returns it. An
  /// option the pipeline does not parse is an Error with the parser's
  /// message.
  std::unique_ptr<Module> runPasses(const std::string &pipeline);

  /// The PTX of one ptx.module (`moduleName`, or the only one; with several
  /// and no name, all of them linked into one, as gpu-opt exports them).
  std::string toPTX(const std::string &moduleName) const;
  /// A cubin of one ptx.module through ptxas (gpuopt::findPtxas's search
  /// when `ptxas` is empty) for `chip` (default: the module's .target).
  std::string toCubin(const std::string &chip, const std::string &moduleName,
                      const std::string &ptxas,
                      const std::vector<std::string> &ptxasOptions) const;
  /// The launch manifest of one ptx.module as gpu-opt --manifest writes it,
  /// for the module written to `modulePath` (default: NAME.ptx or
  /// NAME.cubin beside the manifest) in `format` ("ptx" or "cubin").
  std::string manifest(const std::string &moduleName,
                       const std::string &modulePath,
                       const std::string &format) const;

  /// The ptx.modules' names, in order.
  std::vector<std::string> moduleNames() const;
  /// Every .entry of every ptx.module, in order.
  std::vector<std::string> kernels() const;
  /// The module as MLIR text.
  std::string str() const;
  /// What the call that made this module reported.
  const std::vector<Diagnostic> &getDiagnostics() const;

private:
  std::unique_ptr<Impl> impl;
};

/// Registers gpu-opt's passes and MLIR's transforms for runPasses; called
/// once per process (later calls do nothing).
void registerPasses();

/// The ptxas gpu-opt runs when none is given: $PTXAS, the CUDA toolkit,
/// then the ptxas of an installed Python package (Triton's, NVIDIA's
/// wheels); empty when there is none. gpuopt::findPtxas says where it looks.
std::string findPtxas();

/// The command-line tools, as their main functions: set up LLVM, parse
/// `argv` and run; return the exit status. One call per process.
int runGpuOpt(int argc, char **argv);
int runGpuTranslate(int argc, char **argv);

/// The gpu-opt version these functions belong to.
const char *getVersion();

} // namespace gpuopt::api

#endif // GPUOPT_API_COMPILER_H
