#!/usr/bin/env python3
"""Compare the machine code of two cubins (CUDA ELF64 objects).

Used to check a PTX round trip: assemble the original and the re-exported PTX
with ptxas and compare the results.  Only the Python standard library is used.

Compared sections:
  .text.*          kernel/function code; contents must be byte-identical
  .rela.text.*     relocations of that code (also .rel.text.*), compared as
                   (offset, type, symbol name, addend) entries; they must be
                   identical too
  .nv.shared.*     shared-memory reservations (size only: they are NOBITS)
  .nv.constant0.*  kernel parameter constant banks
  .nv.info.*       per-kernel attributes (register count, params, ...)
Both files must contain the same set of these section names.  Differences in
the contents or sizes of the non-code sections are reported as notes and only
fail the comparison with --strict.

Relocations matter most for relocatable cubins (ptxas -c, as for nvcc -rdc=true
output): there every call target, global-variable address and call return
address in .text is a placeholder that the linker fills in from the .rela
entry, so two cubins whose .text bytes agree can still call different
functions or address different variables.  Whole-program cubins have
.rela.text sections too (global variables, -G builds' calls).  Symbols are
compared by name, not by symbol-table index, so a reordered symbol table does
not count as a difference.

Exit status: 0 same code, 1 different, 2 malformed input or usage error.
"""

import argparse
import struct
import sys

CODE_PREFIX = ".text."
RELOC_PREFIXES = (".rela.text.", ".rel.text.")
OTHER_PREFIXES = (".nv.shared.", ".nv.constant0.", ".nv.info.")
SHT_SYMTAB = 2
SHT_RELA = 4
SHT_NOBITS = 8
SHT_REL = 9
SHN_UNDEF = 0
SHN_XINDEX = 0xFFFF
SHDR_SIZE = 64
SYM_SIZE = 24


class MalformedElf(Exception):
    pass


class UnreadableFile(MalformedElf):
    pass


class Section:
    __slots__ = ("name", "type", "size", "data", "link", "relocs")

    def __init__(self, name, sh_type, size, data, link=0):
        self.name = name
        self.type = sh_type
        self.size = size
        self.data = data  # None for NOBITS sections
        self.link = link
        self.relocs = None  # for .rel(a).text.*: sorted (offset, type, symbol, addend)


def _unpack(fmt, buf, off, what):
    if off < 0 or off + struct.calcsize(fmt) > len(buf):
        raise MalformedElf(f"truncated file while reading {what} at offset {off:#x}")
    return struct.unpack_from(fmt, buf, off)


