"""Builds the context-pilot wheel by hand from a built binary: the binary goes to the
environment's bin/ (the wheel's .data/scripts), the install-channel marker to
share/context-pilot/ (.data/data), and nothing runs through Python.

    python3 build_wheel.py BINARY VERSION OUTDIR
"""

import base64
import hashlib
import os
import sys
import zipfile

TAG = "py3-none-manylinux2014_x86_64"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    binary, version, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    dist = f"context_pilot-{version}"
    with open(binary, "rb") as f:
        exe = f.read()
    readme = (
        "Context Pilot, a terminal host for AI coding agents: callbacks after each edit and a "
        "stop gate that runs your project's tests before the agent stops. This wheel holds the "
        "native `context-pilot` binary for Linux x86-64 (glibc 2.17 or newer).\n\n"
        "    pipx install context-pilot    # or: uv tool install context-pilot\n"
        "    context-pilot init claude     # or gemini, codex\n"
    )
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: context-pilot\n"
        f"Version: {version}\n"
        "Summary: Callbacks after each edit and a stop gate for AI coding agents\n"
        "License: MIT OR Apache-2.0\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: context-pilot build_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {TAG}\n"
    )
    files = [
        (f"{dist}.data/scripts/context-pilot", exe, 0o755),
        (f"{dist}.data/data/share/context-pilot/install-channel", b"pip\n", 0o644),
        (f"{dist}.dist-info/METADATA", metadata.encode(), 0o644),
        (f"{dist}.dist-info/WHEEL", wheel.encode(), 0o644),
    ]
    record_name = f"{dist}.dist-info/RECORD"
    record = "\n".join(record_line(n, d) for n, d, _ in files) + f"\n{record_name},,\n"
    files.append((record_name, record.encode(), 0o644))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, f"{dist}-{TAG}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(path)


if __name__ == "__main__":
    main()
