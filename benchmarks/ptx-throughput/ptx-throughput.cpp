//===- ptx-throughput.cpp - Speed of PTX import and export ----------------===//
//
//   ptx-throughput [--repeat N] [--ptxas PATH] [--chip sm_90a] FILES_OR_DIRS...
//
// Loads every PTX file into memory, then times, on one thread, the import of
// each file into the ptx dialect (parsing and verification, as importPTX
// does) and its export back to PTX text in memory. Each is run --repeat times
// in a fresh single-threaded MLIRContext (whose creation is not timed) and
// the median is reported, per file and in total, as MB/s (10^6 bytes of
// input PTX per second). With --ptxas, also times ptxas on each file (median
// of 3 runs) and prints import+export time as a percentage of it.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;
using Clock = std::chrono::steady_clock;

static cl::OptionCategory category("ptx-throughput options");

static cl::list<std::string> inputs(cl::Positional, cl::OneOrMore,
                                    cl::desc("<PTX files or folders>"),
                                    cl::cat(category));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Runs per file; the median is "
                                         "reported (default 5)"),
                                cl::init(5), cl::cat(category));
static cl::opt<std::string>
    ptxasPath("ptxas", cl::desc("Also time this ptxas on each file"),
              cl::value_desc("path"), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("-arch for ptxas"),
                                 cl::init("sm_90a"), cl::cat(category));
static cl::opt<unsigned> ptxasRepeat("ptxas-repeat",
                                     cl::desc("ptxas runs per file (default "
                                              "3)"),
                                     cl::init(3), cl::cat(category));
static cl::opt<bool> markdown("markdown",
                              cl::desc("Print the table as Markdown"),
                              cl::cat(category));
static cl::opt<bool> threadSafeUniquers(
    "thread-safe-uniquers",
    cl::desc("Keep the context's uniquers thread-safe, as in a context that "
             "was created with threading enabled"),
    cl::cat(category));

namespace {
struct Input {
  /// The path as found; `name` is what the table shows.
  std::string path, name;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
};

struct Result {
  double importSec = 0, exportSec = 0, totalSec = 0;
  std::optional<double> ptxasSec;
};
} // namespace

static double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

static double median(std::vector<double> values) {
  llvm::sort(values);
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Collects the files named and the .ptx files under the folders named.
static bool collectInputs(std::vector<Input> &result) {
  for (const std::string &input : inputs) {
    if (!llvm::sys::fs::is_directory(input)) {
      result.push_back({input, input, nullptr});
      continue;
    }
    std::vector<std::string> found;
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(input, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".ptx" &&
          !llvm::sys::fs::is_directory(it->path()))
        found.push_back(it->path());
    if (ec) {
      llvm::errs() << "error: " << input << ": " << ec.message() << "\n";
      return false;
    }
    llvm::sort(found);
    for (std::string &path : found) {
      llvm::StringRef name(path);
      name.consume_front(input);
      name = name.ltrim(llvm::sys::path::get_separator());
      result.push_back({path, name.str(), nullptr});
    }
  }
  for (Input &input : result) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(input.path);
    if (!buffer) {
      llvm::errs() << "error: " << input.path << ": "
                   << buffer.getError().message() << "\n";
      return false;
    }
    input.buffer = std::move(*buffer);
  }
  return true;
}

/// Imports and exports `input` once in a fresh context and returns the times.
static bool importAndExport(const Input &input, double &importSec,
                            double &exportSec) {
  DialectRegistry registry;
  registry.insert<gpuopt::ptx::PTXDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Constructing the context without threading leaves its attribute and type
  // uniquers thread-safe (locking on every lookup); this call makes them
  // single-threaded too.
  if (!threadSafeUniquers)
    context.disableMultithreading();
  context.loadDialect<gpuopt::ptx::PTXDialect>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.buffer->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  Clock::time_point start = Clock::now();
  OwningOpRef<ModuleOp> module = gpuopt::importPTX(sourceMgr, &context);
  importSec = seconds(Clock::now() - start);
  if (!module)
    return false;
  FailureOr<gpuopt::ptx::PTXModuleOp> ptxModule =
      gpuopt::findPTXModule(module.get(), /*name=*/"");
  if (failed(ptxModule))
    return false;

  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  start = Clock::now();
  LogicalResult exported = gpuopt::exportPTX(*ptxModule, os);
  exportSec = seconds(Clock::now() - start);
  return succeeded(exported);
}

