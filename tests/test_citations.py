"""Every file that a comment, docstring, string or markdown page cites exists in the repository.

A reader of a fresh clone must be able to follow each citation, so a cited file is either in
this repository or written as an upstream repository path. The rule, applied to the comments,
docstrings and strings of every .py file, to the text and links of every .md file and to the
text of config files (.toml, .sh, .conf, .txt, .cfg, .ini, .yml, Dockerfile):

1. A path-like word is a word with a slash (`core/model.py`, `docs/notes/`) or a file name with
   a known extension (`calibration.md`). URLs and templates (`test_page_<concept>.py`,
   `rank{0,1}.json.gz`) are ignored.
2. Local paths: a path whose first part is a top-level entry of this repository (`core/`,
   `docs/`, `tests/`, `.streamlit/`) must exist, read from the repository root (a glob such as
   `tests/*` must match something).
3. Other paths with a known extension (`notes/collectives.md`) and bare names of source or text
   files (`calibration.md`, `ring.py`) must be the end of the path of a file of the repository.
   Bare names of data files (`config.json`, an upload's `.csv`) are not checked.
4. Upstream paths are exempt when written right after their repository as `owner/repo path`
   (whitespace, a backtick or a bracket between them), e.g. `NVIDIA/nccl src/graph/tuning.cc`,
   or when they continue such a list after `,`, `;` or `and`
   (`NVIDIA/nccl-tests doc/PERFORMANCE.md, src/*.cu`). The two-part `owner/repo` word itself is
   never checked. Comment lines that follow each other count as one text, so the repository
   and its path may sit on consecutive comment lines.
5. A string literal that is nothing but one path (`"calibration.md"`) is a value the code reads
   or writes, not a citation, and is not checked.
6. Markdown links `[text](target)` must resolve relative to the page that holds them.
7. A section sign or "section N" right after "ref" or "reference" is rejected: it points into a
   document nobody can identify. Name the paper (with its section) or the file.

So a comment citing a note that the repository does not ship fails, and so does an upstream
file written without its repository in front of it.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = (
    "md|rst|txt|py|pyi|toml|cfg|ini|json|yaml|yml|csv|sh|c|cc|cpp|cu|cuh|h|hpp|js|ts|ipynb|html"
    "|proto|gz|png"
)
# A word with a slash, or a file name with a known extension; `*` allowed for globs.
WORD = re.compile(
    r"(?<![\w./*@-])"
    r"((?:[\w.*-]+/)+[\w.*-]*|[\w*-][\w.*-]*\.(?:" + EXTENSIONS + r"))"
    r"(?![\w*<{-])"  # not a template such as tests/test_page_<concept>.py or rank{0,1}.json
)
HAS_EXTENSION = re.compile(r"\.(?:" + EXTENSIONS + r")$")
# Bare file names are checked for source and text files only: a bare `config.json` or
# `broken.json` names a file of some model, upload or download, and `plotly.js` is a library.
BARE_EXTENSION = re.compile(r"\.(?:md|rst|txt|py|pyi|ipynb|toml|cfg|ini|sh|c|cc|cpp|cu|cuh|h|hpp)$")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.IGNORECASE)
# What may stand between `owner/repo` and its path, or between two upstream paths of one list.
UPSTREAM_GAP = re.compile(r"[\s`'\"()\[\]#]*(?:(?:[,;]|\band\b)[\s`'\"()\[\]#]*)?")
# A section sign or "section N" right after "ref" or "reference": of which document?
UNNAMED = re.compile(r"\b(?:ref|reference)(?:'s)?\.?:?\s*(?:§|sections?\s+\d)", re.IGNORECASE)
OTHER_TEXT = (".toml", ".sh", ".conf", ".txt", ".cfg", ".ini", ".yml", ".yaml", "Dockerfile")
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", ".venv"}


def repo_files(root: Path) -> set[str]:
    """Tracked and untracked-but-not-ignored files (git), or every file under root without git."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode()
        files = {f for f in out.split("\0") if f and (root / f).exists()}
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not SKIP_DIRS & set(p.relative_to(root).parts)
    }


def _dirs(files: set[str]) -> set[str]:
    return {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}


