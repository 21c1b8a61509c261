"""How long and how much memory refusing a crafted .safetensors file takes (issue 35, item 4).

Every case of tests/files/test_safetensors_crafted.py through ``il.load_checkpoint`` (the seconds
each took, the slowest), then a 1 GB and a 3.9 GB sparse file whose header describes the 50 kB
post model: the seconds and the growth of the process's peak resident memory. With
``--reader FILE`` the same runs against another version of ``_safetensors.py`` (e.g. ``git show
2b78faa:src/illustrated/files/safetensors.py > /tmp/old.py``: the reader before issue 35, which is
given the 1 GB file only), side by side in one run. Then, each in a fresh process: the peak
resident memory (VmHWM) of refusing a page model whose header's source vocabulary holds
10^6 tokens (a 12.9 MB header) beside a config of 8, against the same process's peak after
importing torch and the checkpoint reader, and after loading the good model. A run without
``--reader`` keeps the "other" results already in the file.
Results: ``benchmarks/results/safetensors_refusals.json``.
``.venv/bin/python benchmarks/safetensors_refusals.py [--reader FILE]``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "files"))

import illustrated as il  # noqa: E402
from illustrated.files import safetensors as _safetensors  # noqa: E402
from illustrated.files import checkpoint  # noqa: E402

SPARSE = (1 << 30, 3_900_000_000)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def attempt(path) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        il.load_checkpoint(path)
        said = "loaded"
    except ValueError as error:
        said = "one line" if "\n" not in str(error) else "several lines"
        said += ": " + str(error).split(" is not a page model ", 1)[-1][:90]
    except BaseException as error:  # noqa: BLE001 - the old reader's tracebacks, counted
        said = f"{type(error).__name__} (a traceback)"
    return time.perf_counter() - start, said


def run(label: str, sparse_sizes=SPARSE) -> dict:
    from test_safetensors_crafted import CASES
    model, src_vocab, tgt_vocab = il.pretrained("post")
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    good = (data, json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]]))
    cases, sparse = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.safetensors"
        for name, (make, _) in CASES.items():
            path.write_bytes(make(*good))
            seconds, said = attempt(path)
            cases[name] = {"seconds": round(seconds, 4), "said": said}
        for size in sparse_sizes:
            with open(path, "wb") as file:
                file.write(data)
                file.truncate(size)
            before = peak_mb()
            seconds, said = attempt(path)
            sparse[str(size)] = {"seconds": round(seconds, 3), "said": said,
                                 "peak_rss_growth_mb": round(peak_mb() - before, 1)}
    slowest = max(cases, key=lambda n: cases[n]["seconds"])
    print(f"{label}: {len(cases)} cases, slowest {cases[slowest]['seconds']:.3f} s ({slowest}); "
          f"one line: {sum(c['said'].startswith('one line') for c in cases.values())}")
    for size, row in sparse.items():
        print(f"{label}: sparse {int(size) / 1e9:.1f} GB: {row['seconds']:.3f} s, peak RSS "
              f"+{row['peak_rss_growth_mb']} MB, {row['said'][:70]}")
    return {"cases": cases, "slowest": slowest, "sparse": sparse}


CHILD = """
import json, sys
import torch  # noqa: F401
from illustrated.files import checkpoint
def peak():  # VmHWM: this process's own peak (ru_maxrss keeps the parent's across exec)
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024
after_import = peak()
try:
    checkpoint.load_checkpoint(sys.argv[1])
    said = "loaded"
except ValueError as error:
    said = str(error).split(" is not a page model ", 1)[-1][:140]
print(json.dumps({"peak_rss_mb": round(peak(), 1), "after_import_mb": round(after_import, 1),
                  "said": said}))
"""


def vocabulary_peaks() -> dict:
    """Peak RSS of refusing the 10^6-token vocabulary, and of loading the good model, each in a
    fresh process."""
    model, src_vocab, tgt_vocab = il.pretrained("post")
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    good_header = dict(header)
    header["__metadata__"] = {**header["__metadata__"], "src_vocab": json.dumps(
        [f"w{i}" for i in range(10**6)])}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, head in (("vocabulary of 10**6 tokens", header), ("good model", good_header)):
            text = json.dumps(head).encode()
            text += b" " * (-len(text) % 8)
            path = Path(tmp) / "model.safetensors"
            path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length:])
            out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                                 text=True, check=True).stdout
            results[label] = {"header_bytes": len(text), **json.loads(out)}
            print(f"{label}: header {len(text):,} bytes, peak RSS {results[label]['peak_rss_mb']}"
                  f" MB (after importing torch {results[label]['after_import_mb']} MB): "
                  f"{results[label]['said'][:80]}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", help="another _safetensors.py to compare with")
    args = parser.parse_args()
    results = {}
    if args.reader:  # first, while the peak memory is still low
        spec = importlib.util.spec_from_file_location("illustrated._old_safetensors", args.reader)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        current = checkpoint._safetensors
        checkpoint._safetensors = old
        old.looks_like = getattr(old, "looks_like", lambda head, path: old.is_safetensors(path))
        read = old.read_checkpoint_dict
        old.read_checkpoint_dict = lambda path, shapes=None: read(path)  # it takes no shapes
        try:  # 1 GB only: the reader before issue 35 reads a whole 3.9 GB file into memory
            results["other"] = {"reader": args.reader, **run("other", SPARSE[:1])}
        finally:
            checkpoint._safetensors = current
    out = ROOT / "benchmarks" / "results" / "safetensors_refusals.json"
    if not args.reader and out.exists():
        results["other"] = json.loads(out.read_text()).get("other")
    results["this"] = run("this")
    results["vocabulary_peaks"] = vocabulary_peaks()
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