def read_sections(path):
    """Return {name: Section} for all sections of the ELF64 file at path."""
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise UnreadableFile(f"cannot read file: {e.strerror}") from None

    if len(buf) < 64 or buf[:4] != b"\x7fELF":
        raise MalformedElf("not an ELF file (bad magic)")
    if buf[4] != 2:
        raise MalformedElf(f"not ELF64 (EI_CLASS={buf[4]})")
    if buf[5] == 1:
        e = "<"
    elif buf[5] == 2:
        e = ">"
    else:
        raise MalformedElf(f"unknown data encoding (EI_DATA={buf[5]})")

    e_shoff, = _unpack(e + "Q", buf, 0x28, "e_shoff")
    e_shentsize, e_shnum, e_shstrndx = _unpack(e + "HHH", buf, 0x3A, "ELF header")
    if e_shoff == 0:
        raise MalformedElf("no section header table")
    if e_shentsize != SHDR_SIZE:
        raise MalformedElf(f"unexpected section header size {e_shentsize} (want {SHDR_SIZE})")

    def shdr(i):
        off = e_shoff + i * SHDR_SIZE
        return _unpack(e + "IIQQQQIIQQ", buf, off, f"section header {i}")

    # Extended numbering: real counts live in section header 0.
    sh0 = shdr(0)
    if e_shnum == 0:
        e_shnum = sh0[5]
    if e_shstrndx == SHN_XINDEX:
        e_shstrndx = sh0[6]
    if e_shnum > (len(buf) - e_shoff) // SHDR_SIZE:
        raise MalformedElf(f"section header table ({e_shnum} entries) runs past end of file")
    if e_shstrndx == SHN_UNDEF or e_shstrndx >= e_shnum:
        raise MalformedElf(f"bad section name string table index {e_shstrndx}")

    headers = [shdr(i) for i in range(e_shnum)]

    def contents(i, h):
        sh_type, sh_offset, sh_size = h[1], h[4], h[5]
        if sh_type == SHT_NOBITS:
            return None
        if sh_offset + sh_size > len(buf):
            raise MalformedElf(f"section {i} data [{sh_offset:#x}, +{sh_size:#x}) runs past end of file")
        return buf[sh_offset:sh_offset + sh_size]

    strtab = contents(e_shstrndx, headers[e_shstrndx])
    if strtab is None:
        raise MalformedElf("section name string table has no data")

    def c_string(table, off, what):
        if off >= len(table):
            raise MalformedElf(f"{what} name offset {off:#x} outside string table")
        end = table.find(b"\0", off)
        if end < 0:
            raise MalformedElf(f"{what} name is not NUL-terminated")
        return table[off:end].decode("utf-8", "replace")

    names = [""] + [c_string(strtab, h[0], f"section {i}") for i, h in enumerate(headers) if i]
    sections = {}
    for i, h in enumerate(headers):
        if i == 0:
            continue
        name = names[i]
        if name in sections:
            raise MalformedElf(f"duplicate section name {name!r}")
        sections[name] = Section(name, h[1], h[5], contents(i, h), h[6])

    def symbol_names(symtab_index):
        """Names of the symbols in the symbol table at symtab_index; section
        symbols (no name of their own) are named after their section."""
        if not 0 < symtab_index < e_shnum or headers[symtab_index][1] != SHT_SYMTAB:
            raise MalformedElf(f"relocation section links to section {symtab_index}, not a symbol table")
        symtab = contents(symtab_index, headers[symtab_index])
        str_index = headers[symtab_index][6]
        if not 0 < str_index < e_shnum:
            raise MalformedElf(f"symbol table links to bad string table {str_index}")
        symstr = contents(str_index, headers[str_index]) or b""
        result = []
        for off in range(0, len(symtab) - SYM_SIZE + 1, SYM_SIZE):
            st_name, st_info, _, st_shndx = _unpack(e + "IBBH", symtab, off, "symbol")
            name = c_string(symstr, st_name, "symbol") if st_name else ""
            if not name and (st_info & 0xF) == 3 and 0 < st_shndx < e_shnum:  # STT_SECTION
                name = names[st_shndx]
            result.append(name)
        return result

    symbol_cache = {}
    for name, sec in sections.items():
        if not name.startswith(RELOC_PREFIXES) or sec.type not in (SHT_RELA, SHT_REL):
            continue
        if sec.link not in symbol_cache:
            symbol_cache[sec.link] = symbol_names(sec.link)
        syms = symbol_cache[sec.link]
        rela = sec.type == SHT_RELA
        entsize = 24 if rela else 16
        relocs = []
        for off in range(0, len(sec.data) - entsize + 1, entsize):
            if rela:
                r_offset, r_info, r_addend = _unpack(e + "QQq", sec.data, off, "relocation")
            else:
                (r_offset, r_info), r_addend = _unpack(e + "QQ", sec.data, off, "relocation"), 0
            sym = r_info >> 32
            if sym >= len(syms):
                raise MalformedElf(f"relocation in {name} names symbol {sym} of {len(syms)}")
            relocs.append((r_offset, r_info & 0xFFFFFFFF, syms[sym], r_addend))
        sec.relocs = sorted(relocs)
    return sections


def interesting(sections):
    return {n: s for n, s in sections.items()
            if n.startswith(CODE_PREFIX) or n.startswith(RELOC_PREFIXES) or n.startswith(OTHER_PREFIXES)}


def is_code(name):
    return name.startswith(CODE_PREFIX) or name.startswith(RELOC_PREFIXES)


