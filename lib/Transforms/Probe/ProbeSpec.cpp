//===- ProbeSpec.cpp - Probe specifications in YAML -----------------------===//
//
// Reads a probe spec with yaml-cpp and checks it against the schema before
// the probe pass sees it: names, types, levels and capacities here; the
// snippets' PTX is parsed and verified by the pass, which reports errors at
// the snippet's line in the spec file.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/Probe/ProbeSpec.h"

#include "YamlSchema.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::probe;

namespace {
/// configs/probes/*.yaml, compiled in: {name, text}.
struct BuiltinProbe {
  const char *name;
  const char *text;
};
const BuiltinProbe builtinProbes[] = {
#include "BuiltinProbes.inc"
};
} // namespace

uint64_t probe::getTypeBytes(StringRef type) {
  return llvm::StringSwitch<uint64_t>(type)
      .Cases({"u8", "s8", "b8"}, 1)
      .Cases({"u16", "s16", "b16", "f16"}, 2)
      .Cases({"u32", "s32", "b32", "f32"}, 4)
      .Cases({"u64", "s64", "b64", "f64"}, 8)
      .Default(0);
}

std::vector<StringRef> probe::getBuiltinProbeNames() {
  std::vector<StringRef> names;
  for (const BuiltinProbe &p : builtinProbes)
    names.push_back(p.name);
  return names;
}

namespace {

constexpr std::array<StringRef, 5> specKeys = {"name", "maps", "registers",
                                               "carry", "points"};
constexpr std::array<StringRef, 4> mapKeys = {"name", "level", "capacity",
                                              "fields"};
constexpr std::array<StringRef, 2> fieldKeys = {"name", "type"};
constexpr std::array<StringRef, 3> pointKeys = {"at", "when", "ptx"};
/// Records per thread, warp or block: a bound that keeps buffers sane.
constexpr int64_t maxCapacity = int64_t(1) << 24;

class SpecParser : public YamlSchemaReader {
public:
  SpecParser(MLIRContext *ctx, StringRef file, StringRef text)
      : YamlSchemaReader(ctx, file), text(text) {}

  FailureOr<ProbeSpec> parse();

private:
  FailureOr<TypedName> parseTyped(const YAML::Node &node, StringRef what,
                                  bool allowPred);
  LogicalResult parseMap(const YAML::Node &node, MapSpec &map);
  LogicalResult parsePoint(const YAML::Node &node, PointSpec &point);
  /// A probe or map name: it names registers, parameters and files.
  FailureOr<std::string> parseName(const Field &field);
  LogicalResult addPattern(StringRef text, Location loc, PointSpec &point);

  StringRef text;
};

} // namespace

FailureOr<TypedName> SpecParser::parseTyped(const YAML::Node &node,
                                            StringRef what, bool allowPred) {
  TypedName result{"", "", getLoc(node)};
  LogicalResult ok = forEachField(
      node, fieldKeys, ("in a " + what).str(), [&](const Field &field) {
        FailureOr<std::string> value = parseString(field);
        if (failed(value))
          return failure();
        if (field.key == "name")
          result.name = *value;
        else
          result.type = *value;
        return success();
      });
  if (failed(ok))
    return failure();
  if (result.name.empty() || result.type.empty())
    return emitError(result.loc) << "a " << what << " needs 'name' and 'type'",
           failure();
  return result;
}

FailureOr<std::string> SpecParser::parseName(const Field &field) {
  FailureOr<std::string> name = parseString(field);
  if (failed(name))
    return failure();
  if (!isPTXIdentifier(*name) || name->front() == '%' || name->front() == '$')
    return emitError(getLoc(field))
               << "'name' must be a PTX identifier (letters, digits and '_'), "
                  "not '"
               << *name << "'",
           failure();
  return name;
}

