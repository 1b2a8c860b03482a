"""A real third-party project, its own test suite and this repo, in a throwaway venv.

Shared by ``compare_real_project.py`` and ``tests/integration/test_real_project.py``: the
acceptance evidence of issue 2 must come from code we did not write, installed the way a user
would install it (a pinned sdist from the package index, which ships its tests), never from a
fixture tuned to pass. Everything is cached under one directory so a second run only re-extracts
the sdist (a pristine tree each time) and skips the slow venv build.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# Outside the repository: a project nested in our tree would see our .gitignore files (ruff
# honours them) and our configuration, and would no longer be measured as its users see it.
DEFAULT_CACHE = Path(
    os.environ.get("CONFGATE_BENCH_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-confgate-bench"
)
REPO_CACHE = REPO_ROOT / ".confgate" / "bench"
"""Where gate_speed, fixed_cost and compat_corpus keep their venvs and trees (git-ignored)."""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
_BIN = "Scripts" if os.name == "nt" else "bin"
_READY_MARKER = ".confgate-bench-ready.json"
# The caller's environment must not steer the tools: the comparison is only fair when both
# sides see the project's own configuration and nothing else.
_SCRUBBED_ENV = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "CONFGATE_CONFIG",
    "COVERAGE_FILE",
    "COVERAGE_RCFILE",
    "COVERAGE_PROCESS_START",
    "COVERAGE_CORE",
    "COV_CORE_SOURCE",
    # A machine that sets it (this one does) recompiles every module of every run, the
    # gate's own included: users' machines write bytecode.
    "PYTHONDONTWRITEBYTECODE",
)


@dataclass(frozen=True)
class ProjectSpec:
    """A pinned project: what to download, what counts as its source, what its tests need."""

    name: str
    version: str
    sources: tuple[str, ...]
    test_requirements: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()
    changed: str = ""
    """The module a simulated pull request edits (``gate_speed.py``); default: the first."""

    @property
    def sdist_stem(self) -> str:
        """The sdist's file and top-level folder name (PEP 625 normalises ``-`` to ``_``)."""
        return f"{self.name.replace('-', '_').lower()}-{self.version}"


PROJECTS: dict[str, ProjectSpec] = {
    # unittest-style suite with subTest()s, flat layout, ruff config in pyproject. Two runs of
    # it must take the same branches: pytest-randomly reseeds `random` before every test
    # (order kept) for the tests that draw unseeded random data, and the one test that races
    # threads on purpose is left out: whether it reaches the inner re-check of
    # _concurrent_tee.__next__'s double-checked lock (more.py:5571->5574) is up to the OS
    # scheduler, not to the tool measuring it.
    "more-itertools": ProjectSpec(
        name="more-itertools",
        version="11.2.1",
        sources=("more_itertools",),
        test_requirements=("pytest-randomly",),
        pytest_args=(
            *("-p", "randomly", "--randomly-seed=0", "--randomly-dont-reorganize"),
            *("--deselect", "tests/test_more.py::TestConcurrentTee::test_concurrent_consumers"),
        ),
    ),
    # pytest + hypothesis suite, src layout, [tool.coverage] with branch/parallel/source_pkgs.
    # A fixed hypothesis seed makes two runs of the suite execute the same code paths.
    "attrs": ProjectSpec(
        name="attrs",
        version="25.4.0",
        sources=("src/attr", "src/attrs"),
        test_requirements=("hypothesis", "pympler", "cloudpickle"),
        pytest_args=("--hypothesis-seed=0",),
    ),
    # Issue 19's speed benchmark. click: src layout, pytest, `filterwarnings = error` (a
    # warning the gate lets escape aborts the run), [tool.coverage] with branch = true.
    "click": ProjectSpec(
        name="click", version="8.5.1", sources=("src/click",), changed="src/click/formatting.py"
    ),
    # pyparsing: a flat layout and a hot-loop parser (every probe left in a loop shows).
    "pyparsing": ProjectSpec(
        name="pyparsing",
        version="3.3.3",
        sources=("pyparsing",),
        test_requirements=("railroad-diagrams", "jinja2"),
        pytest_args=("tests",),
        changed="pyparsing/util.py",
    ),
    # Opt-in: a large suite (minutes on 2 cores); the gate must scale with it.
    "networkx": ProjectSpec(
        name="networkx",
        version="3.6.1",
        sources=("networkx",),
        pytest_args=("networkx",),
        changed="networkx/utils/misc.py",
    ),
}


