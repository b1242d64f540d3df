"""Benchmark: the models people run, a training step each, on openreg against native CPU.

    python benchmarks/models.py                      # full run (several minutes)
    python benchmarks/models.py --quick              # checks the harness and the results,
                                                     # not speed (a round of one step)
    python benchmarks/models.py -k LSTM              # the models whose name contains "LSTM"
    python benchmarks/models.py --kernel-threads 1   # the device's kernels on one thread

The models are built from the libraries users build them from, with random weights (nothing is
downloaded): torchvision's ResNet-18 and MobileNetV3-Large, a GPT-2-shaped decoder and a BERT
encoder from small Hugging Face transformers configs, and torch.nn's bidirectional two-layer
LSTM and MultiheadAttention. Each row is a training step (forward, backward, optimizer step);
one more is GPT-2's greedy `generate`, reported as a time ratio and as openreg's tokens per
second ÷ the CPU's. Both sides build each model from the same seed, with dropout off, and the
harness first checks that they compute the same results: the losses of the first two steps
(the forward, then the forward after one optimizer step), each parameter's gradient after the
first, and generate's tokens. A wrong result makes the run exit 1 and record nothing.

Each side runs in a process of its own, as in amp.py and ops.py (the device's kernel threads
and the CPU side's OpenMP threads in one process would slow each other), and calls
`start_openreg()`, so both have the same host allocator settings. Rounds alternate between
the sides, which side goes first alternating too; a round is one untimed step and then enough
steps for about ROUND_SECONDS of the CPU's time (a quick run: one round of one step). A row's
ratio is the median of its per-round ratios (openreg / CPU; lower is better), its spread their
lowest and highest. The targets: each training step <= 1.15, their geometric mean <= 1.05, and
generate's tokens per second at least 0.95 of the CPU's. openreg's kernels get the backend's
default threads, or `--kernel-threads N`.
A full run (not --quick, not -k) writes benchmarks/results/models.json (benchmarks/record.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops  # noqa: E402  (its Side: a side's process, and the wait for its threads to go idle)
from record import add_results_option, geomean_case, ratio_case, value_case, write  # noqa: E402
from run import add_side_options, start_openreg, use_kernel_threads  # noqa: E402

STEP_TARGET = 1.15       # the highest ratio of one model's training step
GEOMEAN_TARGET = 1.05    # the highest geometric mean of the training steps' ratios
TOKENS_TARGET = 0.95     # the lowest openreg tokens/s ÷ CPU tokens/s of generate
ROUND_SECONDS = 0.4      # about how long the CPU takes for a round's timed steps
NEW_TOKENS = 32          # generate's new tokens, greedy, batch 1
RTOL = 1e-3   # the two sides' losses and gradient norms: float32 kernels may sum in another order
FLOOR = 1e-6  # ... and a gradient norm's absolute tolerance, as a fraction of the largest one



def import_torchvision():
    """torchvision, imported on a torch without the compiled extension its wheel was built for.

    PyPI's x86-64 torchvision wheel is the CUDA build: its compiled `_C` does not load beside the
    CPU-only torch this project pins, and its import then fails on two fake kernels it registers
    regardless (docs/ecosystem.md, "torchvision"). transformers imports torchvision whenever it
    is installed, so the same error stops it too. The guide's workaround declares the two
    operator schemas first; the models here use none of torchvision's compiled operators."""
    if importlib.util.find_spec("torchvision") is None:
        raise ImportError("benchmarks/models.py needs torchvision and transformers: "
                          'pip install -e ".[test]"')
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "examples"))
    from ecosystem_torchvision_schemas import declare_torchvision_schemas

    declare_torchvision_schemas()
    import torchvision

    return torchvision


# ---- the models: each job builds a model on one device and the step that runs it ----
#
# A job returns (step, model): `step` is a no-argument callable doing the work once and
# returning what the check compares (a training step's loss, generate's tokens). Every job
# seeds the generator before it builds the model on the CPU and then moves it, so both sides
# start from the same weights and inputs; dropout is off, since the device's random stream is
# not the CPU's.

Step = Callable[[], torch.Tensor]
Job = tuple[Step, nn.Module]


def _inputs(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1))


def _tokens(vocab: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(1))


def _training(model: nn.Module, optimizer: torch.optim.Optimizer,
              loss: Callable[[], torch.Tensor]) -> Job:
    model.train()

    def step() -> torch.Tensor:
        optimizer.zero_grad()
        value = loss()
        value.backward()
        optimizer.step()
        return value.detach()
    return step, model