LogicalResult SpecParser::parseMap(const YAML::Node &node, MapSpec &map) {
  if (!node.IsMap())
    return emitError(getLoc(node))
           << "each map must be a map such as '- name: records', not "
           << describeKind(node);
  bool hasFields = false;
  LogicalResult ok = forEachField(
      node, mapKeys, "in a map", [&](const Field &field) -> LogicalResult {
        if (field.key == "name") {
          FailureOr<std::string> name = parseName(field);
          if (failed(name))
            return failure();
          map.name = *name;
          return success();
        }
        if (field.key == "level") {
          std::optional<Level> level;
          if (field.value.IsScalar())
            level =
                llvm::StringSwitch<std::optional<Level>>(field.value.Scalar())
                    .Case("thread", Level::Thread)
                    .Case("warp", Level::Warp)
                    .Case("block", Level::Block)
                    .Default(std::nullopt);
          if (!level)
            return emitError(getLoc(field))
                   << "'level' must be thread, warp or block";
          map.level = *level;
          return success();
        }
        if (field.key == "capacity") {
          if (field.value.IsScalar() && field.value.Scalar() == "dynamic") {
            map.dynamicCapacity = true;
            map.capacity = 0;
            return success();
          }
          FailureOr<int64_t> capacity = parseInt(field, 1, maxCapacity);
          if (failed(capacity))
            return failure();
          map.capacity = *capacity;
          return success();
        }
        // fields
        if (!field.value.IsSequence() || field.value.size() == 0)
          return emitError(getLoc(field))
                 << "'fields' must be a list such as '- {name: clock, type: "
                    "u64}'";
        hasFields = true;
        llvm::StringSet<> names;
        for (const YAML::Node &f : field.value) {
          FailureOr<TypedName> typed = parseTyped(f, "field", false);
          if (failed(typed))
            return failure();
          if (!getTypeBytes(typed->type))
            return emitError(typed->loc)
                   << "field '" << typed->name << "' has type '" << typed->type
                   << "': write u8..u64, s8..s64, b8..b64, f16, f32 or f64";
          if (!names.insert(typed->name).second)
            return emitError(typed->loc)
                   << "field '" << typed->name << "' is listed twice";
          map.fields.push_back(*typed);
        }
        return success();
      });
  if (failed(ok))
    return failure();
  if (map.name.empty() || !hasFields)
    return emitError(map.loc) << "a map needs 'name' and 'fields'";
  return success();
}

LogicalResult SpecParser::parsePoint(const YAML::Node &node, PointSpec &point) {
  if (!node.IsMap())
    return emitError(getLoc(node))
           << "each point must be a map such as '- at: kernel.entry', not "
           << describeKind(node);
  bool hasAt = false, hasPtx = false;
  LogicalResult ok = forEachField(
      node, pointKeys, "in a point", [&](const Field &field) -> LogicalResult {
        if (field.key == "at" && field.value.IsSequence()) {
          hasAt = true;
          point.kind = PointKind::Instruction;
          for (const YAML::Node &item : field.value) {
            if (!item.IsScalar() || item.Scalar().empty())
              return emitError(getLoc(item))
                     << "'at' lists instructions such as ld.global";
            if (failed(addPattern(item.Scalar(), getLoc(item), point)))
              return failure();
          }
          return success();
        }
        FailureOr<std::string> value = parseString(field);
        if (failed(value))
          return failure();
        if (field.key == "at") {
          hasAt = true;
          if (*value == "kernel.entry") {
            point.kind = PointKind::KernelEntry;
          } else if (*value == "kernel.exit") {
            point.kind = PointKind::KernelExit;
          } else {
            point.kind = PointKind::Instruction;
            if (failed(addPattern(*value, getLoc(field), point)))
              return failure();
          }
          return success();
        }
        if (field.key == "when") {
          if (*value != "before" && *value != "after")
            return emitError(getLoc(field)) << "'when' must be before or after";
          point.after = *value == "after";
          return success();
        }
        hasPtx = true;
        point.ptx = *value;
        // Where the snippet's first line is: the line after a block
        // scalar's '|' or '>', else the scalar's own line.
        YAML::Mark mark = field.value.Mark();
        StringRef rest =
            text.drop_front(std::min<size_t>(mark.pos, text.size()));
        if (rest.starts_with("|") || rest.starts_with(">")) {
          point.firstLine = mark.line + 2;
          SmallVector<StringRef> lines;
          text.split(lines, '\n');
          if (point.firstLine - 1 < lines.size()) {
            StringRef line = lines[point.firstLine - 1];
            point.indent = line.size() - line.ltrim(" ").size();
          }
        } else {
          point.firstLine = mark.line + 1;
          point.indent =
              mark.column + (rest.starts_with("\"") || rest.starts_with("'"));
        }
        return success();
      });
  if (failed(ok))
    return failure();
  if (!hasAt || !hasPtx)
    return emitError(point.loc) << "a point needs 'at' and 'ptx'";
  if (point.after && point.kind != PointKind::Instruction)
    return emitError(point.loc)
           << "'when' applies to instruction points, not kernel.entry or "
              "kernel.exit";
  return success();
}

LogicalResult SpecParser::addPattern(StringRef text, Location loc,
                                     PointSpec &point) {
  SmallVector<StringRef> parts;
  text.split(parts, '.');
  if (llvm::any_of(parts, [](StringRef p) {
        return p.empty() || !llvm::all_of(p, [](char c) {
                 return llvm::isAlnum(c) || c == '_' || c == ':';
               });
      }))
    return emitError(loc) << "'" << text
                          << "' is not an instruction pattern (opcode and "
                             "modifiers, such as ld.global or mma)";
  InstructionPattern pattern;
  pattern.opcode = parts.front().str();
  for (StringRef m : llvm::drop_begin(parts))
    pattern.modifiers.push_back(m.str());
  point.patterns.push_back(std::move(pattern));
  return success();
}