@dataclass(frozen=True)
class Run:
    """One finished command: what it printed and how long it took.

    ``cpu_seconds`` (user + system of the command and its children) is steadier than the wall
    clock on a shared virtual machine, where a neighbour can slow one run by 20%.
    """

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float = 0.0

    def require(self, *codes: int) -> Run:
        """Return self, or raise with the command's output when its exit code is unexpected."""
        if self.returncode in (codes or (0,)):
            return self
        raise RuntimeError(
            f"{' '.join(self.argv)} exited with {self.returncode}\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"
        )


@dataclass(frozen=True)
class Workspace:
    """A prepared project: its extracted tree and the venv it is installed in."""

    spec: ProjectSpec
    project: Path
    venv: Path
    env: dict[str, str] = field(repr=False)

    def tool(self, name: str) -> str:
        """Absolute path of a console script installed in the venv (``ruff``, ``bandit``)."""
        return str(self.venv / _BIN / name)

    @property
    def python(self) -> str:
        """The venv's interpreter."""
        return self.tool("python")

    def run(
        self, argv: list[str], *, env: dict[str, str] | None = None, timeout_s: float = 1800.0
    ) -> Run:
        """Run ``argv`` in the project directory, venv first on PATH, ``env`` added."""
        return run(argv, cwd=self.project, env={**self.env, **(env or {})}, timeout_s=timeout_s)


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float = 1800.0) -> Run:
    """Run a command, capture its output and time it; an argv list, never a shell."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(list(argv), proc.returncode, proc.stdout, proc.stderr, elapsed, cpu)


@contextlib.contextmanager
def exclusive(cache: Path = DEFAULT_CACHE) -> Iterator[None]:
    """Hold the cache for one comparison at a time.

    Two comparisons in one cache (the script and the slow test, two CI jobs) would
    re-extract the tree and overwrite each other's reports mid-run; the second one waits.
    """
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


INSTALLS = ("editable", "wheel")
"""How this repository goes into a project's venv: ``editable`` (``pip install -e``, the
default: a change is seen at once) or ``wheel`` (a wheel built from the working tree, as a
user installs the release: only what the wheel ships, imported from site-packages)."""


def prepare(
    spec: ProjectSpec, cache: Path = DEFAULT_CACHE, *, fresh: bool = False,
    install: str = "editable",
) -> Workspace:
    """A pristine extracted project installed, with its tests' needs and this repo, in a venv.

    The venv is reused when it was built for the same spec, repo and ``install`` (it is the
    slow part); the source tree is re-extracted every time so no earlier run's files can leak
    in. With ``install="wheel"`` a reused venv gets a wheel of the working tree as it is now.
    """
    if install not in INSTALLS:
        raise ValueError(f"install: one of {', '.join(INSTALLS)}, not {install!r}")
    cache = cache.resolve()
    # One venv per Python: the benchmarks run under 3.11, 3.13 and 3.14 from one checkout.
    venv = cache / f"venv-{spec.sdist_stem}-py{sys.version_info[0]}.{sys.version_info[1]}"
    if install != "editable":
        venv = venv.with_name(f"{venv.name}-{install}")
    if fresh:
        shutil.rmtree(cache / "sdists", ignore_errors=True)
        shutil.rmtree(venv, ignore_errors=True)
    env = _clean_env(venv)
    ready = _is_ready(venv, spec, install)
    if not ready:
        shutil.rmtree(venv, ignore_errors=True)
        _make_venv(venv, env)
    python = str(venv / _BIN / "python")
    project = _extract(_download(python, spec, cache / "sdists", env), cache / "src", spec)
    if not ready:
        _install(python, venv, project, spec, env, install, cache)
    elif install == "wheel":
        wheel = build_wheel(python, cache / "wheels", env)
        argv = [python, "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheel)]
        run(argv, cwd=venv, env=env, timeout_s=600).require()
    return Workspace(spec=spec, project=project, venv=venv, env=env)


def build_wheel(python: str, where: Path, env: dict[str, str]) -> Path:
    """A wheel of this repository's working tree (tracked and new files, not ignored ones),
    built from a copy: a ``build/`` folder left in the tree would put stale modules in it."""
    listed = run(["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], cwd=REPO_ROOT,
                 env={**env, **GIT_ENV}).require()
    shutil.rmtree(where, ignore_errors=True)
    tree, out = where / "tree", where / "dist"
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():  # listed but deleted in the working tree: not shipped
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    argv = [python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(tree)]
    run(argv, cwd=where, env=env, timeout_s=900).require()
    shutil.rmtree(tree, ignore_errors=True)
    wheels = sorted(out.glob("pytest_confgate-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"pip wheel left {len(wheels)} pytest-confgate wheels in {out}")
    return wheels[0]


def _clean_env(venv: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED_ENV}
    env["PATH"] = os.pathsep.join([str(venv / _BIN), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    # Hash randomisation can change set order and so the branches a suite takes; two runs
    # of the same suite must execute the same code to be compared line by line.
    env["PYTHONHASHSEED"] = "0"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _download(python: str, spec: ProjectSpec, where: Path, env: dict[str, str]) -> Path:
    """The cached sdist, fetched with pip from the package index on first use."""
    sdist = where / f"{spec.sdist_stem}.tar.gz"
    if sdist.is_file():
        return sdist
    where.mkdir(parents=True, exist_ok=True)
    argv = [python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    argv += ["--dest", str(where), f"{spec.name}=={spec.version}"]
    run(argv, cwd=where, env=env, timeout_s=600).require()
    if not sdist.is_file():
        raise RuntimeError(f"pip downloaded no {sdist.name} into {where}")
    return sdist


def _extract(sdist: Path, where: Path, spec: ProjectSpec) -> Path:
    project = where / spec.sdist_stem
    shutil.rmtree(project, ignore_errors=True)
    where.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(where, filter="data")  # the "data" filter refuses unsafe members
    if not project.is_dir():
        raise RuntimeError(f"{sdist.name} has no top-level folder {spec.sdist_stem}/")
    _stand_alone(project)
    return project


def _stand_alone(project: Path) -> None:
    """Stop pytest and ruff from adopting an enclosing project's configuration.

    Both search parent directories for their settings, and the cache sits inside this repo:
    a project with no pytest (or ruff) settings of its own would run under ours (our
    ``testpaths``, our ``addopts``, our rootdir). An empty file of their own gives them the
    defaults they get in a checkout of their own, and changes no Python file.
    """
    if not _has_pytest_config(project):
        (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    if not _has_ruff_config(project):
        (project / "ruff.toml").write_text("# defaults, as standalone\n", encoding="utf-8")


def _has_pytest_config(project: Path) -> bool:
    if (project / "pytest.ini").is_file() or (project / ".pytest.ini").is_file():
        return True
    pyproject = _read(project / "pyproject.toml")
    if re.search(r"^\[tool\.pytest(\.ini_options)?\]", pyproject, flags=re.MULTILINE):
        return True
    if re.search(r"^\[pytest\]", _read(project / "tox.ini"), flags=re.MULTILINE):
        return True
    return bool(re.search(r"^\[tool:pytest\]", _read(project / "setup.cfg"), flags=re.MULTILINE))


def _has_ruff_config(project: Path) -> bool:
    if (project / "ruff.toml").is_file() or (project / ".ruff.toml").is_file():
        return True
    return bool(re.search(r"^\[tool\.ruff", _read(project / "pyproject.toml"), flags=re.MULTILINE))


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _make_venv(venv: Path, env: dict[str, str]) -> None:
    venv.parent.mkdir(parents=True, exist_ok=True)
    run([sys.executable, "-m", "venv", str(venv)], cwd=venv.parent, env=env).require()


def _install(
    python: str, venv: Path, project: Path, spec: ProjectSpec, env: dict[str, str],
    install: str = "editable", cache: Path = DEFAULT_CACHE,
) -> None:
    """One pip call, so a test dependency that needs the project gets this very checkout.

    The project editable, because the tests must import the extracted sources that coverage,
    ruff and bandit measure (attrs' pytest config even makes ``src`` unimportable otherwise);
    this repository editable or as a wheel (``install``).
    """
    this = ["-e", str(REPO_ROOT)]
    if install == "wheel":
        this = [str(build_wheel(python, cache / "wheels", env))]
    argv = [python, "-m", "pip", "install", *this, "-e", str(project)]
    argv += list(spec.test_requirements)
    # An sdist has no git history; hatch-vcs/setuptools-scm would otherwise guess 0.0.
    build_env = {**env, "SETUPTOOLS_SCM_PRETEND_VERSION": spec.version}
    run(argv, cwd=project, env=build_env, timeout_s=1800).require()
    (venv / _READY_MARKER).write_text(_fingerprint(spec, install), encoding="utf-8")


def _is_ready(venv: Path, spec: ProjectSpec, install: str = "editable") -> bool:
    marker = venv / _READY_MARKER
    return marker.is_file() and marker.read_text(encoding="utf-8") == _fingerprint(spec, install)


def _fingerprint(spec: ProjectSpec, install: str = "editable") -> str:
    """What the venv was built from; any change (a version bump, a moved repo) rebuilds it."""
    found: dict[str, object] = {"spec": asdict(spec), "repo": str(REPO_ROOT)}
    if install != "editable":  # an editable venv built before the option stays valid
        found["install"] = install
    return json.dumps(found, sort_keys=True)
