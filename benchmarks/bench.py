"""Measure bertlint against a bare libcst parse and its peers (torchfix, fixit, ruff) in one run.

Every figure is the median wall time of whole processes, the tools' runs interleaved round-robin
so that load on the machine hits them alike; ratios compare figures of this one run only. It
installs nothing: peers are used from their own virtual environments when present (torchfix 0.7
pins libcst < 1.6, so each has its own), and the corpus is the source of the `transformers` and
`torch` packages installed in one more. How to set them up: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCRIPT = HERE / "data" / "train_classifier.py"
BULK_FILES = 150
FORBIDDEN = ("torch", "transformers", "tensorflow", "jax", "flax", "keras")
# The interpreter must use (and write) bytecode caches as an installed tool does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"NO_COLOR": "1"}
LIBCST_PARSE = "import sys, libcst; libcst.parse_module(open(sys.argv[1], 'rb').read())"


def timed(command: list[str], ok: tuple[int, ...] = (0, 1)) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode not in ok:
        raise SystemExit(f"{command[0]} failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed


def medians(commands: dict[str, list[str] | tuple], repeat: int, prepare=None) -> dict[str, float]:
    """Median seconds per named command, after one untimed warm-up each; runs interleaved.
    A command may be (command, ok exit codes); `prepare(name)` runs untimed before each timed run."""
    spec = {name: c if isinstance(c, tuple) else (c, (0, 1)) for name, c in commands.items()}
    for command, ok in spec.values():
        timed(command, ok)
    times: dict[str, list[float]] = {name: [] for name in spec}
    for _ in range(repeat):
        for name, (command, ok) in spec.items():
            if prepare is not None:
                prepare(name)
            times[name].append(timed(command, ok))
    return {name: statistics.median(values) for name, values in times.items()}


def peers(root: Path) -> dict[str, Path]:
    """Executables of the peers whose venvs exist under `root`."""
    found = {}
    for name, exe in (("torchfix", "torchfix"), ("fixit", "fixit"), ("ruff", "ruff")):
        path = root / name / "bin" / exe
        if path.exists():
            found[name] = path
    return found


# The exit codes each peer documents for a run that went through (findings and files it could not parse included):
# fixit's `lint` ORs 1 (a violation) and 2 (a file it failed to parse or lint) (fixit 2.2.1 cli.py, `lint`); torchfix
# 0.7 exits 0 with findings and 1 when a file failed (`result.failures`; 2 only on Ctrl-C) (torchfix __main__.py); ruff
# 0 clean, 1 findings (2 is its own error).
PEER_OK = {"fixit": (0, 1, 2, 3), "torchfix": (0, 1), "ruff": (0, 1)}


def peer_command(name: str, exe: Path, paths: list[Path], cache: Path | None = None) -> tuple[list[str], tuple[int, ...]]:
    """The command that lints `paths` with peer `name`, and the exit codes that mean it ran."""
    if name == "torchfix":
        command = [str(exe), *map(str, paths)]
    elif name == "fixit":
        command = [str(exe), "lint", *map(str, paths)]
    else:
        command = [str(exe), "check", "--isolated", *(["--cache-dir", str(cache)] if cache else ["--no-cache"]), *map(str, paths)]
    return command, PEER_OK[name]


def bertlint(*args: str | Path) -> list[str]:
    return [str(Path(sys.executable).parent / "bertlint"), "--isolated", "--format", "concise", *map(str, args)]


def site_packages(venv: Path) -> Path | None:
    return next(iter(sorted(venv.glob("lib/python*/site-packages"))), None)


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def lines_of(files: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


class Report:
    def __init__(self) -> None:
        self.checks: list[tuple[str, bool]] = []
        self.results: dict[str, object] = {}

    def table(self, title: str, rows: list[list[str]]) -> None:
        print(f"\n{title}")
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            print("  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))

    def check(self, what: str, ok: bool) -> None:
        self.checks.append((what, ok))
        print(f"  {'PASS' if ok else 'FAIL'}  {what}")


def single_file(report: Report, found: dict[str, Path], repeat: int) -> None:
    """(a) One ~300-line script: bertlint against the libcst-parse-only baseline and the peers."""
    empty = Path(tempfile.mkdtemp()) / "empty.py"
    empty.write_text("")
    commands: dict[str, list[str] | tuple] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "libcst parse only": [sys.executable, "-c", LIBCST_PARSE, str(SCRIPT)],
        "bertlint (empty file)": bertlint("--no-cache", empty),
        "bertlint": bertlint("--no-cache", SCRIPT),
        **{name: peer_command(name, exe, [SCRIPT]) for name, exe in found.items()},
    }
    times = medians(commands, repeat)
    ours = times["bertlint"]
    rows = [["tool", "median s", "bertlint / tool"]]
    rows += [[name, f"{t:.3f}", f"{ours / t:.2f}x"] for name, t in times.items()]
    report.table(f"single file: {SCRIPT.name} ({lines_of([SCRIPT])} lines), median of {repeat} runs", rows)
    report.results["single_file"] = times
    report.check(f"bertlint <= 2x a bare libcst parse ({ours / times['libcst parse only']:.2f}x)", ours <= 2 * times["libcst parse only"])
    for name in ("torchfix", "fixit"):
        if name in times:
            report.check(f"bertlint <= 0.35x {name} ({ours / times[name]:.2f}x)", ours <= 0.35 * times[name])


def bulk(report: Report, found: dict[str, Path], sources: Path, work: Path, repeat: int) -> None:
    """Throughput on 150 files of the installed transformers and on the fixtures; then the warm cache."""
    every = python_files(sources / "transformers")
    picked = [every[i * len(every) // BULK_FILES] for i in range(BULK_FILES)]
    sets = {"transformers": work / "transformers", "fixtures": work / "fixtures"}
    for path in picked:
        target = sets["transformers"] / path.relative_to(sources)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    shutil.copytree(REPO / "fixtures", sets["fixtures"], ignore=shutil.ignore_patterns(".bertlint_cache", "*.ipynb", "*.expected"))
    cache = work / "cache"

    def fresh_cache(name: str) -> None:
        if name.startswith("bertlint"):
            shutil.rmtree(cache, ignore_errors=True)

    for label, folder in sets.items():
        files = python_files(folder)
        commands = {"bertlint": bertlint("--cache-dir", cache, folder)}
        commands |= {name: peer_command(name, exe, [folder]) for name, exe in found.items()}
        times = medians(commands, repeat, prepare=fresh_cache)
        ours = len(files) / times["bertlint"]
        rows = [["tool", "median s", "files/s", "bertlint files/s / tool's"]]
        rows += [[name, f"{t:.2f}", f"{len(files) / t:.1f}", f"{ours / (len(files) / t):.3g}x"] for name, t in times.items()]
        report.table(f"bulk: {len(files)} {label} files ({lines_of(files)} lines), each tool at its default parallelism, median of {repeat}", rows)
        report.results[f"bulk_{label}"] = {"files": len(files), **times}
        if label == "transformers":
            for name in ("torchfix", "fixit"):
                if name in times:
                    report.check(f"bertlint files/s >= 10x {name}'s on {label} ({times[name] / times['bertlint']:.1f}x)", times[name] >= 10 * times["bertlint"])

    folder = sets["transformers"]
    ruff_cache = work / "ruff_cache"
    cold = medians({"bertlint cold": bertlint("--cache-dir", cache, folder)}, repeat, prepare=fresh_cache)["bertlint cold"]
    warm = {"bertlint": bertlint("--cache-dir", cache, folder)}
    warm |= {name: peer_command(name, exe, [folder], ruff_cache) for name, exe in found.items()}
    times = medians(warm, repeat)
    rows = [["tool", "re-run median s", "bertlint / tool"], ["bertlint cold", f"{cold:.2f}", ""]]
    rows += [[name, f"{t:.3f}", f"{times['bertlint'] / t:.3g}x"] for name, t in times.items()]
    report.table(f"warm re-run on the {BULK_FILES} transformers files (ruff with its cache; torchfix and fixit have none)", rows)
    report.results["warm"] = {"bertlint cold": cold, **times}
    report.check(f"warm re-run >= 20x faster than cold ({cold / times['bertlint']:.1f}x)", cold >= 20 * times["bertlint"])


def corpus(report: Report, sources: Path) -> None:
    """(b) The whole transformers and torch sources: files/s, and not one internal error."""
    from bertlint.config import load_settings
    from bertlint.discovery import discover
    from bertlint.rules import all_codes

    roots = [sources / "transformers", sources / "torch"]
    files = sum(len(discover([r], load_settings(r, all_codes(), isolated=True))[0]) for r in roots)
    start = time.perf_counter()
    result = subprocess.run(bertlint("--no-cache", "--quiet", *roots), capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    errors = [line for line in result.stderr.splitlines() if "internal error" in line]
    findings = sum(1 for line in result.stdout.splitlines() if re.match(r".+:\d+:\d+: BL\d{3} ", line))
    report.table("corpus: the installed transformers and torch sources, one cold run", [
        ["files", "seconds", "files/s", "findings", "internal errors", "exit"],
        [str(files), f"{elapsed:.1f}", f"{files / elapsed:.1f}", str(findings), str(len(errors)), str(result.returncode)],
    ])
    for line in errors[:20]:
        print(f"  {line}")
    report.results["corpus"] = {"files": files, "seconds": elapsed, "internal_errors": errors}
    report.check(f"no internal error over {files} files ({len(errors)})", not errors and result.returncode in (0, 1))


def big_script(size: int, findings: bool) -> str:
    """A generated script of just under `size` characters: a call per line, each with a BL101 and a
    BL601 finding (`findings`), or the same calls already fixed (clean)."""
    head = 'from transformers import AutoTokenizer, TrainingArguments\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
    padding, cpu = ("pad_to_max_length=True", "no_cuda=True") if findings else ('padding="max_length"', "use_cpu=True")
    block = f'enc_{{i}} = tok(["a b"], {padding}, max_length=8, truncation=True)\nargs_{{i}} = TrainingArguments(output_dir="o{{i}}", {cpu})\n'
    parts, length, i = [head], len(head), 0
    while length + len(block.format(i=i)) <= size:
        parts.append(block.format(i=i))
        length += len(parts[-1])
        i += 1
    return "".join(parts)


def measured(command: list[str], ok: tuple[int, ...] = (0, 1)) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak resident bytes) of one process: CPU time, unlike wall time,
    hardly moves with the load of other processes on the machine."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in ok:
        raise SystemExit(f"{command[0]} failed ({process.returncode})")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def big(report: Report, repeat: int) -> None:
    """A file at the size cap, one with tens of thousands of findings and one clean: bertlint against a
    bare libcst parse of the same file (CPU time; the better of `repeat` runs) and its peak memory."""
    from bertlint.engine import MAX_SOURCE_CHARS

    work = Path(tempfile.mkdtemp())
    rows = [["file", "findings", "parse CPU s", "bertlint CPU s", "ratio", "parse peak MiB", "bertlint peak MiB"]]
    for label, findings in (("findings", True), ("clean", False)):
        path = work / f"big_{label}.py"
        path.write_text(big_script(MAX_SOURCE_CHARS - 64, findings), encoding="utf-8")
        parse = [measured([sys.executable, "-c", LIBCST_PARSE, str(path)], ok=(0,)) for _ in range(repeat)]
        ours = [measured(bertlint("--no-cache", "--transformers-version", "5.0", path)) for _ in range(repeat)]
        count = subprocess.run(bertlint("--no-cache", "--quiet", "--transformers-version", "5.0", path), capture_output=True, text=True, env=ENV).stdout.count("\n")
        parse_cpu, ours_cpu = min(p[1] for p in parse), min(o[1] for o in ours)
        parse_rss, ours_rss = max(p[2] for p in parse), max(o[2] for o in ours)
        rows.append([f"{path.name} ({path.stat().st_size / 2**20:.2f} MiB)", str(count), f"{parse_cpu:.1f}", f"{ours_cpu:.1f}",
                     f"{ours_cpu / parse_cpu:.2f}x", f"{parse_rss / 2**20:.0f}", f"{ours_rss / 2**20:.0f}"])
        report.results[f"big_{label}"] = {"findings": count, "parse_cpu": parse_cpu, "bertlint_cpu": ours_cpu, "parse_rss": parse_rss, "bertlint_rss": ours_rss}
        report.check(f"{label}: bertlint <= 3x a bare parse at the size cap ({ours_cpu / parse_cpu:.2f}x)", ours_cpu <= 3 * parse_cpu)
        report.check(f"{label}: bertlint peak memory under 1 GiB at the size cap ({ours_rss / 2**20:.0f} MiB)", ours_rss < 2**30)
    report.table(f"big: generated files at the {MAX_SOURCE_CHARS / 2**20:g} MiB cap, best of {repeat}", rows)
    shutil.rmtree(work)


SCALING_UNITS = (400, 1600)  # ~1,700 and ~6,500 lines


def scaling_script(units: int) -> str:
    """A generated script that grows the three ways training scripts grow, each by `units` lines: top-level
    calls with findings (BL101, BL601), a function whose every line reads the line before (the value
    layer follows such chains), and a training-loop body."""
    head = ("from transformers import AutoModelForSequenceClassification, AutoTokenizer, TrainingArguments\n"
            'tok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            'model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)\n')
    calls = "".join(f'enc_{i} = tok(["a b"], pad_to_max_length=True, max_length=8, truncation=True)\n'
                    f'args_{i} = TrainingArguments(output_dir="o{i}", no_cuda=True)\n' for i in range(units // 2))
    chain = "def encode(batch):\n    h_0 = batch\n" + "".join(
        f"    h_{i} = tok(h_{i - 1}, padding=True) if h_{i - 1} else model(**h_{i - 1})\n" for i in range(1, units)) + f"    return h_{units - 1}\n"
    loop = "for step, batch in enumerate([]):\n    loss = model(**batch).loss\n" + "".join(f"    part_{i} = loss * {i}\n" for i in range(units)) + "    loss.backward()\n"
    return head + calls + chain + loop


def scaling(report: Report, repeat: int) -> None:
    """Every pass linear: from a script to one four times its size, bertlint's CPU time (less its start-up,
    measured on an empty file) grows no more than 1.3x as much as a bare libcst parse's does."""
    work = Path(tempfile.mkdtemp())
    empty = work / "empty.py"
    empty.write_text("")
    rows = [["file", "lines", "parse CPU s", "bertlint CPU s", "findings"]]
    cpu: dict[str, list[float]] = {"parse": [], "bertlint": []}
    for units in (0, *SCALING_UNITS):
        path = empty if units == 0 else work / f"scale_{units}.py"
        if units:
            path.write_text(scaling_script(units), encoding="utf-8")
        parse = min(measured([sys.executable, "-c", LIBCST_PARSE, str(path)], ok=(0,))[1] for _ in range(repeat))
        ours = min(measured(bertlint("--no-cache", "--transformers-version", "5.0", path))[1] for _ in range(repeat))
        count = subprocess.run(bertlint("--no-cache", "--quiet", "--transformers-version", "5.0", path), capture_output=True, text=True, env=ENV).stdout.count("\n")
        cpu["parse"].append(parse)
        cpu["bertlint"].append(ours)
        rows.append([path.name, str(lines_of([path])), f"{parse:.2f}", f"{ours:.2f}", str(count)])
    report.table(f"scaling: generated scripts, {SCALING_UNITS[1] // SCALING_UNITS[0]}x apart, CPU time, best of {repeat}", rows)
    growth = {tool: (t[2] - t[0]) / (t[1] - t[0]) for tool, t in cpu.items()}
    report.results["scaling"] = {"cpu": cpu, "growth": growth}
    report.check(f"bertlint grows with the file as the parse does ({growth['bertlint']:.2f}x against {growth['parse']:.2f}x)",
                 growth["bertlint"] <= 1.3 * growth["parse"])
    shutil.rmtree(work)