def _vision(name: str, **kwargs) -> Callable[[str], Job]:
    """A torchvision classifier (10 classes) on 8 RGB images of 64 x 64, SGD with momentum."""
    def make(device: str) -> Job:
        torchvision = import_torchvision()
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, num_classes=10, **kwargs)
        model = model.to(device)
        x, y = _inputs(8, 3, 64, 64).to(device), _tokens(10, 8).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return _training(model, optimizer, lambda: F.cross_entropy(model(x), y))
    return make


VOCAB = 5000


def _gpt2_config(initializer_range: float = 0.02):
    import transformers

    # GPT-2's architecture at a size a 2-core machine trains in a fraction of a second; the
    # special tokens inside the small vocabulary (GPT-2's own id is 50256).
    return transformers.GPT2Config(
        n_layer=4, n_embd=256, n_head=4, vocab_size=VOCAB, n_positions=128,
        initializer_range=initializer_range, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1, pad_token_id=VOCAB - 1)


def _gpt2_training(device: str) -> Job:
    """Causal language modelling on 4 sequences of 64 tokens, AdamW."""
    import transformers

    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(_gpt2_config()).to(device)
    ids = _tokens(VOCAB - 1, 4, 64).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return _training(model, optimizer, lambda: model(input_ids=ids, labels=ids).loss)


def _gpt2_generate(device: str) -> Job:
    """Greedy decoding of NEW_TOKENS tokens after a prompt of 16, batch 1, with the KV cache.
    The weights are drawn wider than GPT-2's initializer draws them: at its scale an untrained
    model repeats one token, and the check of the tokens would hardly see a wrong step."""
    import transformers

    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(_gpt2_config(0.3)).eval().to(device)
    prompt = _tokens(VOCAB - 1, 1, 16).to(device)

    def step() -> torch.Tensor:
        with torch.no_grad():
            out = model.generate(prompt, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                 do_sample=False)
        return out[0, prompt.shape[1]:]
    return step, model


def _bert_training(device: str) -> Job:
    """Sequence classification (2 labels) of 4 sequences of 64 tokens, AdamW."""
    import transformers

    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
        intermediate_size=1024, max_position_embeddings=128, num_labels=2,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config).to(device)
    ids, labels = _tokens(VOCAB, 4, 64).to(device), _tokens(2, 4).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return _training(model, optimizer, lambda: model(input_ids=ids, labels=labels).loss)


def _lstm_training(device: str) -> Job:
    """nn.LSTM, 2 layers, bidirectional, 128 -> 256 features, on 8 sequences of 64 steps,
    regressed onto random targets with SGD."""
    torch.manual_seed(0)
    model = nn.LSTM(128, 256, num_layers=2, bidirectional=True, batch_first=True).to(device)
    x, target = _inputs(8, 64, 128).to(device), _inputs(8, 64, 512).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _training(model, optimizer, lambda: F.mse_loss(model(x)[0], target))


def _attention_training(device: str) -> Job:
    """nn.MultiheadAttention, 256 features, 4 heads, self-attention over 8 sequences of 128,
    regressed onto random targets with SGD."""
    torch.manual_seed(0)
    model = nn.MultiheadAttention(256, 4, batch_first=True).to(device)
    x, target = _inputs(8, 128, 256).to(device), _inputs(8, 128, 256).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _training(model, optimizer,
                     lambda: F.mse_loss(model(x, x, x, need_weights=False)[0], target))


# name -> (make(device) -> (step, model), is a training step)
JOBS: dict[str, tuple[Callable[[str], Job], bool]] = {
    "ResNet-18, SGD": (_vision("resnet18"), True),
    "MobileNetV3-Large, SGD": (_vision("mobilenet_v3_large", dropout=0.0), True),
    "GPT-2 (4 layers), AdamW": (_gpt2_training, True),
    "BERT (4 layers), AdamW": (_bert_training, True),
    "LSTM (2 layers, bidir.), SGD": (_lstm_training, True),
    "MultiheadAttention, SGD": (_attention_training, True),
    "GPT-2 generate": (_gpt2_generate, False),
}


# ---- a side's process ----


