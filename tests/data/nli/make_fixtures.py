#!/usr/bin/env python3
"""Generate the tiny NLI cross-encoder fixtures in tests/data/nli/.

What it makes (all next to this file):

  tiny-bert/         config.json, tokenizer.json, model.safetensors
                     A randomly initialised BertForSequenceClassification
                     (hidden 32, 2 layers, 4 heads, 3 labels) and a WordPiece
                     tokenizer (BertNormalizer + BertPreTokenizer, ~800 tokens)
                     whose vocabulary is learned here from a fixed corpus.
  tiny-deberta-v3/   config.json, tokenizer.json, model.safetensors
                     A randomly initialised DebertaV2ForSequenceClassification
                     configured like DeBERTa-v3 (relative attention, 16
                     log-buckets, shared attention key, p2c+c2p, no absolute
                     positions, no token types, no conv layer) and a Unigram
                     tokenizer (NFKC + Metaspace "▁", ~470 pieces) trained here
                     with SentencePiece and converted to a tokenizers Unigram
                     model, as real DeBERTa-v3 tokenizer.json files are.
  logits.json        Premise/hypothesis pairs and, per model, the input_ids and
                     token_type_ids produced by the saved tokenizer.json and the
                     float32 logits computed by the reference PyTorch
                     implementation (one pair at a time, no padding); plus the
                     DeBERTa relative-position bucket table
                     (deberta_rel_pos_buckets) of the installed transformers.

Every parameter is perturbed with fixed-seed noise after the random init, so
the logits are far from zero and differ between pairs: a wrong tensor name, a
transposed matrix or a missing bias in a port shows up as a logit mismatch.
The weights are random and the vocabularies come from the corpus below: no
upstream model data is in these files.

The script also checks, and prints, that a padded batch (with
attention_mask) gives the same logits as the one-at-a-time runs (to 1e-5),
that an independent plain-tensor forward pass written below (reading only
config.json and model.safetensors, no transformers modules) gives the same
logits (to 1e-5), and that the logits of different pairs differ by more than
0.1.

How to run (never run in CI; the Rust tests only read the generated files):

    python3 -m venv /tmp/nlivenv
    /tmp/nlivenv/bin/pip install torch transformers tokenizers safetensors sentencepiece
    /tmp/nlivenv/bin/python tests/data/nli/make_fixtures.py

It needs torch, transformers, tokenizers, safetensors and sentencepiece, and
no network (nothing is loaded from a model hub). The committed files were
generated with CPython 3.11.7, torch 2.15.0 (the PyPI wheel, run on CPU),
transformers 5.24.0, tokenizers 0.23.3, safetensors 0.8.0 and sentencepiece
0.2.3. Two runs with the same versions give byte-identical files; other
versions may give other random weights or vocabularies, so regenerate all the
files together.
"""

import inspect
import io
import json
import math
import os
import re
import sys

import sentencepiece as spm
import torch
import tokenizers
import transformers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DebertaV2Config,
    DebertaV2ForSequenceClassification,
)

HERE = os.path.dirname(os.path.abspath(__file__))
BERT_DIR = os.path.join(HERE, "tiny-bert")
DEBERTA_DIR = os.path.join(HERE, "tiny-deberta-v3")
LOGITS_PATH = os.path.join(HERE, "logits.json")

SEED = 20240611
VOCAB_SIZE = 800
MAX_POS = 128