def tiny_files(report: Report, repeat: int) -> None:
    """5,000 two-line files: the process pool (all cores) must not be slower than one process."""
    work = Path(tempfile.mkdtemp())
    for i in range(5000):
        folder = work / f"pkg{i % 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{i}.py").write_text(f'import os\nx{i} = os.path.join("a", "b")\n', encoding="utf-8")
    times = medians({"one process (-j 1)": bertlint("--no-cache", "-j", "1", work), "pool (all cores)": bertlint("--no-cache", work)}, repeat)
    one, pool = times["one process (-j 1)"], times["pool (all cores)"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    report.table(f"tiny files: 5,000 two-line files, median of {repeat} (load average {load:.1f}: wall times need an idle machine)",
                 [["run", "median s"], *[[name, f"{t:.2f}"] for name, t in times.items()]])
    report.results["tiny_files"] = times
    report.check(f"the pool is not slower than one process on 5,000 tiny files ({pool / one:.2f}x)", pool <= one)
    shutil.rmtree(work)


def imports(report: Report) -> None:
    """(c) The lint path imports neither torch nor transformers (nor tensorflow), per -X importtime."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "bertlint", "--isolated", "--no-cache", str(SCRIPT)],
                            capture_output=True, text=True, env=ENV)
    modules = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")][1:]
    bad = sorted({m for m in modules if m.split(".")[0] in FORBIDDEN})
    print(f"\nimports: {len(modules)} modules on the lint path; forbidden ones: {', '.join(bad) or 'none'}")
    report.results["imports"] = {"modules": len(modules), "forbidden": bad}
    report.check("the lint path imports none of " + ", ".join(FORBIDDEN), not bad)


class LspClient:
    """Just enough of an LSP client over stdio (Content-Length framed JSON-RPC) to time the server without a library."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
        self.next_id = 0

    def send(self, method: str, params: dict, request: bool = False) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict:
        length = 0
        while (line := self.process.stdout.readline().strip()):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not length:
            raise SystemExit("the language server closed its output")
        return json.loads(self.process.stdout.read(length))

    def until(self, wanted) -> dict:
        while not wanted(message := self.receive()):
            pass
        return message

    def diagnostics(self, uri: str, version: int) -> list:
        published = self.until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and m["params"]["uri"] == uri and m["params"].get("version") == version)  # fmt: skip
        return published["params"]["diagnostics"]

    def close(self) -> None:
        self.send("shutdown", {}, request=True)
        self.until(lambda m: m.get("id") == self.next_id)
        self.send("exit", {})
        self.process.wait(timeout=30)


