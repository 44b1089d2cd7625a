#!/usr/bin/env python3
"""Makes Tests/KBEmbedTests/Fixtures/tiny-xlmr: a tiny XLM-RoBERTa-style sentence model in the
standard Hugging Face layout, and the reference token ids and embeddings kb's Swift tests must
reproduce. Run through scripts/make-xlmr-fixture.sh (transformers, tokenizers, sentencepiece and
torch in a throwaway venv). The output is committed; CI does not run this.

- The tokenizer is a SentencePiece Unigram model trained on kb's sample corpus (the English planet
  notes and the Ukrainian and Arabic notes in corpus/multilingual, front matter left out) with the
  `nmt_nfkc` rule, turned into tokenizer.json the way
  transformers' XLM-R converter does it (fairseq ids: <s> 0, <pad> 1, </s> 2, <unk> 3, pieces
  after, <mask> last): the precompiled charsmap normaliser and a space-run Replace, Metaspace,
  Unigram with scores, `<s> … </s>`, as in the multilingual-e5 and paraphrase-multilingual files.
- The model is XLMRobertaModel with 2 layers whose weights come from a tiny deterministic generator
  (`fixture_weights`: SplitMix64 per tensor, seeded by the tensor's name), which kb's tests
  re-implement to write model.safetensors themselves: no weights are committed.
- The reference embeddings are sentence-transformers' recipe: mean pooling, then L2 normalisation,
  with the `query: ` / `passage: ` prompts of config_sentence_transformers.json.
"""
import glob
import json
import os
import shutil
import sys
import tempfile

import sentencepiece as spm
import torch
from sentencepiece import sentencepiece_model_pb2
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "KBEmbedTests", "Fixtures", "tiny-xlmr")

def training_text():
    """The body text of the corpus notes the tokenizer learns from (front matter dropped)."""
    lines = []
    for pattern in ["planets/*.md", "multilingual/uk/*.md", "multilingual/ar/*.md"]:
        for path in sorted(glob.glob(os.path.join(ROOT, "corpus", pattern))):
            text = open(path, encoding="utf-8").read()
            if text.startswith("---"):
                text = text.split("---", 2)[2]
            lines += [line.lstrip("# ").strip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines)


# Texts whose ids and embeddings the Swift tests check: the three languages, text the
# normaliser changes (full-width letters, ligatures, compatibility forms, combining marks,
# runs of spaces, tabs and line breaks, Arabic presentation forms and tatweel), words the
# vocabulary does not hold, and a text long enough to be truncated.
SAMPLES = [
    "What does Saturn rule?",
    "Місяць змінює знак кожні два-три дні.",
    "Чому Сатурн повертається через двадцять дев'ять років?",
    "يتحرك القمر نحو ثلاث عشرة درجة في اليوم.",
    "الكواكب والنجوم",
    "Ｆｕｌｌ-width ＡＢＣ １２３ and the ﬁ ligature, ½ and ™",
    "Cafe\u0301 and café, Å and Å",
    "  leading   and    many     spaces\tand\ttabs\nand lines  ",
    "\u0640\u0627\u0644\u0640\u0640\u0642\u0645\u0631 and ﻻ ﷲ",
    "Zebra quartz xylophone 🚀 emoji ☃ and ⅻ",
    "special tokens in text: <s> and <mask> stay special",
    "",
    "a",
    " ".join(["Venus rules relationships, pleasure and money, and Mars rules action."] * 30),
]


SEED = 20261123


def fnv1a64(text):
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def fixture_tensor(name, count):
    """The values of one tensor, as Tests/KBEmbedTests/TinyXLMR.swift makes them: uniform around
    1 (LayerNorm weights, ±0.1), 0 (biases, ±0.1) or 0 (matrices, ±0.35), each from 24 random bits."""
    if name.endswith("LayerNorm.weight"):
        center, scale = 1.0, 0.1
    elif name.endswith(".bias"):
        center, scale = 0.0, 0.1
    else:
        center, scale = 0.0, 0.35
    state = fnv1a64(name) ^ SEED
    values = []
    for _ in range(count):
        state, bits = splitmix64(state)
        unit = (bits >> 40) * (1.0 / 16777216.0)
        values.append(center + scale * (2.0 * unit - 1.0))
    return values


def main():
    work = tempfile.mkdtemp()
    try:
        corpus = os.path.join(work, "train.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(training_text() + "\n")
        prefix = os.path.join(work, "spm")
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=prefix, model_type="unigram", vocab_size=600,
            normalization_rule_name="nmt_nfkc", character_coverage=1.0, hard_vocab_limit=False,
            bos_id=1, eos_id=2, unk_id=0, pad_id=-1, num_threads=1)
        proto = sentencepiece_model_pb2.ModelProto()
        with open(prefix + ".model", "rb") as f:
            proto.ParseFromString(f.read())
    finally:
        shutil.rmtree(work)
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab += [(piece.piece, piece.score) for piece in proto.pieces[3:]]
    vocab += [("<mask>", 0.0)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, model_max_length=128, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
        sep_token="</s>", cls_token="<s>", pad_token="<pad>", mask_token="<mask>")

    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    fast.save_pretrained(OUT)
    for name in ["sentencepiece.bpe.model", "special_tokens_map.json"]:
        path = os.path.join(OUT, name)
        if os.path.exists(path):
            os.remove(path)

    config = XLMRobertaConfig(
        vocab_size=len(fast), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=128 + 2, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        layer_norm_eps=1e-5, hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = XLMRobertaModel(config, add_pooling_layer=False).eval()
    with torch.no_grad():
        for name, parameter in model.state_dict().items():
            values = torch.tensor(fixture_tensor(name, parameter.numel()), dtype=torch.float64).to(torch.float32)
            parameter.copy_(values.reshape(parameter.shape))
    # config.json only: the weights are made again by the tests (TinyXLMR.swift).
    config.save_pretrained(OUT)
    with open(os.path.join(OUT, "tensors.json"), "w") as f:
        json.dump({name: list(p.shape) for name, p in model.state_dict().items()}, f, indent=1, sort_keys=True)

    with open(os.path.join(OUT, "modules.json"), "w") as f:
        json.dump([
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ], f, indent=2)
    os.makedirs(os.path.join(OUT, "1_Pooling"))
    with open(os.path.join(OUT, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 32, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}, f, indent=2)
    with open(os.path.join(OUT, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 128, "do_lower_case": False}, f, indent=2)
    with open(os.path.join(OUT, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None}, f, indent=2)

    def embed(text):
        encoded = fast(text, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**encoded).last_hidden_state[0]
        mask = encoded["attention_mask"][0].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(0) / mask.sum()
        return encoded["input_ids"][0].tolist(), torch.nn.functional.normalize(pooled, dim=0).tolist()

    references = []
    for text in SAMPLES:
        ids, vector = embed(text)
        query_ids, query_vector = embed("query: " + text)
        passage_ids, passage_vector = embed("passage: " + text)
        references.append({
            "text": text, "ids": ids, "pieces": fast.convert_ids_to_tokens(ids), "embedding": vector,
            "query_ids": query_ids, "query_embedding": query_vector,
            "passage_ids": passage_ids, "passage_embedding": passage_vector,
        })
    with open(os.path.join(OUT, "..", "tiny-xlmr-reference.json"), "w", encoding="utf-8") as f:
        json.dump({"model": "tiny-xlmr", "samples": references}, f, ensure_ascii=False, indent=1)
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)) if os.path.isfile(os.path.join(OUT, name)) else "", file=sys.stderr)


if __name__ == "__main__":
    main()
