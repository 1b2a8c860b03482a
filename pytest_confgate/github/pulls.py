"""What a pull request changes and what a file says at a commit, as GitHub tells it.

The publish step never runs the change's code and has no checkout; these two reads let it work
out the change's risk tier from data the change cannot forge (``gate.rederive``): the file list
of the pull request and the base commit's configuration.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import quote

from pytest_confgate.exceptions import GitHubError
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.models import ChangeStatus, FileChange

MAX_FILES = 3000
"""GitHub lists at most 3000 files of a pull request; at that count the list may be cut."""
_STATUS: dict[str, ChangeStatus] = {
    "added": "added",
    "removed": "deleted",
    "modified": "modified",
    "renamed": "renamed",
    "copied": "copied",
    "changed": "modified",
    "unchanged": "modified",
}


def pull_request_files(client: GitHubClient, repo: str, number: int) -> list[FileChange]:
    """Every file of the pull request (both names of a rename); raises ``GitHubError``."""
    listed = client.paginate(f"/repos/{_path(repo)}/pulls/{number}/files", max_pages=31)
    if len(listed) >= MAX_FILES:
        raise GitHubError(
            f"pull request #{number} changes {len(listed)} files or more: GitHub lists no more, "
            "so the rest cannot be judged"
        )
    files = []
    for item in listed:
        name = item.get("filename") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            raise GitHubError(f"pull request #{number}: a file entry without a filename")
        old = item.get("previous_filename")
        status = _STATUS.get(str(item.get("status")), "modified")
        files.append(FileChange(name, old if isinstance(old, str) else None, status))
    return files


MAX_COMMITS = 250
"""GitHub lists at most 250 commits of a pull request; at that count the list may be cut."""
_COMMIT_FILE_PAGES = 30


def pull_request_commit_paths(client: GitHubClient, repo: str, number: int) -> frozenset[str]:
    """Every path some commit of the pull request touched (both names of a rename): a file
    added and removed again is not in the final file list, and risk rules still see it.

    Raises ``GitHubError`` when GitHub cannot list them all (250 commits or more).
    """
    commits = client.paginate(f"/repos/{_path(repo)}/pulls/{number}/commits", max_pages=3)
    if len(commits) >= MAX_COMMITS:
        raise GitHubError(
            f"pull request #{number} has {len(commits)} commits or more: GitHub lists no more, "
            "so the files of the rest cannot be judged"
        )
    paths: set[str] = set()
    for item in commits:
        sha = item.get("sha") if isinstance(item, dict) else None
        if not isinstance(sha, str) or not sha:
            raise GitHubError(f"pull request #{number}: a commit entry without a sha")
        paths |= _commit_paths(client, repo, sha)
    return frozenset(paths)


def _commit_paths(client: GitHubClient, repo: str, sha: str) -> set[str]:
    """The files of one commit, page by page (GitHub gives 300 at most per page)."""
    paths: set[str] = set()
    for page in range(1, _COMMIT_FILE_PAGES + 1):
        answer = client.get(f"/repos/{_path(repo)}/commits/{quote(sha, safe='')}"
                            f"?per_page=100&page={page}")
        files = answer.get("files") if isinstance(answer, dict) else None
        if not isinstance(files, list):
            raise GitHubError(f"commit {sha[:12]}: GitHub gave no file list")
        for entry in files:
            if isinstance(entry, dict):
                paths.update(name for name in (entry.get("filename"),
                                               entry.get("previous_filename"))
                             if isinstance(name, str) and name)
        if len(files) < 100:
            return paths
    raise GitHubError(f"commit {sha[:12]} changes more files than GitHub lists: the rest "
                      "cannot be judged")


def file_at(client: GitHubClient, repo: str, path: str, ref: str) -> str | None:
    """The text of ``path`` at commit ``ref``; None when no such file is there.

    Raises ``GitHubError`` when the answer is not a file's text (a folder, a file over GitHub's
    1 MB content limit, not UTF-8): the caller must not guess what it says.
    """
    url = f"/repos/{_path(repo)}/contents/{quote(path, safe='/')}?ref={quote(ref, safe='')}"
    try:
        answer = client.get(url)
    except GitHubError as exc:
        if exc.status == 404:
            return None
        raise
    if not isinstance(answer, dict) or answer.get("type") != "file":
        raise GitHubError(f"{path} at {ref[:12]} is not a file")
    if answer.get("encoding") != "base64" or not isinstance(answer.get("content"), str):
        raise GitHubError(f"{path} at {ref[:12]}: GitHub gave no text (over 1 MB?)")
    try:
        return base64.b64decode(answer["content"]).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise GitHubError(f"{path} at {ref[:12]}: not UTF-8 text ({exc})") from exc


def folder_entries(client: GitHubClient, repo: str, path: str, ref: str) -> list[tuple[str, str]]:
    """(name, ``file``/``dir``) of the folder ``path`` at commit ``ref``; empty when there is
    no such folder. Raises ``GitHubError`` otherwise."""
    where = f"/{quote(path.strip('/'), safe='/')}" if path.strip("/") else ""
    try:
        answer = client.get(f"/repos/{_path(repo)}/contents{where}?ref={quote(ref, safe='')}")
    except GitHubError as exc:
        if exc.status == 404:
            return []
        raise
    if not isinstance(answer, list):
        return []  # a file, not a folder
    return [(str(item.get("name")), str(item.get("type"))) for item in answer
            if isinstance(item, dict) and isinstance(item.get("name"), str)]


def _path(repo: str) -> str:
    return "/".join(quote(part.strip(), safe="") for part in repo.split("/"))
