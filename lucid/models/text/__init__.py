"""Language models: a character- (or token-) level GPT."""

from lucid.models.text.gpt import GPT, Block, CausalSelfAttention