/// Runs ptxas on `input` and returns the wall time, or nothing if it failed.
static std::optional<double> runPtxas(const Input &input,
                                      llvm::StringRef cubin) {
  std::string arch = "-arch=" + chip;
  llvm::SmallVector<llvm::StringRef> args = {ptxasPath, arch, input.path, "-o",
                                             cubin};
  std::string errorMessage;
  Clock::time_point start = Clock::now();
  int rc = llvm::sys::ExecuteAndWait(ptxasPath, args, /*Env=*/std::nullopt,
                                     /*Redirects=*/{}, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &errorMessage);
  double elapsed = seconds(Clock::now() - start);
  if (rc != 0) {
    llvm::errs() << "error: ptxas failed on " << input.path;
    if (!errorMessage.empty())
      llvm::errs() << ": " << errorMessage;
    llvm::errs() << "\n";
    return std::nullopt;
  }
  return elapsed;
}

namespace {
/// Prints rows as aligned plain text or as a Markdown table.
class Table {
public:
  explicit Table(std::vector<std::string> header) {
    rows.push_back(std::move(header));
  }
  void addRow(std::vector<std::string> row) { rows.push_back(std::move(row)); }
  void addSeparator() { separators.push_back(rows.size()); }

  void print(llvm::raw_ostream &os) const {
    std::vector<size_t> widths(rows.front().size(), 0);
    for (const auto &row : rows)
      for (auto [i, cell] : llvm::enumerate(row))
        widths[i] = std::max(widths[i], cell.size());
    for (auto [r, row] : llvm::enumerate(rows)) {
      if (!markdown && llvm::is_contained(separators, r))
        printRule(os, widths, '-');
      for (auto [i, cell] : llvm::enumerate(row)) {
        // The first column (file) is left-aligned, numbers right-aligned.
        if (markdown)
          os << "| ";
        else if (i)
          os << "  ";
        size_t pad = widths[i] - cell.size();
        if (i)
          os.indent(pad) << cell;
        else
          os << cell << std::string(pad, ' ');
        if (markdown)
          os << ' ';
      }
      os << (markdown ? "|\n" : "\n");
      if (r == 0)
        printRule(os, widths, markdown ? '-' : '=');
    }
  }

private:
  void printRule(llvm::raw_ostream &os, llvm::ArrayRef<size_t> widths,
                 char c) const {
    for (auto [i, width] : llvm::enumerate(widths)) {
      if (markdown)
        os << '|' << std::string(width + 1, c) << (i ? ':' : c);
      else
        os << (i ? "  " : "") << std::string(width, c);
    }
    os << (markdown ? "|\n" : "\n");
  }

  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> separators;
};
} // namespace

static std::string fixed(double value, int decimals) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.*f", decimals, value);
  return s;
}