class Repo:
    """The files of a checkout, and the questions the rule asks about them."""

    def __init__(self, root: Path):
        self.root = root
        self.files = repo_files(root)
        self.dirs = _dirs(self.files)
        self.top = {f.split("/")[0] for f in self.files}

    def is_local(self, word: str) -> bool:
        return word.split("/")[0] in self.top and "/" in word

    def exists(self, path: str) -> bool:
        path = path.rstrip("/")
        if "*" in path:  # a glob (pyproject's "tests/*"): something must match it
            return any(fnmatch.fnmatch(f, path) for f in self.files | self.dirs)
        return path in self.files or path in self.dirs

    def ends_some_file(self, word: str) -> bool:
        return any(f == word or f.endswith("/" + word) for f in self.files)


def _clean(word: str) -> str:
    return word.rstrip(".")  # a sentence may end right after a path


def text_problems(text: str, repo: Repo) -> list[tuple[int, str]]:
    """(offset, message) of each cited path in one piece of prose that the rule rejects."""
    text = URL.sub(lambda m: " " * len(m.group()), text)
    found = [(m.start(), m.end(), _clean(m.group(1))) for m in WORD.finditer(text)]
    problems, upstream_until = [], None  # end of the last owner/repo or upstream path
    for i, (start, end, word) in enumerate(found):
        after_upstream = upstream_until is not None and UPSTREAM_GAP.fullmatch(
            text[upstream_until:start]
        )
        parts = word.rstrip("/").split("/")
        followed = i + 1 < len(found) and UPSTREAM_GAP.fullmatch(text[end : found[i + 1][0]])
        if after_upstream and (HAS_EXTENSION.search(word) or len(parts) > 1):
            upstream_until = end  # an upstream path, or the next one of its list
        elif repo.is_local(word):
            upstream_until = None
            if not repo.exists(word):
                problems.append((start, f"{word}: no such file or folder in the repository"))
        elif (
            len(parts) == 2
            and not word.endswith("/")
            and (followed or not HAS_EXTENSION.search(word))
        ):
            upstream_until = end  # `owner/repo` (GB/s and the like are harmless here)
        elif HAS_EXTENSION.search(word):
            upstream_until = None
            if len(parts) == 1 and not BARE_EXTENSION.search(word):
                continue
            if not repo.ends_some_file(word):
                problems.append(
                    (
                        start,
                        f"{word}: not in the repository; ship it (e.g. under docs/notes/) or write "
                        "the upstream file as 'owner/repo path'",
                    )
                )
        else:
            upstream_until = None
    problems += [
        (m.start(), f"{m.group()!r}: a section of an unnamed reference; name the paper or file")
        for m in UNNAMED.finditer(text)
    ]
    return problems


def _literal(token: str) -> str:
    """A string token's text (escapes decoded where possible; f-strings as written)."""
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, str):
        return value
    body = token.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return body[len(quote) : -len(quote)]