def editor(report: Report, repeat: int) -> None:
    """(d) The language server, warm: didChange -> publishDiagnostics on the single-file script (the 30 ms debounce
    included), against a `bertlint check` of the same file and a bare libcst parse, timed in this run."""
    text = SCRIPT.read_text(encoding="utf-8")
    uri = (Path(tempfile.mkdtemp()) / SCRIPT.name).as_uri()
    client = LspClient([sys.executable, "-m", "bertlint", "server"])
    client.send("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}}, request=True)
    client.until(lambda m: m.get("id") == client.next_id)
    client.send("initialized", {})
    client.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    first = client.diagnostics(uri, 1)
    latencies = []
    for version in range(2, 2 + 4 * repeat):  # a real edit each time, with and without the script's findings
        edited = text if version % 2 else text + f"\nedit_{version} = {version}\n"
        started = time.perf_counter()
        client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]})
        found = client.diagnostics(uri, version)
        latencies.append(time.perf_counter() - started)
        if len(found) != len(first):
            raise SystemExit(f"the server gave {len(found)} diagnostics after an edit that changes none ({len(first)} before)")
    client.close()
    latency = statistics.median(latencies)
    times = medians({"libcst parse only": [sys.executable, "-c", LIBCST_PARSE, str(SCRIPT)], "bertlint check": bertlint("--no-cache", SCRIPT)}, repeat)
    rows = [["what", "median s", "editor / it"], ["didChange -> diagnostics (warm server)", f"{latency:.3f}", "1.00x"]]
    rows += [[name, f"{t:.3f}", f"{latency / t:.2f}x"] for name, t in times.items()]
    report.table(f"editor: {SCRIPT.name} ({lines_of([SCRIPT])} lines), {len(first)} diagnostics, median of {len(latencies)} edits", rows)
    report.results["editor"] = {"latency": latency, "latencies": latencies, **times}
    report.check(f"editor: a warm server answers an edit in <= 0.5x a `bertlint check` of the file ({latency / times['bertlint check']:.2f}x)",
                 latency <= 0.5 * times["bertlint check"])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, default=Path("/tmp/peers"), help="folder with the torchfix, fixit, ruff and corpus venvs")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per single-file figure (bulk figures use a third, at least 1)")
    parser.add_argument("--only", nargs="+", choices=["single", "bulk", "corpus", "imports", "big", "tiny", "scaling", "editor"], default=["single", "bulk", "corpus", "imports", "big", "tiny", "scaling", "editor"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    found = peers(args.peers)
    sources = site_packages(args.peers / "corpus")
    print(f"bertlint benchmark on {os.cpu_count()} cores; peers found: {', '.join(found) or 'none'}; corpus: {sources or 'missing'}")
    report = Report()
    if "imports" in args.only:
        imports(report)
    if "single" in args.only:
        single_file(report, found, args.repeat)
    if "big" in args.only:
        big(report, max(1, args.repeat // 3))
    if "tiny" in args.only:
        tiny_files(report, max(1, args.repeat // 3))
    if "scaling" in args.only:
        scaling(report, max(3, args.repeat // 3))  # a growth ratio of two differences: the best of one run is load noise
    if "editor" in args.only:
        editor(report, args.repeat)
    if sources is None and {"bulk", "corpus"} & set(args.only):
        print(f"\nno corpus venv at {args.peers / 'corpus'}: bulk and corpus figures skipped (see benchmarks/README.md)")
    elif sources is not None:
        if "bulk" in args.only:
            with tempfile.TemporaryDirectory() as work:
                bulk(report, found, sources, Path(work), max(1, args.repeat // 3))
        if "corpus" in args.only:
            corpus(report, sources)
    if args.json:
        args.json.write_text(json.dumps(report.results, indent=2, default=str))
    failed = [what for what, ok in report.checks if not ok]
    print(f"\n{len(report.checks) - len(failed)} of {len(report.checks)} acceptance checks pass")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