def serve(device: str, kernel_threads: int | None) -> None:
    """The loop of a side's process, one answer line per question line:
    `check JOB`: builds the job, runs its first two steps, and answers, as JSON, their results
    (losses or tokens), the norm of each parameter's gradient after the first (nothing for
    generate), and the second step's seconds; `time JOB N WARM`: WARM untimed steps, then the
    seconds a step takes over N steps, and the operators that fell back to the CPU during them."""
    warnings.simplefilter("ignore")  # a fallback warning would be printed into the answers
    start_openreg()  # on both sides: the CPU side's host allocator must match openreg's
    if device == "openreg":
        use_kernel_threads(kernel_threads)
    import_torchvision()  # before transformers, which imports it
    import transformers

    transformers.logging.set_verbosity_error()
    finish = torch.openreg.synchronize if device == "openreg" else (lambda: None)
    steps: dict[str, Step] = {}
    for line in sys.stdin:
        command, _, rest = line.rstrip("\n").partition(" ")
        if command == "check":
            step, model = JOBS[rest][0](device)
            steps[rest] = step
            results = [step().cpu().tolist()]
            grads = [p.grad.norm().item() for p in model.parameters() if p.grad is not None]
            start = time.perf_counter()
            results.append(step().cpu().tolist())  # .cpu() waits for the device
            print(json.dumps({"results": results, "grads": grads,
                              "seconds": time.perf_counter() - start}), flush=True)
            continue
        name, count, warm = rest.rsplit(" ", 2)
        step, iterations = steps[name], int(count)
        for _ in range(int(warm)):
            step()
        finish()
        torch.openreg.reset_fallback_counts()
        start = time.perf_counter()
        for _ in range(iterations):
            step()
        finish()
        seconds = (time.perf_counter() - start) / iterations
        print(f"{seconds!r}\t{','.join(sorted(torch.openreg.fallback_counts()))}", flush=True)


class Side(ops.Side):
    """One side of the comparison, in a process of its own (`models.py --serve DEVICE`); after
    each answer it waits for the side's threads to go idle (ops.Side)."""

    def __init__(self, device: str, kernel_threads: int | None) -> None:
        super().__init__(device, kernel_threads, script=os.path.abspath(__file__))

    def check(self, job: str) -> dict:
        return json.loads(self.question(f"check {job}"))

    def seconds(self, job: str, iterations: int, warm: int) -> tuple[float, set[str]]:
        seconds, _, fell_back = self.question(f"time {job} {iterations} {warm}").partition("\t")
        return float(seconds), set(filter(None, fell_back.split(",")))


def same_results(job: str, cpu: dict, dev: dict) -> str | None:
    """Why the two sides' first two steps disagree, or None: losses and each parameter's
    gradient norm within RTOL, generated tokens exactly. The second step's loss checks the
    optimizer's update; the gradients check the backward pass itself, which a step's loss
    barely shows (a small SGD step moves it by less than the tolerance). Some gradients are
    zero but for rounding (a bias before a batch norm, attention's key bias): FLOOR times the
    largest gradient norm is their tolerance."""
    def close(c: float, d: float, atol: float = 0.0) -> bool:
        return abs(d - c) <= atol + RTOL * abs(c)
    for n, (c, d) in enumerate(zip(cpu["results"], dev["results"]), start=1):
        if isinstance(c, list):  # tokens
            if c != d:
                return f"{job}: step {n} generated {d} on openreg, {c} on the CPU"
        elif not close(c, d):
            return f"{job}: step {n}'s loss is {d!r} on openreg, {c!r} on the CPU"
    if len(cpu["grads"]) != len(dev["grads"]):
        return (f"{job}: {len(dev['grads'])} parameters have a gradient on openreg, "
                f"{len(cpu['grads'])} on the CPU")
    floor = FLOOR * max(cpu["grads"], default=0.0)
    for n, (c, d) in enumerate(zip(cpu["grads"], dev["grads"])):
        if not close(c, d, floor):
            return f"{job}: parameter {n}'s gradient norm is {d!r} on openreg, {c!r} on the CPU"
    return None


