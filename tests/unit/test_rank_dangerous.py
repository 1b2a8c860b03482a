"""Dangerous operations read from the syntax tree, where a suppression comment hides nothing."""

from __future__ import annotations

import pytest

from pytest_confgate.rank.dangerous import new_operations, operations


def rules(source: str) -> list[str]:
    return [issue.rule for issue in operations(source, "m.py")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('import os\nos.system("rm -rf /")\n', ["recursive-delete", "shell"]),
        ("import os\nos.system(cmd)  # nosec\n", ["shell"]),
        ("from os import system as run\nrun(cmd)\n", ["shell"]),
        ("import subprocess as sp\nsp.run(cmd, shell=True)\n", ["shell"]),
        ("import subprocess\nsubprocess.run(cmd, shell=flag)\n", ["shell"]),
        ("value = eval(text)  # nosec\n", ["dynamic-code"]),
        ("exec(code)\n", ["dynamic-code"]),
        ("import pickle\npickle.loads(blob)\n", ["unsafe-deserialisation"]),
        ("import yaml\nyaml.load(text)\n", ["unsafe-deserialisation"]),
        ("import yaml\nyaml.load(text, Loader=yaml.FullLoader)\n", ["unsafe-deserialisation"]),
        ("import shutil\nshutil.rmtree(path)\n", ["recursive-delete"]),
        ('import shutil\nshutil.rmtree("/")\n', ["recursive-delete"]),
        ('import subprocess\nsubprocess.run(["rm", "-rf", target])\n', ["recursive-delete"]),
        ('cursor.execute("DROP TABLE users")\n', ["destructive-sql"]),
        ('cursor.execute(f"drop  table {name}")\n', ["destructive-sql"]),
        ('sql = "TRUNCATE orders"\n', ["destructive-sql"]),
        ('sql = "DELETE FROM sessions;"\n', ["destructive-sql"]),
        ('sql = "ALTER TABLE t DROP COLUMN c"\n', ["destructive-sql"]),
        ('import subprocess\nsubprocess.run(["sh", "-c", cmd])\n', ["shell"]),
        ('import subprocess\nsubprocess.check_call(args=("/bin/bash", "-lc", c))\n', ["shell"]),
        ('import os\nos.execvp("cmd", ["cmd.exe", "/C", c])\n', ["shell"]),
        ('from subprocess import Popen\nPopen(("/bin/bash", "-ec", script))\n', ["shell"]),
        ('import os\nos.execvp("sh", ["sh", "-c", command])\n', ["shell"]),
    ],
    ids=["rm-rf-root", "system-nosec", "aliased-system", "shell-true", "shell-variable",
         "eval-nosec", "exec", "pickle", "yaml-load", "yaml-full-loader", "rmtree-computed",
         "rmtree-root", "rm-argv", "drop-table", "drop-table-fstring", "truncate",
         "delete-everything", "drop-column", "sh-c-argv", "bash-lc-argv", "cmd-c-argv",
         "bash-ec-tuple", "execvp-sh-c"],
)
def test_dangerous_operations_are_found(source: str, expected: list[str]) -> None:
    assert rules(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        'value = eval("1 + 1")\n',
        'import re\npattern = re.compile(text)\n',
        "import subprocess\nsubprocess.run(argv, shell=False)\n",
        "import subprocess\nsubprocess.run([\"ls\", path])\n",
        "import subprocess\nsubprocess.run([\"bash\", \"script.sh\"])\n",
        'import subprocess\nsubprocess.run(["ls", "-c", path])\n',
        'import shutil\nshutil.rmtree("build")\n',
        "import yaml\nyaml.load(text, Loader=yaml.SafeLoader)\n",
        "import yaml\nyaml.safe_load(text)\n",
        'sql = "DELETE FROM sessions WHERE expires < ?"\n',
        '"""Never run `rm -rf /` or DROP TABLE here."""\n',
        "def f():\n    \"\"\"Wraps DROP TABLE for tests.\"\"\"\n",
        "# os.system('rm -rf /')\n",
        "this is not python (",
    ],
    ids=["eval-literal", "re-compile", "shell-false", "argv-without-rm", "bash-script", "ls-c",
         "rmtree-literal",
         "yaml-safe-loader", "yaml-safe-load", "delete-with-where", "module-docstring",
         "function-docstring", "comment", "unparsable"],
)
def test_safe_code_and_prose_are_not_flagged(source: str) -> None:
    assert rules(source) == []


def test_each_finding_names_the_line_and_the_code() -> None:
    (found,) = operations("x = 1\nvalue = eval(text)  # nosec\n", "calc/parse.py")
    assert (found.path, found.line, found.severity) == ("calc/parse.py", 2, "HIGH")
    assert found.message == "eval() runs code that is not a literal: eval(text)"


def test_only_operations_the_baseline_does_not_have_are_new() -> None:
    base = {"app.py": "import os\nos.system(cmd)\n"}
    head = {"app.py": "import os\n\n\nos.system(cmd)\nos.system(cmd)\nexec(code)\n"}
    found = new_operations(head, base, head)
    assert [(f.rule, f.line) for f in found] == [("shell", 5), ("dynamic-code", 6)]
    assert [f.rule for f in new_operations(head, None, head)] == ["shell", "shell",
                                                                  "dynamic-code"]