# Fixed training corpus for both tokenizers. Written here, never downloaded.
CORPUS = [
    "The agent booked a table for two people at the harbour restaurant.",
    "The booking was confirmed by email a few minutes later.",
    "A customer asked the support agent to cancel her hotel booking.",
    "The agent cancelled the booking and issued a full refund.",
    "Refunds are processed within five business days.",
    "The refund was rejected because the ticket was non-refundable.",
    "The database upgrade finished without errors on Sunday night.",
    "The upgrade to version 3 failed and the database was rolled back.",
    "Every write goes to the log before it reaches the database file.",
    "The embedded database stores its data in a single file on disk.",
    "A snapshot of the database was taken before the upgrade started.",
    "The agent checked the database for the customer's previous orders.",
    "The customer’s order shipped on Monday and arrived on Thursday.",
    "Her flight was cancelled, so she asked for her money back.",
    "He upgraded his seat to business class for an extra fee.",
    "The upgrade was free because the flight was overbooked.",
    "The planning agent splits a large task into small steps.",
    "Each step is checked by a second agent before it is committed.",
    "The agents share a queue of pending jobs and a ledger of results.",
    "No refund is possible after the event has started.",
    "The restaurant can seat twelve guests on the terrace.",
    "Tickets for the concert sold out within an hour.",
    "The index was rebuilt after the schema migration.",
    "Queries became much faster once the index was rebuilt.",
    "The backup completed at 02:00 and took 45 minutes.",
    "The invoice listed three nights at 120 dollars per night.",
    "She didn’t receive the confirmation email until the next day.",
    "The system retried the payment twice before giving up.",
    "A nurse is reading a report in the quiet hospital corridor.",
    "Two children are playing football in the park.",
    "A man is cooking pasta while the radio plays jazz.",
    "Nobody was in the office when the alarm went off.",
    "The train to the airport leaves every fifteen minutes.",
    "The old server was replaced by a faster machine last year.",
    "All transactions are durable once the commit returns.",
    "The agent could not find any booking under that name.",
    "The customer was happy with the quick refund.",
    "The storage engine keeps a write-ahead log and periodic checkpoints.",
    "Yes, the room is available from 14 to 18 July.",
    "No, the upgrade does not change the file format.",
    "It is raining heavily and the streets are flooded.",
    "The sun is shining and people are sitting outside.",
    "A dog is sleeping on the sofa next to a cat.",
    "The meeting was moved from Tuesday to Wednesday morning.",
    "The price of the room went up by 20 percent in summer.",
    "Zoe paid for the tickets with her credit card.",
    "The database contains 1,250 bookings and 312 refunds.",
    "An agent answered the phone and took the reservation.",
    "The operations team works late on the night before every release.",
    "Taking a snapshot first means nothing is lost if the migration fails.",
    "Pausing the queue stops new bookings while the format is converted.",
    "The migration rewrote each record and converted the old timestamps.",
    "A single error in one record can stop the whole upgrade.",
    "Customers are served in the order their requests arrive.",
    "Nobody noticed that the server had changed over the weekend.",
    "The change caused no visible problems for the users.",
    "They made a reservation for three people on Friday evening.",
    "He wanted to know whether anything had changed in his order.",
    "The money was returned to the customer's account on 3 April.",
    "These tickets are free for children under 12.",
    "The parcel shipped from the warehouse in March.",
    "A night at the hotel costs 95 dollars in winter.",
    "Then the agent moved the booking to the following day.",
    "There were 7 bookings and 2 refunds in the queue that morning.",
    "The team checked every index twice before the release.",
    "Problems with the payment system were reported by several customers.",
    "The upgraded system handles twice as many queries per second.",
    "The support agent explained the refund policy to them.",
    "Her request was answered within a minute by an automated agent.",
    "The records were restored from last night's backup.",
    "A woman is buying coffee at a small café near the station.",
    "Most guests finished breakfast before the tour started.",
]

# Premise/hypothesis pairs; index 6 is the long (~100 token) one, index 3 has a
# typographic apostrophe and digits, index 4 has a character that is not in the
# tokenizer corpus (euro sign), index 7 has an accented letter.
LONG_PREMISE = (
    "Late on Sunday night the operations agent started the database upgrade, "
    "after taking a full snapshot and pausing the booking queue; the migration "
    "rewrote every index, converted 1,250 bookings and 312 refunds to the new "
    "format, checked each record twice, and finished without a single error, "
    "so the customers who asked for refunds on Monday morning were served by "
    "the upgraded system and nobody noticed that anything had changed."
)
PAIRS = [
    ("The agent booked a table for two.", "A reservation was made."),
    ("The database upgrade finished without errors.", "The upgrade failed."),
    ("She asked for a refund after the flight was cancelled.", "She wanted her money back."),
    ("The customer’s order #4521 shipped on 12 March 2024.", "It didn’t ship until 2025."),
    ("The room costs 120 € per night.", "The room is free."),
    ("Yes.", "No."),
    (LONG_PREMISE, "The upgrade caused no visible problems for customers."),
    ("Zoë’s booking was moved to Wednesday.", "The booking changed day."),
]


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
DEBERTA_SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]


