#!/usr/bin/env python3
"""Merge wheels of one package built for several Pythons into one wheel.

    utils/merge-wheels.py --out-dir DIR [--platform TAG] A.whl B.whl ...

The inputs hold the same files but for their extension modules (e.g.
_core.cpython-310-x86_64-linux-gnu.so, _core.abi3.so); every file they share
must be byte-identical. The merged wheel holds the union, its WHEEL file
lists every input's tags (with `--platform`, on that platform instead), its
RECORD is rebuilt, and its name carries the compressed tag set
(NAME-VERSION-cp310.cp311.cp312-cp310.cp311.abi3-PLATFORM.whl), as the
wheel format allows. Prints the merged wheel's path.
"""

import argparse
import base64
import hashlib
import os
import sys
import zipfile


def read_wheel(path):
    with zipfile.ZipFile(path) as wheel:
        return {info.filename: (wheel.read(info), info.external_attr)
                for info in wheel.infolist() if not info.is_dir()}


def dist_info_dir(files):
    dirs = {name.split("/", 1)[0] for name in files
            if name.split("/", 1)[0].endswith(".dist-info")}
    if len(dirs) != 1:
        raise SystemExit(f"merge-wheels: expected one .dist-info folder, found {sorted(dirs)}")
    return dirs.pop()


def wheel_tags(wheel_text):
    return [line.split(":", 1)[1].strip() for line in wheel_text.splitlines()
            if line.startswith("Tag:")]


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + digest.rstrip(b"=").decode()


def compressed(parts):
    seen = []
    for part in parts:
        if part not in seen:
            seen.append(part)
    return ".".join(seen)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="+")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--platform", help="the platform tag of the merged wheel "
                        "(default: the inputs')")
    args = parser.parse_args()

    merged, tags, info_dir, first_wheel = {}, [], None, None
    for path in args.wheels:
        files = read_wheel(path)
        this_info = dist_info_dir(files)
        if info_dir not in (None, this_info):
            raise SystemExit(f"merge-wheels: {path} is {this_info}, not {info_dir}")
        info_dir = this_info
        first_wheel = first_wheel or files[f"{info_dir}/WHEEL"]
        for tag in wheel_tags(files[f"{info_dir}/WHEEL"][0].decode()):
            if tag not in tags:
                tags.append(tag)
        for name, (data, attr) in files.items():
            if name in (f"{info_dir}/WHEEL", f"{info_dir}/RECORD"):
                continue
            if name in merged and merged[name][0] != data:
                raise SystemExit(f"merge-wheels: {name} differs between the wheels")
            merged[name] = (data, attr)
    if args.platform:
        tags = list(dict.fromkeys(f"{t.rsplit('-', 1)[0]}-{args.platform}" for t in tags))

    wheel_text = [line for line in first_wheel[0].decode().splitlines()
                  if line and not line.startswith("Tag:")]
    wheel_text += [f"Tag: {tag}" for tag in tags]
    merged[f"{info_dir}/WHEEL"] = (("\n".join(wheel_text) + "\n").encode(), first_wheel[1])

    split = [tag.split("-") for tag in tags]
    name_version = info_dir[: -len(".dist-info")]
    filename = (f"{name_version}-{compressed(t[0] for t in split)}-"
                f"{compressed(t[1] for t in split)}-{compressed(t[2] for t in split)}.whl")
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.join(args.out_dir, filename)

    record = [f"{name},{record_hash(data)},{len(data)}"
              for name, (data, _) in sorted(merged.items())]
    record.append(f"{info_dir}/RECORD,,")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as wheel:
        # dist-info last, RECORD at the very end, as the format recommends.
        names = sorted(merged, key=lambda n: (n.startswith(info_dir), n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = merged[name][1]
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, merged[name][0])
        info = zipfile.ZipInfo(f"{info_dir}/RECORD", date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        wheel.writestr(info, "\n".join(record) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
