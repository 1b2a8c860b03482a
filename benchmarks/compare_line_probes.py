"""Line probes vs coverage.py's tracer on a real third-party suite: the same lines, or a list.

    python benchmarks/compare_line_probes.py [--project attrs|more-itertools]

Pull-request mode measures changed files with line probes instead of a tracer (issue 3). This
instruments *every* source file of the project, runs its suite once with probes and once
under ``coverage run``, and compares executed and missing lines file by file; it also prints
both wall times beside a bare run's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # a sibling module, found through the line above

PROBED = textwrap.dedent(
    """\
    import glob, os, sys
    from pathlib import Path
    import coverage, pytest
    from pytest_confgate.collect.coverage.line_probes import LineProbes
    out, sources, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
    found = [p for s in sources for p in glob.glob(s + "/**/*.py", recursive=True)]
    files = sorted(os.path.abspath(p) for p in found)
    probes = LineProbes.for_files([Path(p) for p in files])
    assert not probes.missed_modules(), probes.missed_modules()
    probes.install()
    code = pytest.main(args)
    probes.uninstall()
    cov = coverage.Coverage(include=files, data_file=None)
    cov.get_data().add_lines(probes.lines())
    cov.json_report(morfs=files, outfile=out)
    """
)


def compare(ws: rp.Workspace) -> tuple[list[str], dict[str, float]]:
    """Differences (empty when the engines agree) and wall seconds of each run."""
    sources = ",".join(ws.spec.sources)
    args = ["-q", "-p", "no:cacheprovider", *ws.spec.pytest_args]
    script = ws.project.parent / f"probed-{ws.spec.sdist_stem}.py"
    script.write_text(PROBED, encoding="utf-8")
    probed_json = ws.project.parent / f"probed-{ws.spec.sdist_stem}.json"
    traced_json = ws.project.parent / f"traced-{ws.spec.sdist_stem}.json"
    include = ",".join(f"{s}/*" if (ws.project / s).is_dir() else s for s in ws.spec.sources)
    data = ws.project.parent / f".coverage-{ws.spec.sdist_stem}"
    seconds = {
        "bare": ws.run([ws.python, "-m", "pytest", *args]).require(0, 1).seconds,
        "probes": ws.run([ws.python, str(script), str(probed_json), sources, *args])
        .require(0, 1)
        .seconds,
        "coverage run": ws.run(
            [
                ws.python,
                "-m",
                "coverage",
                "run",
                f"--data-file={data}",
                f"--include={include}",
                "-m",
                "pytest",
                *args,
            ]
        )
        .require(0, 1)
        .seconds,
    }
    ws.run(
        [ws.python, "-m", "coverage", "json", f"--data-file={data}", "-o", str(traced_json)]
    ).require()
    return _differences(_lines(traced_json, ws.project), _lines(probed_json, ws.project)), seconds


def _lines(report: Path, root: Path) -> dict[str, tuple[list[int], list[int]]]:
    files = json.loads(report.read_text(encoding="utf-8"))["files"]
    return {
        os.path.relpath(os.path.abspath(root / name), root): (
            data["executed_lines"],
            data["missing_lines"],
        )
        for name, data in files.items()
    }


def _differences(
    traced: dict[str, tuple[list[int], list[int]]], probed: dict[str, tuple[list[int], list[int]]]
) -> list[str]:
    problems = []
    for name in sorted(set(traced) | set(probed)):
        if name not in traced or name not in probed:
            problems.append(
                f"{name}: measured by {'probes' if name in probed else 'coverage.py'} only"
            )
            continue
        (t_run, t_miss), (p_run, p_miss) = traced[name], probed[name]
        if (t_run, t_miss) != (p_run, p_miss):
            problems.append(
                f"{name}: coverage.py only {sorted(set(t_run) - set(p_run))}, "
                f"probes only {sorted(set(p_run) - set(t_run))}"
            )
    if not traced:
        problems.append("coverage.py measured no file")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(rp.PROJECTS), default="attrs")
    parser.add_argument("--cache", type=Path, default=rp.DEFAULT_CACHE)
    args = parser.parse_args()
    with rp.exclusive(args.cache):
        ws = rp.prepare(rp.PROJECTS[args.project], args.cache)
        problems, seconds = compare(ws)
    for name, value in seconds.items():
        print(f"{name:>13}: {value:7.2f} s  ({value / seconds['bare']:.2f}x bare)")
    print("\n".join(problems) or "every file: the same executed and missing lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
