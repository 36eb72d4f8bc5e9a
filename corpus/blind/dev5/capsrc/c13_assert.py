import torch
def build_vocab(tokens, size):
    vocab = {t: i for i, t in enumerate(sorted(set(tokens)))}
    assert len(vocab) == size, f"vocab size {len(vocab)} != config.vocab_size {size}"
    return vocab
toks = "the quick brown fox jumps over the lazy dog".split()
print("tokens:", len(toks), flush=True)
v = build_vocab(toks, 32000)