def learn_wordpiece_vocab(tok, corpus, vocab_size, specials):
    """Learn a WordPiece vocabulary the way tokenizers' WordPieceTrainer does
    (BPE merges over words split into "c", "##c", ...), but deterministically.

    tokenizers.trainers.WordPieceTrainer (0.23.3) breaks ties between equally
    frequent pairs by ids that depend on Rust HashMap iteration order, so two
    runs on the same corpus give different vocabularies. Here ties are broken
    lexicographically. The words come from the tokenizer's own normalizer and
    pre-tokenizer.
    """
    counts = {}
    for sentence in corpus:
        normalized = tok.normalizer.normalize_str(sentence)
        for word, _ in tok.pre_tokenizer.pre_tokenize_str(normalized):
            counts[word] = counts.get(word, 0) + 1
    words = {w: [w[0]] + ["##" + c for c in w[1:]] for w in counts}
    vocab = list(specials)
    vocab += sorted({s for symbols in words.values() for s in symbols} - set(vocab))
    while len(vocab) < vocab_size:
        pairs = {}
        for w, symbols in words.items():
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + counts[w]
        if not pairs:
            break
        (a, b), _ = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        merged = a + b[2:]
        if merged not in vocab:
            vocab.append(merged)
        for w, symbols in words.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            words[w] = out
    return {t: i for i, t in enumerate(vocab)}


def train_bert_tokenizer():
    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    probe = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    probe.normalizer, probe.pre_tokenizer = normalizer, pre_tokenizer
    vocab = learn_wordpiece_vocab(probe, CORPUS, VOCAB_SIZE, BERT_SPECIALS)

    tok = Tokenizer(
        models.WordPiece(
            vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100
        )
    )
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.add_special_tokens(BERT_SPECIALS)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    for i, s in enumerate(BERT_SPECIALS):
        assert tok.token_to_id(s) == i, (s, tok.token_to_id(s))
    return tok


def unigram_training_corpus():
    """CORPUS plus, for each sentence, the list of its words joined by ", ".

    A Unigram trainer seeds its vocabulary with substrings that are followed
    by more than one distinct character in the corpus. In a corpus this small
    many whole words (e.g. "the") are only ever followed by a space, never
    become seeds and end up split into pieces like "▁th" + "e". The word lists
    ("the, agent, booked.") give every word a second continuation (",") so
    whole words can become pieces, as they do in real DeBERTa-v3 vocabularies
    trained on large corpora.
    """
    lists = [", ".join(re.findall(r"[A-Za-z0-9’']+", s)) + "." for s in CORPUS]
    return CORPUS + lists + [s.lower() for s in lists]


def train_deberta_tokenizer():
    """Unigram tokenizer built the way real DeBERTa-v3 tokenizer.json files are:
    a SentencePiece Unigram model converted to a tokenizers Unigram model.

    SentencePiece is used for the training because it is deterministic with
    one thread; tokenizers' UnigramTrainer (0.23.3) is not (the scores of the
    pieces it adds for uncovered characters depend on HashMap order).
    """
    buf = io.BytesIO()
    spm.set_random_generator_seed(SEED)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(unigram_training_corpus()),
        model_writer=buf,
        model_type="unigram",
        vocab_size=VOCAB_SIZE,
        hard_vocab_limit=False,
        character_coverage=1.0,
        num_threads=1,
        normalization_rule_name="identity",
        pad_id=0,
        pad_piece="[PAD]",
        bos_id=1,
        bos_piece="[CLS]",
        eos_id=2,
        eos_piece="[SEP]",
        unk_id=3,
        unk_piece="[UNK]",
        user_defined_symbols=["[MASK]"],
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]

    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.add_special_tokens(DEBERTA_SPECIALS)
    for i, s in enumerate(DEBERTA_SPECIALS):
        assert tok.token_to_id(s) == i, (s, tok.token_to_id(s))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    # Same template as the tokenizer.json of real DeBERTa-v3 models (the type
    # ids are not used by the model: type_vocab_size is 0).
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    # The converted model must split text exactly as SentencePiece does.
    for premise, hypothesis in PAIRS:
        for text in (premise, hypothesis):
            assert tok.encode(text, add_special_tokens=False).ids == sp.encode(text), text
    return tok


ID2LABEL_BERT = {0: "entailment", 1: "neutral", 2: "contradiction"}
ID2LABEL_DEBERTA = {0: "contradiction", 1: "entailment", 2: "neutral"}


def bert_config(vocab_size):
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=MAX_POS,
        type_vocab_size=2,
        initializer_range=0.3,
        layer_norm_eps=1e-12,
        pad_token_id=0,
        num_labels=3,
        id2label=dict(ID2LABEL_BERT),
        label2id={v: k for k, v in ID2LABEL_BERT.items()},
    )