def _figures(case: dict) -> str:
    """A case's ratio and spread as the table shows them (as recorded, so they agree)."""
    low, high = case["spread"]
    return f"{case['ratio']:6.2f} {low:5.2f}-{high:5.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one step a round, one round: checks, not numbers")
    parser.add_argument("--rounds", type=int, default=9, help="rounds per model (default 9)")
    parser.add_argument("-k", dest="contains", default="", help="only models containing this")
    add_side_options(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.kernel_threads)
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    names = [name for name in JOBS if args.contains in name]
    if not names:
        parser.error(f"no model's name contains {args.contains!r}: {', '.join(JOBS)}")
    rounds = 1 if args.quick else args.rounds
    threads = args.kernel_threads or torch.openreg.get_kernel_threads()
    print(f"torch {torch.__version__}; {torch.get_num_threads()} threads on each side's host; "
          f"openreg kernels on {threads}; {rounds} round(s) a model")
    print(f"{'training step':34} {'cpu':>9} {'openreg':>9} {'ratio':>6} {'spread':>11} "
          f"{'target':>7}  CPU fallback")
    sides = {"cpu": Side("cpu", None), "openreg": Side("openreg", args.kernel_threads)}
    cases, per_round, wrong, over = [], {}, [], []
    try:
        for name in names:
            checked = {device: side.check(name) for device, side in sides.items()}
            problem = same_results(name, checked["cpu"], checked["openreg"])
            if problem:
                wrong.append(problem)
            # A side starts a round idle since its last one, and its first step is slower: one
            # untimed step first (none in a quick run, whose one round follows the check's).
            iterations, warm = (1, 0) if args.quick else \
                (max(1, round(ROUND_SECONDS / checked["cpu"]["seconds"])), 1)
            times: dict[str, list[float]] = {"cpu": [], "openreg": []}
            fell_back: set[str] = set()
            for r in range(rounds):  # alternating, so both sides see the same machine
                for device in (("cpu", "openreg") if r % 2 == 0 else ("openreg", "cpu")):
                    seconds, names_fell_back = sides[device].seconds(name, iterations, warm)
                    times[device].append(seconds)
                    fell_back |= names_fell_back
            ratios = [d / c for c, d in zip(times["cpu"], times["openreg"])]
            per_round[name] = ratios
            note = fell_back and f"fell back: {', '.join(sorted(fell_back))}"
            training = JOBS[name][1]
            row_name = name if training else f"{name}, {NEW_TOKENS} tokens (time)"
            cases.append(ratio_case(row_name, ratios, STEP_TARGET if training else None, note))
            if training and round(cases[-1]["ratio"], 2) > STEP_TARGET:  # as the table shows it
                over.append(f"{row_name} {cases[-1]['ratio']:.2f}")
            cpu, dev = statistics.median(times["cpu"]), statistics.median(times["openreg"])
            target = f"<={STEP_TARGET:.2f}" if training else "-"
            print(f"{row_name:34} {cpu * 1e3:7.1f}ms {dev * 1e3:7.1f}ms "
                  f"{_figures(cases[-1])} "
                  f"{target:>7}  {', '.join(sorted(fell_back))}", flush=True)
            if not training:  # generate: its throughput too
                speeds = [c / d for c, d in zip(times["cpu"], times["openreg"])]
                throughput = ratio_case(f"{name}, tokens/s: openreg / CPU", speeds,
                                        [TOKENS_TARGET, None])
                if round(throughput["ratio"], 2) < TOKENS_TARGET:
                    over.append(f"{throughput['name']} {throughput['ratio']:.2f}")
                cases.append(throughput)
                for device in ("cpu", "openreg"):
                    cases.append(value_case(f"{name}, tokens/s on {device}",
                                            [NEW_TOKENS / s for s in times[device]], "tokens/s"))
                print(f"{name + ', tokens/s':34} {NEW_TOKENS / cpu:9.1f} {NEW_TOKENS / dev:9.1f} "
                      f"{_figures(throughput)} "
                      f"{'>=' + format(TOKENS_TARGET, '.2f'):>7}", flush=True)
    finally:
        for side in sides.values():
            side.close()
    training = [name for name in names if JOBS[name][1]]
    if training:
        geomean = geomean_case("geomean, training steps",
                               [statistics.median(per_round[name]) for name in training],
                               [per_round[name] for name in training], GEOMEAN_TARGET)
        cases.insert(0, geomean)
        print(f"{'geomean, training steps':34} {'':19} {_figures(geomean)} "
              f"{'<=' + format(GEOMEAN_TARGET, '.2f'):>7}")
        if round(geomean["ratio"], 2) > GEOMEAN_TARGET:
            over.append(f"geomean {geomean['ratio']:.2f}")
    print("off target: " + (", ".join(over) or "none"))
    if wrong:
        print("\n".join(["different results on openreg and the CPU:", *wrong]), file=sys.stderr)
        return 1
    if not (args.quick or args.contains):  # whole runs only
        write("models", "Models people run",
              "Training steps of torchvision's ResNet-18 and MobileNetV3-Large, a GPT-2 decoder "
              "and a BERT encoder from small transformers configs, torch.nn's LSTM and "
              "MultiheadAttention, and GPT-2's greedy generate, openreg against the CPU.",
              {"rounds": rounds, "round_seconds": ROUND_SECONDS, "new_tokens": NEW_TOKENS,
               "kernel_threads": threads, "host_threads": torch.get_num_threads()},
              cases, args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