def python_texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment block and each string (adjacent literals joined)."""
    texts: list[tuple[int, str]] = []
    comment: list[str] = []
    strings: list[str] = []
    comment_row = string_row = last_comment_row = 0

    def flush_strings() -> None:
        joined = "".join(strings)
        if re.search(r"\s", joined.strip()):  # one bare path is a value, not a citation
            texts.append((string_row, joined))
        strings.clear()

    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            if comment and tok.start[0] != last_comment_row + 1:
                texts.append((comment_row, "\n".join(comment)))
                comment.clear()
            if not comment:
                comment_row = tok.start[0]
            comment.append(tok.string.lstrip("#"))
            last_comment_row = tok.start[0]
        elif tok.type == tokenize.STRING:
            if not strings:
                string_row = tok.start[0]
            strings.append(_literal(tok.string))
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE) and strings:
            flush_strings()
    if strings:
        flush_strings()
    if comment:
        texts.append((comment_row, "\n".join(comment)))
    return texts


def python_problems(path: Path, repo: Repo) -> list[str]:
    rel = path.relative_to(repo.root).as_posix()
    return [
        f"{rel}:{line + text[:offset].count(chr(10))}: {message}"
        for line, text in python_texts(path.read_text(encoding="utf-8"))
        for offset, message in text_problems(text, repo)
    ]


def markdown_problems(path: Path, repo: Repo) -> list[str]:
    rel = path.relative_to(repo.root).as_posix()
    text = path.read_text(encoding="utf-8")
    links = re.compile(r"\]\(([^)\s]+)\)")
    prose = links.sub(lambda m: "](" + " " * len(m.group(1)) + ")", text)  # links: checked below
    problems = [
        f"{rel}:{1 + text[:offset].count(chr(10))}: {message}"
        for offset, message in text_problems(prose, repo)
    ]
    for link in links.finditer(text):
        target = link.group(1)
        if URL.match(target) or target.startswith(("#", "mailto:")):
            continue
        linked = (path.parent / target.split("#")[0]).resolve()
        if not linked.is_relative_to(repo.root) or not repo.exists(
            linked.relative_to(repo.root).as_posix()
        ):
            line = 1 + text[: link.start()].count(chr(10))
            problems.append(f"{rel}:{line}: link ({target}) points to no file of the repository")
    return problems


def all_problems(root: Path) -> list[str]:
    repo = Repo(root)
    out = []
    for f in sorted(repo.files):
        if f.endswith(".py"):
            out += python_problems(root / f, repo)
        elif f.endswith(".md"):
            out += markdown_problems(root / f, repo)
        elif f.endswith(OTHER_TEXT):
            text = (root / f).read_text(encoding="utf-8")
            out += [
                f"{f}:{1 + text[:offset].count(chr(10))}: {message}"
                for offset, message in text_problems(text, repo)
            ]
    return out


def test_every_cited_file_is_in_the_repository():
    problems = all_problems(ROOT)
    assert not problems, "citations a fresh clone cannot follow:\n" + "\n".join(problems)


def _plant(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def test_the_checker_rejects_planted_bad_citations(tmp_path):
    # Bad names are joined at run time: this file itself must cite nothing that is missing.
    missing_note = ".".join(("planner", "md"))
    bare_upstream = "/".join(("torch/csrc/c10d", "reducer.hpp"))
    gone_note = ".".join(("docs/notes/memory", "md"))
    missing_doc = ".".join(("docs/missing", "md"))
    nowhere = ".".join(("docs/nowhere", "md"))
    unnamed = "as in the ref" + " §3.2"
    _plant(tmp_path, "docs/notes/collectives.md", "# Collectives\n")
    _plant(
        tmp_path,
        "core/mod.py",
        f'"""Doc: see {missing_note} §4."""\n'
        f"X = 1  # bucket cap ({bare_upstream})\n"
        f"# gone: {gone_note} §1\n"
        f'Y = "text citing {missing_doc} for a reason"\n'
        f"# {unnamed}\n",
    )
    _plant(tmp_path, "README.md", f"See [the notes]({nowhere}).\n")
    problems = all_problems(tmp_path)
    assert len(problems) == 6, problems
    for needle in (missing_note, bare_upstream, gone_note, missing_doc, nowhere, "unnamed"):
        assert sum(needle in p for p in problems) == 1, (needle, problems)
    lines = sorted(p.split(": ")[0] for p in problems)
    assert lines == ["README.md:1"] + [f"core/mod.py:{n}" for n in (1, 2, 3, 4, 5)]


def test_the_checker_accepts_followable_citations(tmp_path):
    _plant(tmp_path, "docs/notes/collectives.md", "# Collectives\n")
    _plant(tmp_path, "core/model.py", "")
    _plant(
        tmp_path,
        "core/mod.py",
        '"""Derivation in docs/notes/collectives.md §1 (or notes/collectives.md)."""\n'
        "# Latencies from NVIDIA/nccl src/graph/tuning.cc; buckets from (pytorch/pytorch\n"
        "# torch/csrc/distributed/c10d/reducer.hpp); busbw (NVIDIA/nccl-tests\n"
        "# doc/PERFORMANCE.md, src/*.cu and src/common.h); https://example.org/x/y.md is a URL.\n"
        'OUT = "calibration.md"  # a file the code writes: a value, not a citation\n'
        "Z = 2  # collectives.md and jax-ml/scaling-book gpus.md\n",
    )
    _plant(tmp_path, "README.md", "[notes](docs/notes/collectives.md), `core/model.py`.\n")
    assert all_problems(tmp_path) == []