def deberta_config(vocab_size):
    return DebertaV2Config(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=MAX_POS,
        type_vocab_size=0,
        initializer_range=0.3,
        layer_norm_eps=1e-7,
        relative_attention=True,
        max_relative_positions=-1,
        position_buckets=16,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        pooler_hidden_size=32,
        pooler_hidden_act="gelu",
        pooler_dropout=0,
        pad_token_id=0,
        num_labels=3,
        id2label=dict(ID2LABEL_DEBERTA),
        label2id={v: k for k, v in ID2LABEL_DEBERTA.items()},
    )


def perturb(model, seed):
    """Add fixed-seed noise to every parameter (LayerNorms, biases included)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.add_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.1)


def save_model(model, directory):
    os.makedirs(directory, exist_ok=True)
    kwargs = {}
    if "safe_serialization" in inspect.signature(model.save_pretrained).parameters:
        kwargs["safe_serialization"] = True
    model.save_pretrained(directory, **kwargs)
    weights = os.path.join(directory, "model.safetensors")
    assert os.path.exists(weights)
    os.chmod(weights, 0o644)
    with open(os.path.join(directory, "config.json")) as f:
        cfg = json.load(f)
    for key in ("model_type", "id2label", "label2id"):
        assert key in cfg, key


def encode_all(tok_path):
    tok = Tokenizer.from_file(tok_path)
    out = []
    for premise, hypothesis in PAIRS:
        enc = tok.encode(premise, hypothesis)
        out.append((list(enc.ids), list(enc.type_ids)))
    return out


def logits_one_at_a_time(model, encoded, pass_type_ids):
    rows = []
    with torch.no_grad():
        for ids, types in encoded:
            kw = {"input_ids": torch.tensor([ids], dtype=torch.long)}
            if pass_type_ids:
                kw["token_type_ids"] = torch.tensor([types], dtype=torch.long)
            rows.append(model(**kw).logits[0].to(torch.float32))
    return torch.stack(rows)


def logits_batched(model, encoded, pass_type_ids, pad_id=0):
    n = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), n), pad_id, dtype=torch.long)
    types = torch.zeros((len(encoded), n), dtype=torch.long)
    mask = torch.zeros((len(encoded), n), dtype=torch.long)
    for i, (row_ids, row_types) in enumerate(encoded):
        ids[i, : len(row_ids)] = torch.tensor(row_ids)
        types[i, : len(row_types)] = torch.tensor(row_types)
        mask[i, : len(row_ids)] = 1
    kw = {"input_ids": ids, "attention_mask": mask}
    if pass_type_ids:
        kw["token_type_ids"] = types
    with torch.no_grad():
        return model(**kw).logits.to(torch.float32)


# ---------------------------------------------------------------------------
# Independent reference forward passes: plain tensor maths on the tensors of
# model.safetensors and the values of config.json, no transformers modules.
# They check that the saved files alone determine the logits, and spell out
# the computation a port has to reproduce.
# ---------------------------------------------------------------------------


def _load_dir(directory):
    from safetensors.torch import load_file

    with open(os.path.join(directory, "config.json")) as f:
        cfg = json.load(f)
    return cfg, load_file(os.path.join(directory, "model.safetensors"))


def _linear(w, prefix, x):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def _layer_norm(w, prefix, x, eps):
    return torch.nn.functional.layer_norm(
        x, (x.shape[-1],), w[prefix + ".weight"], w[prefix + ".bias"], eps
    )


def _gelu(x):  # hidden_act "gelu" is the exact erf form
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _heads(x, n_heads):  # [seq, hidden] -> [heads, seq, head_dim]
    return x.view(x.shape[0], n_heads, -1).transpose(0, 1)


def reference_bert(directory, ids, type_ids):
    cfg, w = _load_dir(directory)
    eps, nh = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    ids, tt = torch.tensor(ids), torch.tensor(type_ids)
    p = "bert.embeddings."
    x = (
        w[p + "word_embeddings.weight"][ids]
        + w[p + "position_embeddings.weight"][torch.arange(len(ids))]
        + w[p + "token_type_embeddings.weight"][tt]
    )
    x = _layer_norm(w, p + "LayerNorm", x, eps)
    for i in range(cfg["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        q = _heads(_linear(w, p + "attention.self.query", x), nh)
        k = _heads(_linear(w, p + "attention.self.key", x), nh)
        v = _heads(_linear(w, p + "attention.self.value", x), nh)
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        ctx = (probs @ v).transpose(0, 1).reshape(x.shape)
        a = _layer_norm(w, p + "attention.output.LayerNorm", _linear(w, p + "attention.output.dense", ctx) + x, eps)
        h = _gelu(_linear(w, p + "intermediate.dense", a))
        x = _layer_norm(w, p + "output.LayerNorm", _linear(w, p + "output.dense", h) + a, eps)
    pooled = torch.tanh(_linear(w, "bert.pooler.dense", x[0]))
    return _linear(w, "classifier", pooled)


def reference_log_bucket(rel, bucket_size, max_position):
    """DeBERTa-v2 make_log_bucket_position for one int, in float64 maths."""
    mid = bucket_size // 2
    if -mid < rel < mid:
        return rel
    abs_pos = abs(rel)
    if abs_pos <= mid:
        return rel
    log_pos = math.ceil(math.log(abs_pos / mid) / math.log((max_position - 1) / mid) * (mid - 1)) + mid
    return int(log_pos) * (1 if rel > 0 else -1)


def reference_deberta_v2(directory, ids):
    cfg, w = _load_dir(directory)
    eps, nh = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    assert cfg["share_att_key"] and set(cfg["pos_att_type"]) == {"c2p", "p2c"}
    assert not cfg["position_biased_input"] and cfg["type_vocab_size"] == 0
    assert cfg["norm_rel_ebd"] == "layer_norm" and cfg.get("conv_kernel_size", 0) == 0
    buckets = cfg["position_buckets"]
    max_rel = cfg["max_relative_positions"]
    if max_rel < 1:
        max_rel = cfg["max_position_embeddings"]
    span = buckets  # att_span = pos_ebd_size = position_buckets
    n = len(ids)

    # Embeddings: word embeddings only, then LayerNorm (times an all-ones mask).
    x = _layer_norm(w, "deberta.embeddings.LayerNorm", w["deberta.embeddings.word_embeddings.weight"][torch.tensor(ids)], eps)
    # Relative embeddings [2 * buckets, hidden], LayerNorm'd once, shared by all layers.
    rel = _layer_norm(w, "deberta.encoder.LayerNorm", w["deberta.encoder.rel_embeddings.weight"], eps)
    rel = rel[: 2 * span]
    # rel_pos[i, j] = bucket(i - j) (query i, key j).
    rel_pos = torch.tensor([[reference_log_bucket(i - j, buckets, max_rel) for j in range(n)] for i in range(n)])
    c2p_idx = torch.clamp(rel_pos + span, 0, 2 * span - 1)  # [q, k]
    p2c_idx = torch.clamp(-rel_pos + span, 0, 2 * span - 1)  # [q, k]
    scale = math.sqrt(cfg["hidden_size"] // nh * 3)  # sqrt(head_dim * (1 + number of pos_att_type))

    for i in range(cfg["num_hidden_layers"]):
        p = f"deberta.encoder.layer.{i}."
        q = _heads(_linear(w, p + "attention.self.query_proj", x), nh)  # [h, n, d]
        k = _heads(_linear(w, p + "attention.self.key_proj", x), nh)
        v = _heads(_linear(w, p + "attention.self.value_proj", x), nh)
        # share_att_key: the relative embeddings go through the same projections.
        pos_q = _heads(_linear(w, p + "attention.self.query_proj", rel), nh)  # [h, 2*span, d]
        pos_k = _heads(_linear(w, p + "attention.self.key_proj", rel), nh)
        scores = q @ k.transpose(-1, -2) / scale
        # c2p[h, i, j] = q_i . pos_k[c2p_idx[i, j]]
        c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, c2p_idx.expand(nh, n, n))
        # p2c[h, i, j] = k_j . pos_q[p2c_idx[j, i]]
        p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, p2c_idx.expand(nh, n, n)).transpose(-1, -2)
        scores = scores + c2p / scale + p2c / scale
        probs = torch.softmax(scores, dim=-1)
        ctx = (probs @ v).transpose(0, 1).reshape(x.shape)
        a = _layer_norm(w, p + "attention.output.LayerNorm", _linear(w, p + "attention.output.dense", ctx) + x, eps)
        h = _gelu(_linear(w, p + "intermediate.dense", a))
        x = _layer_norm(w, p + "output.LayerNorm", _linear(w, p + "output.dense", h) + a, eps)
    assert cfg["pooler_hidden_act"] == "gelu"
    pooled = _gelu(_linear(w, "pooler.dense", x[0]))
    return _linear(w, "classifier", pooled)


def build(name, directory, tok, config, model_cls, seed, pass_type_ids):
    os.makedirs(directory, exist_ok=True)
    tok_path = os.path.join(directory, "tokenizer.json")
    tok.save(tok_path)

    torch.manual_seed(seed)
    model = model_cls(config)
    perturb(model, seed + 1)
    model.eval()
    save_model(model, directory)

    # Reload from disk so the reference logits come from exactly the saved
    # weights and the saved tokenizer.
    model = model_cls.from_pretrained(directory, local_files_only=True)
    model.eval()
    model.to(torch.float32)
    encoded = encode_all(tok_path)
    for ids, _ in encoded:
        assert len(ids) <= MAX_POS, (name, len(ids))

    single = logits_one_at_a_time(model, encoded, pass_type_ids)
    batched = logits_batched(model, encoded, pass_type_ids)
    diff = (single - batched).abs().max().item()
    print(f"{name}: batched(padded) vs one-at-a-time max |diff| = {diff:.3e}")
    assert diff < 1e-5, f"{name}: padded batch differs from one-at-a-time by {diff}"

    with torch.no_grad():
        if name == "tiny-bert":
            ref = torch.stack([reference_bert(directory, ids, types) for ids, types in encoded])
        else:
            ref = torch.stack([reference_deberta_v2(directory, ids) for ids, _ in encoded])
    diff = (single - ref).abs().max().item()
    print(f"{name}: independent plain-torch forward vs transformers max |diff| = {diff:.3e}")
    assert diff < 1e-5, f"{name}: independent forward differs by {diff}"

    # The logits must be clearly non-trivial and differ between pairs.
    spread = (single[:, None, :] - single[None, :, :]).abs().amax(dim=-1)
    off_diag = spread + torch.eye(len(PAIRS)) * 1e9
    min_pair_gap = off_diag.min().item()
    print(f"{name}: lengths = {[len(i) for i, _ in encoded]}")
    print(f"{name}: min over pair pairs of max |logit diff| = {min_pair_gap:.3f}")
    print(f"{name}: max |logit| = {single.abs().max().item():.3f}")
    assert min_pair_gap > 0.1, f"{name}: two pairs have nearly identical logits"

    return {
        "input_ids": [ids for ids, _ in encoded],
        "token_type_ids": [types for _, types in encoded],
        "logits": [[float(x) for x in row] for row in single.tolist()],
    }


def deberta_bucket_table(config):
    """Relative position -> bucket for offsets -(max_pos-1)..(max_pos-1), as
    computed by the installed transformers (for checking a port directly)."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    max_pos = config.max_relative_positions
    if max_pos < 1:
        max_pos = config.max_position_embeddings
    rel = torch.arange(-(max_pos - 1), max_pos, dtype=torch.long)
    buckets = make_log_bucket_position(rel, config.position_buckets, max_pos).to(torch.long)
    in_f64 = [reference_log_bucket(r, config.position_buckets, max_pos) for r in rel.tolist()]
    assert buckets.tolist() == in_f64, "float32 and float64 bucket maths disagree"
    return {
        "position_buckets": config.position_buckets,
        "max_position": max_pos,
        "relative_positions": rel.tolist(),
        "buckets": buckets.tolist(),
    }


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    bert_tok = train_bert_tokenizer()
    deberta_tok = train_deberta_tokenizer()
    print(f"bert vocab = {bert_tok.get_vocab_size()}, deberta vocab = {deberta_tok.get_vocab_size()}")

    bert_cfg = bert_config(bert_tok.get_vocab_size())
    deberta_cfg = deberta_config(deberta_tok.get_vocab_size())

    result = {
        "generated_by": "make_fixtures.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "pairs": [{"premise": p, "hypothesis": h} for p, h in PAIRS],
        "models": {
            "tiny-bert": build(
                "tiny-bert", BERT_DIR, bert_tok, bert_cfg, BertForSequenceClassification, SEED, True
            ),
            "tiny-deberta-v3": build(
                "tiny-deberta-v3",
                DEBERTA_DIR,
                deberta_tok,
                deberta_cfg,
                DebertaV2ForSequenceClassification,
                SEED + 100,
                True,
            ),
        },
        "deberta_rel_pos_buckets": deberta_bucket_table(deberta_cfg),
    }
    with open(LOGITS_PATH, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {LOGITS_PATH}")


if __name__ == "__main__":
    sys.exit(main())
