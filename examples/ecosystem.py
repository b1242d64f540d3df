"""Hugging Face transformers on openreg, next to the CPU: training, generation, checkpoints,
device maps and a pipeline, with models built from configs (random weights, nothing downloaded).
"""

import tempfile

import torch
from ecosystem_torchvision_schemas import declare_torchvision_schemas

declare_torchvision_schemas()  # before transformers imports torchvision (docs/ecosystem.md)

import transformers  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForMaskedLM,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    pipeline,
)

transformers.logging.set_verbosity_error()  # keep the output to what the example prints
transformers.utils.logging.disable_progress_bar()

WORDS = "the a cat dog bird sat ran flew on under over mat rug tree and".split()
VOCAB = {"[UNK]": 0, "[EOS]": 1, **{word: i + 2 for i, word in enumerate(WORDS)}}

# Dropout off: it draws from each device's own generator, so the CPU and openreg would drop
# different units and the runs could not be compared.
GPT2 = GPT2Config(vocab_size=len(VOCAB), n_positions=32, n_embd=32, n_layer=2, n_head=2,
                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                  bos_token_id=1, eos_token_id=1, pad_token_id=1)
BERT = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=2, intermediate_size=64, max_position_embeddings=32,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def max_difference(a: torch.nn.Module, b: torch.nn.Module) -> float:
    """The largest difference between two models' weights, compared on the CPU."""
    return max((x.cpu() - y.cpu()).abs().max().item()
               for x, y in zip(a.state_dict().values(), b.state_dict().values()))


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_HF_TRAINING
def train(model_class, config, batch, device, steps=3):
    """A few AdamW steps from the same seeded weights on any device."""
    torch.manual_seed(0)
    model = model_class(config).to(device)  # built on the CPU, moved: the same initial weights
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    batch = {name: tensor.to(device) for name, tensor in batch.items()}
    losses = []
    for _ in range(steps):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(round(loss.item(), 4))
    return model, losses
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_HF_TRAINING


torch.manual_seed(1)
tokens = torch.randint(2, len(VOCAB), (4, 12))
inputs = {"input_ids": tokens, "labels": tokens}
trained = {}
for name, model_class, config in (("GPT-2", GPT2LMHeadModel, GPT2),
                                  ("BERT", BertForMaskedLM, BERT)):
    cpu_model, cpu_losses = train(model_class, config, inputs, "cpu")
    model, losses = train(model_class, config, inputs, "openreg")
    print(f"{name} losses, CPU:    ", cpu_losses)
    print(f"{name} losses, openreg:", losses)
    print(f"{name} weights within 1e-4 of the CPU's:", max_difference(cpu_model, model) < 1e-4)
    embedding = model.get_input_embeddings().weight
    print(f"{name} output embedding still tied to the input embedding:",
          model.get_output_embeddings().weight is embedding)
    trained[name] = cpu_model, model
gpt2_cpu, gpt2 = trained["GPT-2"]

# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_HF_GENERATE
prompt = torch.tensor([[2, 4, 7, 10]])
expected = gpt2_cpu.eval().generate(prompt, max_new_tokens=8, do_sample=False)
generated = gpt2.eval().generate(prompt.to("openreg"), max_new_tokens=8, do_sample=False)
print("greedy generation, openreg:", generated.tolist())
print("the same tokens as the CPU's:", torch.equal(generated.cpu(), expected))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_HF_GENERATE


def same_generation(model: torch.nn.Module) -> bool:
    return torch.equal(model.generate(prompt.to(model.device), max_new_tokens=8,
                                      do_sample=False).cpu(), expected)


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_HF_CHECKPOINTS
with tempfile.TemporaryDirectory() as folder:
    gpt2.save_pretrained(folder)  # writes model.safetensors from the device's weights
    moved = GPT2LMHeadModel.from_pretrained(folder).to("openreg")
    mapped = GPT2LMHeadModel.from_pretrained(folder, device_map="openreg")
    # A device map may name each device: layers split over two devices, and accelerate's
    # hooks move the activations between them.
    split = GPT2LMHeadModel.from_pretrained(folder, device_map={
        "transformer.wte": "openreg:0", "transformer.wpe": "openreg:0",
        "transformer.drop": "openreg:0", "transformer.h.0": "openreg:0",
        "transformer.h.1": "openreg:1", "transformer.ln_f": "openreg:1",
        "lm_head": "openreg:0",  # tied to transformer.wte: the same device
    })
    automatic = GPT2LMHeadModel.from_pretrained(folder, device_map="auto")
for name, model in (("from_pretrained(...).to('openreg')", moved),
                    ("device_map='openreg'", mapped), ("device_map over two devices", split)):
    devices = sorted({str(p.device) for p in model.parameters()})
    print(f"{name}: {devices}, weights equal: {max_difference(gpt2, model) == 0}, "
          f"generation equal: {same_generation(model.eval())}")
print("device_map='auto' placed the model on:", automatic.device)
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_HF_CHECKPOINTS

# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_HF_PIPELINE
# A word-level tokenizer built in memory by the tokenizers library: nothing to download.
backend = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
backend.decoder = decoders.WordPiece()  # joins the words with spaces
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]",
                                    eos_token="[EOS]", pad_token="[EOS]")
texts = {}
for device in ("cpu", "openreg"):
    generator = pipeline("text-generation", model=gpt2, tokenizer=tokenizer, device=device)
    texts[device] = generator("the cat sat on", max_new_tokens=6, do_sample=False,
                              return_full_text=False)[0]["generated_text"]
    print(f"pipeline on {generator.device}: the cat sat on ... {texts[device]}")
print("the same text on both:", texts["cpu"] == texts["openreg"])
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_HF_PIPELINE
