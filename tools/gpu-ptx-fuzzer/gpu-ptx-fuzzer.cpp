//===- gpu-ptx-fuzzer.cpp - libFuzzer target for the PTX importer ---------===//
//
// Feeds arbitrary bytes to the PTX importer. Malformed input must be rejected
// with a diagnostic, never crash. Input that imports must round-trip: its
// export, imported and exported again, gives the same text; otherwise the
// target aborts so libFuzzer records the input.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

/// MLIR's attribute storage comes from bump allocators shared between this
/// instrumented code and the uninstrumented libMLIR. The inline allocator
/// code compiled here poisons fresh slabs and unpoisons what it hands out;
/// libMLIR's copy does not unpoison, so its allocations from such a slab
/// would be reported. Ignore manual poisoning; ASan still checks heap bounds.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// One context for the whole run: creating a context per input would
/// dominate the time spent in the parser.
static MLIRContext &getContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registry.insert<gpuopt::ptx::PTXDialect>();
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    // The constructor leaves the uniquers thread-safe; make them
    // single-threaded as well.
    ctx->disableMultithreading();
    ctx->loadDialect<gpuopt::ptx::PTXDialect>();
    return ctx;
  }();
  return *context;
}

namespace {
/// The result of importing one buffer and exporting it again.
struct RoundTrip {
  /// False when the importer rejected the buffer.
  bool imported = false;
  /// False when an imported module could not be exported.
  bool exported = false;
  std::string ptx;
  /// Rendered diagnostics; kept so a failing round trip can show them.
  std::string diagnostics;
};
} // namespace

/// Imports `text` and, if that succeeds, exports it. Diagnostics are fully
/// rendered (locations resolved to line and column) into a string that the
/// caller may drop: the diagnostic path is fuzzed too.
static RoundTrip importAndExport(llvm::StringRef text, llvm::StringRef name) {
  MLIRContext &context = getContext();
  RoundTrip result;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, name,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  llvm::raw_string_ostream diagStream(result.diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);

  OwningOpRef<ModuleOp> module = gpuopt::importPTX(sourceMgr, &context);
  if (!module)
    return result;
  result.imported = true;
  FailureOr<gpuopt::ptx::PTXModuleOp> ptxModule =
      gpuopt::findPTXModule(module.get(), /*name=*/"");
  if (failed(ptxModule))
    return result;
  llvm::raw_string_ostream os(result.ptx);
  result.exported = succeeded(gpuopt::exportPTX(*ptxModule, os));
  // `module` is erased here, before the next input.
  return result;
}

[[noreturn]] static void fail(const char *what, const RoundTrip &first,
                              const RoundTrip *second) {
  llvm::errs() << "gpu-ptx-fuzzer: " << what << "\n"
               << "--- first export ---\n"
               << first.ptx << "\n--- diagnostics ---\n"
               << first.diagnostics;
  if (second)
    llvm::errs() << "--- second export ---\n"
                 << second->ptx << "\n--- diagnostics ---\n"
                 << second->diagnostics;
  llvm::errs().flush();
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  RoundTrip first = importAndExport(text, "input.ptx");
  if (!first.imported)
    return 0;
  if (!first.exported)
    fail("an imported module failed to export", first, nullptr);
  RoundTrip second = importAndExport(first.ptx, "export.ptx");
  if (!second.imported)
    fail("the exported PTX does not import again", first, &second);
  if (!second.exported)
    fail("the re-imported module failed to export", first, &second);
  if (first.ptx != second.ptx)
    fail("export is not a fixed point of import+export", first, &second);
  return 0;
}
