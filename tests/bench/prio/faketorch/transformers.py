"""A stand-in for the Hugging Face transformers calls of train.py's llama and gpt loops (selftest.sh):
shapes only, checked, like torch.py beside it."""
import time

import torch


class LlamaConfig:
    def __init__(self, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
                 num_key_value_heads, vocab_size, max_position_embeddings):
        assert hidden_size % num_attention_heads == 0 and num_attention_heads % num_key_value_heads == 0
        self.hidden_size, self.intermediate_size = hidden_size, intermediate_size
        self.num_hidden_layers, self.vocab_size = num_hidden_layers, vocab_size
        self.max_position_embeddings = max_position_embeddings


class _Output:
    def __init__(self, loss):
        self.loss = loss


class LlamaForCausalLM:
    def __init__(self, cfg):
        assert isinstance(cfg, LlamaConfig)
        self.cfg = cfg

    def to(self, device, dtype=None):
        assert device == "cuda" and dtype == torch.bfloat16
        return self

    def eval(self):
        return self

    def generate(self, input_ids, attention_mask, max_new_tokens, min_new_tokens, do_sample, pad_token_id):
        """Greedy decoding, host-bound: a little time per new token."""
        assert input_ids.shape == attention_mask.shape and input_ids.shape[0] == 1 and not do_sample
        assert 0 < min_new_tokens <= max_new_tokens
        assert input_ids.shape[1] + max_new_tokens <= self.cfg.max_position_embeddings
        torch.trace("generate")
        time.sleep(0.002 * max_new_tokens)
        return torch.Tensor(1, input_ids.shape[1] + max_new_tokens, dtype=torch.int64)

    def parameters(self):
        c = self.cfg
        return [torch.Tensor(c.vocab_size, c.hidden_size, dtype=torch.bfloat16)]

    def __call__(self, input_ids, labels):
        assert input_ids.dtype == torch.int64 and input_ids.shape == labels.shape
        assert input_ids.shape[1] <= self.cfg.max_position_embeddings
        return _Output(torch.Tensor(dtype=torch.float32))


class GPT2Config:
    def __init__(self, n_embd, n_layer, n_head, vocab_size, n_positions):
        assert n_embd % n_head == 0
        self.n_embd, self.n_layer, self.vocab_size, self.n_positions = n_embd, n_layer, vocab_size, n_positions


class GPT2LMHeadModel(LlamaForCausalLM):
    def __init__(self, cfg):  # pylint: disable=super-init-not-called
        assert isinstance(cfg, GPT2Config)
        self.cfg = cfg
        cfg.hidden_size, cfg.max_position_embeddings = cfg.n_embd, cfg.n_positions
