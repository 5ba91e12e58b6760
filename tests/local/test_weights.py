"""The weights written once in Q8_0: the same model, in the encoding llama.cpp reads fast."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest

from swarm.errors import ConfigError
from swarm.local.weights import encode_weights

Q = gguf.GGMLQuantizationType


def _write_model(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A small GGUF file as the wheel's: metadata of each kind, a Q4_1 matrix, an F32
    vector. Returns the matrix as Q4_1 holds it, and the vector."""
    rng = np.random.default_rng(7)
    matrix = gguf.quants.quantize(rng.normal(size=(4, 64)).astype(np.float32), Q.Q4_1)
    vector = rng.normal(size=64).astype(np.float32)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("tiny")
    writer.add_context_length(2048)
    writer.add_token_list(["<s>", "</s>", "héllo", "\u0120x"])
    writer.add_token_scores([0.0, -1.5, 2.25, 3.0])
    writer.add_tensor("blk.0.attn_q.weight", matrix, raw_shape=matrix.shape, raw_dtype=Q.Q4_1)
    writer.add_tensor("output_norm.weight", vector)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return gguf.quants.dequantize(matrix, Q.Q4_1), vector


def test_q4_1_matrices_become_q8_0_within_its_rounding_and_the_rest_is_kept(
    tmp_path: Path,
) -> None:
    weights, vector = _write_model(tmp_path / "model.gguf")
    encode_weights(tmp_path / "model.gguf", tmp_path / "cache" / "model.Q8_0.gguf")

    before = gguf.GGUFReader(tmp_path / "model.gguf")
    after = gguf.GGUFReader(tmp_path / "cache" / "model.Q8_0.gguf")
    fields = {name: field.contents() for name, field in before.fields.items()}
    assert {name: field.contents() for name, field in after.fields.items()} == fields
    assert fields["tokenizer.ggml.tokens"] == ["<s>", "</s>", "héllo", "\u0120x"]
    tensors = {t.name: t for t in after.tensors}
    matrix = tensors["blk.0.attn_q.weight"]
    assert matrix.tensor_type == Q.Q8_0
    got = gguf.quants.dequantize(matrix.data, Q.Q8_0)
    assert got.shape == weights.shape == (4, 64)
    # a weight moves by half a Q8_0 step (its block's largest / 254) and what rounding
    # the block's scale to 16 bits adds: less than 1/220 of the largest
    for row_got, row_had in zip(got, weights, strict=True):
        for block in range(0, 64, 32):
            had = row_had[block : block + 32]
            moved = np.abs(row_got[block : block + 32] - had).max()
            assert 0 < moved < np.abs(had).max() / 220
    norm = tensors["output_norm.weight"]
    assert norm.tensor_type == Q.F32
    assert np.array_equal(norm.data, vector)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["model.Q8_0.gguf"]


def test_weights_that_cannot_be_read_are_an_error_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    (tmp_path / "model.gguf").write_bytes(b"not a model")
    with pytest.raises(ConfigError) as caught:
        encode_weights(tmp_path / "model.gguf", tmp_path / "cache" / "model.Q8_0.gguf")
    assert f"cannot read the weights {tmp_path / 'model.gguf'}" in caught.value.message
    assert not (tmp_path / "cache").exists()


def test_a_place_that_cannot_be_written_is_an_error_naming_it(tmp_path: Path) -> None:
    _write_model(tmp_path / "model.gguf")
    (tmp_path / "cache").write_text("a file where the folder would go\n")
    with pytest.raises(ConfigError) as caught:
        encode_weights(tmp_path / "model.gguf", tmp_path / "cache" / "models" / "m.gguf")
    assert f"cannot write the weights to {tmp_path / 'cache' / 'models'}" in caught.value.message
    assert (tmp_path / "cache").read_text() == "a file where the folder would go\n"