FailureOr<ProbeSpec> SpecParser::parse() {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text.str());
  } catch (const YAML::Exception &e) {
    return emitError(getLoc(e.mark)) << "invalid YAML: " << e.msg, failure();
  }
  std::string keyList = llvm::join(specKeys, ", ");
  if (documents.empty() || documents.front().IsNull())
    return emitError(getLoc(YAML::Mark()))
               << "empty probe spec: write a map with keys " << keyList,
           failure();
  if (documents.size() > 1)
    return emitError(getLoc(documents[1]))
               << "one probe spec per file: remove this second document",
           failure();
  const YAML::Node &root = documents.front();
  if (!root.IsMap())
    return emitError(getLoc(root)) << "a probe spec must be a map with keys "
                                   << keyList << ", not " << describeKind(root),
           failure();
  ProbeSpec spec(getLoc(root));
  spec.file = file.str();
  LogicalResult ok = forEachField(
      root, specKeys, "in the probe spec",
      [&](const Field &field) -> LogicalResult {
        if (field.key == "name") {
          FailureOr<std::string> name = parseName(field);
          if (failed(name))
            return failure();
          spec.name = *name;
          return success();
        }
        if (field.key == "carry") {
          if (!field.value.IsScalar() || (field.value.Scalar() != "local" &&
                                          field.value.Scalar() != "registers"))
            return emitError(getLoc(field))
                   << "'carry' must be local or registers";
          spec.carryInRegisters = field.value.Scalar() == "registers";
          return success();
        }
        if (field.key == "registers") {
          if (!field.value.IsMap())
            return emitError(getLoc(field))
                   << "'registers' must be a map of name: type, such as "
                      "'start: u64'";
          for (const auto &entry : field.value) {
            TypedName reg{entry.first.Scalar(),
                          entry.second.IsScalar() ? entry.second.Scalar()
                                                  : std::string(),
                          getLoc(entry.first)};
            if (!isPTXIdentifier(reg.name) || reg.name.front() == '%' ||
                reg.name.front() == '$')
              return emitError(reg.loc)
                     << "register name '" << reg.name
                     << "' must be a PTX identifier (written %" << reg.name
                     << " in snippets)";
            if (reg.type != "pred" && !getTypeBytes(reg.type))
              return emitError(getLoc(entry.second))
                     << "register '" << reg.name << "' has type '" << reg.type
                     << "': write u16..u64, s16..s64, b16..b64, f32, f64 or "
                        "pred";
            if (llvm::any_of(spec.registers, [&](const TypedName &r) {
                  return r.name == reg.name;
                }))
              return emitError(reg.loc)
                     << "register '" << reg.name << "' is declared twice";
            spec.registers.push_back(reg);
          }
          return success();
        }
        if (!field.value.IsSequence() || field.value.size() == 0)
          return emitError(getLoc(field))
                 << "'" << field.key << "' must be a non-empty list";
        for (const YAML::Node &node : field.value) {
          if (field.key == "maps") {
            MapSpec map(getLoc(node));
            if (failed(parseMap(node, map)))
              return failure();
            if (llvm::any_of(spec.maps, [&](const MapSpec &m) {
                  return m.name == map.name;
                }))
              return emitError(map.loc)
                     << "map '" << map.name << "' is declared twice";
            spec.maps.push_back(std::move(map));
          } else {
            PointSpec point(getLoc(node));
            if (failed(parsePoint(node, point)))
              return failure();
            spec.points.push_back(std::move(point));
          }
        }
        return success();
      });
  if (failed(ok))
    return failure();
  if (spec.name.empty() || spec.maps.empty() || spec.points.empty())
    return emitError(spec.loc)
               << "a probe spec needs 'name', 'maps' and 'points'",
           failure();
  return spec;
}

FailureOr<ProbeSpec> probe::parseProbeSpec(StringRef text, StringRef file,
                                           MLIRContext *ctx) {
  return SpecParser(ctx, file, text).parse();
}

FailureOr<ProbeSpec> probe::loadProbeSpec(StringRef nameOrPath,
                                          MLIRContext *ctx) {
  for (const BuiltinProbe &p : builtinProbes)
    if (nameOrPath == p.name)
      return parseProbeSpec(p.text, (Twine("<builtin ") + p.name + ">").str(),
                            ctx);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!buffer)
    return emitError(UnknownLoc::get(ctx))
               << "cannot read probe spec '" << nameOrPath
               << "': " << buffer.getError().message() << " (built-in probes: "
               << llvm::join(getBuiltinProbeNames(), ", ") << ")",
           failure();
  return parseProbeSpec((*buffer)->getBuffer(), nameOrPath, ctx);
}