static std::string mbPerSec(uint64_t bytes, double sec) {
  return sec > 0 ? fixed(bytes / sec / 1e6, 1) : "-";
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "ptx-throughput: time PTX import and export (and ptxas)\n");
  if (repeat == 0 || ptxasRepeat == 0) {
    llvm::errs() << "error: --repeat and --ptxas-repeat must be positive\n";
    return 1;
  }
  if (!ptxasPath.empty()) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(ptxasPath);
    if (!found) {
      llvm::errs() << "error: cannot find ptxas '" << ptxasPath << "'\n";
      return 1;
    }
    ptxasPath = *found;
  }

  std::vector<Input> files;
  if (!collectInputs(files))
    return 1;
  if (files.empty()) {
    llvm::errs() << "error: no PTX files found\n";
    return 1;
  }

  llvm::SmallString<128> cubin;
  if (!ptxasPath.empty()) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "ptx-throughput", "cubin", cubin)) {
      llvm::errs() << "error: cannot create a temporary file: " << ec.message()
                   << "\n";
      return 1;
    }
  }
  llvm::scope_exit removeCubin([&] {
    if (!cubin.empty())
      llvm::sys::fs::remove(cubin);
  });

  std::vector<Result> results;
  for (const Input &input : files) {
    std::vector<double> imports, exports, totals;
    for (unsigned i = 0; i < repeat; ++i) {
      double importSec, exportSec;
      if (!importAndExport(input, importSec, exportSec)) {
        llvm::errs() << "error: " << input.path
                     << " does not import and export\n";
        return 1;
      }
      imports.push_back(importSec);
      exports.push_back(exportSec);
      totals.push_back(importSec + exportSec);
    }
    results.push_back(
        {median(imports), median(exports), median(totals), std::nullopt});
  }
  // ptxas runs after all the timings above so that it does not disturb them.
  if (!ptxasPath.empty()) {
    for (auto [input, result] : llvm::zip_equal(files, results)) {
      std::vector<double> runs;
      for (unsigned i = 0; i < ptxasRepeat; ++i) {
        std::optional<double> sec = runPtxas(input, cubin);
        if (!sec)
          return 1;
        runs.push_back(*sec);
      }
      result.ptxasSec = median(runs);
    }
  }

  bool withPtxas = !ptxasPath.empty();
  std::vector<std::string> header = {"file",      "bytes",       "import ms",
                                     "export ms", "import MB/s", "export MB/s",
                                     "i+e MB/s"};
  if (withPtxas) {
    header.push_back("ptxas ms");
    header.push_back("i+e % of ptxas");
  }
  Table table(header);
  uint64_t totalBytes = 0;
  double totalImport = 0, totalExport = 0, totalBoth = 0, totalPtxas = 0;
  auto addRow = [&](const std::string &name, uint64_t bytes, double importSec,
                    double exportSec, double bothSec,
                    std::optional<double> ptxasSec) {
    std::vector<std::string> row = {name,
                                    std::to_string(bytes),
                                    fixed(importSec * 1e3, 3),
                                    fixed(exportSec * 1e3, 3),
                                    mbPerSec(bytes, importSec),
                                    mbPerSec(bytes, exportSec),
                                    mbPerSec(bytes, bothSec)};
    if (ptxasSec) {
      row.push_back(fixed(*ptxasSec * 1e3, 1));
      row.push_back(fixed(100 * bothSec / *ptxasSec, 2));
    }
    table.addRow(std::move(row));
  };
  for (auto [input, result] : llvm::zip_equal(files, results)) {
    uint64_t bytes = input.buffer->getBufferSize();
    addRow(input.name, bytes, result.importSec, result.exportSec,
           result.totalSec, result.ptxasSec);
    totalBytes += bytes;
    totalImport += result.importSec;
    totalExport += result.exportSec;
    totalBoth += result.totalSec;
    if (result.ptxasSec)
      totalPtxas += *result.ptxasSec;
  }
  table.addSeparator();
  addRow("total (" + std::to_string(files.size()) + " files)", totalBytes,
         totalImport, totalExport, totalBoth,
         withPtxas ? std::optional<double>(totalPtxas) : std::nullopt);
  table.print(llvm::outs());
  llvm::outs() << "\nmedian of " << repeat
               << " runs per file, one thread, fresh MLIRContext per run";
  if (threadSafeUniquers)
    llvm::outs() << " (thread-safe uniquers)";
  if (withPtxas)
    llvm::outs() << "; ptxas -arch=" << chip << ": median of " << ptxasRepeat
                 << " runs";
  llvm::outs() << "\n";
  return 0;
}