def describe_reloc(r):
    offset, rtype, sym, addend = r
    return f"{offset:#x} type {rtype:#x} {sym or '<no symbol>'}{addend:+d}"


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def compare(secs_a, secs_b, strict=False):
    """Return (lines, failed) describing how the two section maps differ."""
    lines = []
    failed = False
    for name in sorted(set(secs_a) | set(secs_b)):
        a, b = secs_a.get(name), secs_b.get(name)
        if a is None or b is None:
            present = a or b
            side = "A" if b is None else "B"
            lines.append(f"only-in-{side} {name} size={present.size}")
            failed = True
            continue
        if a.relocs is not None or b.relocs is not None:
            ra, rb = a.relocs or [], b.relocs or []
            if ra == rb:
                continue
            detail = f"{len(ra)} relocations in A, {len(rb)} in B"
            for x, y in zip(ra, rb):
                if x != y:
                    detail += f"; first difference: A {describe_reloc(x)}, B {describe_reloc(y)}"
                    break
            else:
                extra = (ra if len(ra) > len(rb) else rb)[min(len(ra), len(rb))]
                detail += f"; first extra: {describe_reloc(extra)}"
            lines.append(f"DIFFERENT {name}: {detail}")
            failed = True
            continue
        same_size = a.size == b.size
        same_data = a.data == b.data
        if same_size and same_data:
            continue
        detail = f"size A={a.size} B={b.size}"
        if a.data is not None and b.data is not None and not same_data:
            detail += f", first difference at offset {first_difference(a.data, b.data):#x}"
        if name.startswith(CODE_PREFIX):
            lines.append(f"DIFFERENT {name}: {detail}")
            failed = True
        elif strict:
            lines.append(f"DIFFERENT {name}: {detail}")
            failed = True
        else:
            lines.append(f"note: {name} differs: {detail}")
    return lines, failed


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Compare .text.* code and its relocations (and .nv.shared/.nv.constant0/.nv.info "
                    "section sets) of two cubins.",
        epilog="Exit status: 0 identical code sections, 1 different, 2 malformed input.")
    ap.add_argument("a", metavar="A.cubin")
    ap.add_argument("b", metavar="B.cubin")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing; report through the exit status only")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list every compared section with its sizes")
    ap.add_argument("--strict", action="store_true",
                    help="also fail when .nv.shared/.nv.constant0/.nv.info sizes or contents differ")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0

    maps = []
    for path in (args.a, args.b):
        try:
            maps.append(interesting(read_sections(path)))
        except UnreadableFile as e:
            print(f"error: {path}: {e}", file=sys.stderr)
            return 2
        except MalformedElf as e:
            print(f"error: {path}: malformed ELF64 file: {e}", file=sys.stderr)
            return 2
    secs_a, secs_b = maps
    if not any(n.startswith(CODE_PREFIX) for n in secs_a) and not any(n.startswith(CODE_PREFIX) for n in secs_b):
        if not args.quiet:
            print("warning: neither file has a .text.* section", file=sys.stderr)

    lines, failed = compare(secs_a, secs_b, strict=args.strict)
    if not args.quiet:
        if args.verbose:
            for name in sorted(set(secs_a) | set(secs_b)):
                sa = secs_a[name].size if name in secs_a else "-"
                sb = secs_b[name].size if name in secs_b else "-"
                print(f"  {name}: A={sa} B={sb}")
        for line in lines:
            print(line)
        code = sorted(n for n in set(secs_a) & set(secs_b) if n.startswith(CODE_PREFIX))
        code_bytes = sum(secs_a[n].size for n in code)
        n_relocs = sum(len(s.relocs or []) for n, s in secs_a.items() if n.startswith(RELOC_PREFIXES))
        others = sorted(n for n in secs_a if not is_code(n))
        other_sizes = ", ".join(f"{n}={secs_a[n].size}" for n in others) or "none"
        verdict = "DIFFERENT" if failed else "identical"
        print(f"{verdict}: {len(code)} common .text sections ({code_bytes} bytes in A), "
              f"{n_relocs} relocations in A; other sections in A: {other_sizes}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
