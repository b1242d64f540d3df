"""Tests for the chapter "Testing: reusing PyTorch's test suites" (docs/testing.md).

PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db)
and module database (common_modules.module_db) are instantiated for the openreg
device with PyTorch's own device-type machinery: every sample input runs on
openreg and on the CPU and the results must agree, or the check must be in the
reviewed expected-failure table (torch_openreg/openreg/testing/expected_failures.py).

The optimizer database (common_optimizers.optim_db) runs the same way: every
config of every optimizer, with its foreach and fused implementations, a few steps
on the same parameters on openreg and on the CPU.

By default a fast subset runs (chosen to cover the mechanisms most likely to
break: copies with conjugate/negative bits, FFTs, batch and layer norm, random operators,
recurrent networks, reductions, indexing, memory formats, module.to, state_dict), and every
optimizer in float32. OPENREG_OPINFO=all instantiates every OpInfo, ModuleInfo and
OptimizerInfo; OPENREG_SUITES=all every ModuleInfo (all samples) and OptimizerInfo in float32
and float64, with the OpInfo subset; scripts/opinfo_sweep.py runs the whole OpInfo database
with crash isolation.

Markers proven: TESTING_* (the harness, the table, the device test classes),
COPY_BYTES_MATCH, COPY_MATH_BITS_FALLTHROUGH, RECURRENT_*, RANDOM_INVERSE_CDF,
RANDOM_SEEDED_*, RANDOM_DISTRIBUTIONS_REGISTER, SPARSE_* and EXAMPLE_SPARSE_COO (TestSparse),
QUANTIZED_* (TestQuantized),
ZERO_TENSOR_*, PYTORCH_TESTS_* (the runner of PyTorch's own test files, tools/pytorch_tests.py,
on tests/data/device_generic_sample.py).
"""

import os
import subprocess
import sys

import torch
import torch_openreg  # noqa: F401
from torch.testing._internal.common_methods_invocations import op_db

from conftest import ROOT
from torch_openreg.openreg.testing.compare import op_key
from torch_openreg.openreg.testing.device_tests import (
    FAST_MODULES,
    FAST_OPS,
    FAST_OPTIMIZERS,
    instantiate,
)

ALL = os.environ.get("OPENREG_OPINFO") == "all"
SUITES = os.environ.get("OPENREG_SUITES") == "all"
instantiate(globals(), op_names=None if ALL else FAST_OPS,
            module_names=None if ALL or SUITES else FAST_MODULES,
            optim_names=FAST_OPTIMIZERS, max_samples=None if SUITES else 4,
            suite_dtypes=(torch.float32, torch.float64) if SUITES else (torch.float32,))


def test_instantiated_for_openreg():
    """PrivateUse1TestBase joined: the generated tests carry the device's name."""
    # PrivateUse1TestBase names the class before the backend's name is known.
    cls = globals()["TestOpInfoOpenRegPRIVATEUSE1"]
    assert any(name.endswith("_openreg_float32") for name in dir(cls))


def test_expected_failures_have_reasons():
    from torch_openreg.openreg.testing.expected_failures import EXPECTED_FAILURES

    names = {op_key(op) for op in op_db}
    for (op, dtype, direction), reason in EXPECTED_FAILURES.items():
        assert op in names, f"{op} is not an OpInfo"
        assert direction in ("forward", "backward")
        assert dtype == "*" or hasattr(torch, dtype)
        assert len(reason.strip()) > 10, f"{op}: the reason must say why"


def test_suite_expected_failures_name_entries():
    """Each entry of the module and optimizer tables names an entry, a dtype and a check."""
    from torch.testing._internal.common_modules import module_db
    from torch.testing._internal.common_optimizers import optim_db

    from torch_openreg.openreg.testing.expected_failures import (
        MODULE_EXPECTED_FAILURES,
        OPTIMIZER_EXPECTED_FAILURES,
    )
    from torch_openreg.openreg.testing.modules import MODULE_CHECKS
    from torch_openreg.openreg.testing.optimizers import OPTIMIZER_IMPLS

    for table, names, checks in ((MODULE_EXPECTED_FAILURES, {m.name for m in module_db},
                                  MODULE_CHECKS),
                                 (OPTIMIZER_EXPECTED_FAILURES, {o.name for o in optim_db},
                                  OPTIMIZER_IMPLS)):
        for (name, dtype, check), reason in table.items():
            assert name in names, f"{name} is not in PyTorch's database"
            assert check in checks, f"{name}: {check} is not a check"
            assert dtype == "*" or hasattr(torch, dtype)
            assert len(reason.strip()) > 10, f"{name}: the reason must say why"


def test_suite_classes_instantiated():
    """The module and optimizer classes exist for openreg, with one test per check."""
    modules_cls = globals()["TestModuleInfoOpenRegOPENREG"]
    optims_cls = globals()["TestOptimizerInfoOpenRegOPENREG"]
    for check in ("forward", "backward", "gradgrad", "memory_format", "to", "to_identity",
                  "state_dict"):
        assert f"test_{check}_nn_Linear_openreg_float32" in dir(modules_cls), check
    for impl in ("forloop", "foreach", "fused"):
        assert f"test_{impl}_Adam_openreg_float32" in dir(optims_cls), impl


# ---- the example of the chapter ----
def test_example_output():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "testing.py")],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 7
    for line in lines[:6]:
        assert " pass " in line, line
    assert lines[6] == "z.conj().cpu() = tensor([1.-2.j, 3.+4.j])"


# ---- copies honour the conjugate and negative bits ----
class TestConjNegCopies:
    def setup_method(self):
        self.x = torch.tensor([1 + 2j, -3 - 4j, 5 + 0.5j])
        self.d = self.x.to("openreg")

    def test_conj_to_cpu(self):
        assert torch.equal(self.d.conj().cpu(), self.x.conj())

    def test_copy_into_device(self):
        e = torch.empty_like(self.d)
        e.copy_(self.d.conj())
        assert torch.equal(e.cpu(), self.x.conj())

    def test_resolve_conj_and_neg_view(self):
        assert torch.equal(self.d.conj().resolve_conj().cpu(), self.x.conj())
        assert torch.equal(torch._neg_view(self.d).cpu(), -self.x)
        assert torch.equal(torch._neg_view(self.d).resolve_neg().cpu(), -self.x)

    def test_cpu_conj_to_device_and_strided(self):
        assert torch.equal(self.x.conj().to("openreg").cpu(), self.x.conj())
        m = torch.randn(4, 3, dtype=torch.complex64)
        dm = m.to("openreg")
        assert torch.equal(dm.t().conj().cpu(), m.t().conj())  # not dense-compatible: device copy
        assert torch.equal(dm.mH.contiguous().cpu(), m.mH.contiguous())

    def test_into_conj_view(self):
        e = torch.zeros(3, dtype=torch.complex64, device="openreg")
        e.conj().copy_(self.d.to(torch.complex64))
        assert torch.equal(e.cpu(), self.x.to(torch.complex64).conj())

    def test_conj_aware_matmul(self):
        a = torch.randn(3, 3, dtype=torch.complex64)
        b = torch.randn(3, 3, dtype=torch.complex64)
        got = (a.to("openreg").conj() @ b.to("openreg").mH).cpu()
        torch.testing.assert_close(got, a.conj() @ b.mH)

    def test_ifft_of_real(self):
        r = torch.randn(8)
        torch.testing.assert_close(torch.fft.ifft(r.to("openreg")).cpu(), torch.fft.ifft(r))


# ---- random distributions: moments, reproducibility, torch.distributions ----
N = 200_000


def _moments(t):
    t = t.double().cpu()
    return t.mean().item(), t.var().item()


class TestDistributions:
    def test_inverse_cdf_moments(self):
        x = torch.empty(N, device="openreg")
        m, v = _moments(x.exponential_(2.0))
        assert abs(m - 0.5) < 0.01 and abs(v - 0.25) < 0.01
        m, v = _moments(x.log_normal_(0.0, 0.5))
        assert abs(m - 1.1331) < 0.01 and abs(v - 0.3646) < 0.02
        m, _ = _moments(x.geometric_(0.25))
        assert abs(m - 4.0) < 0.05 and x.min().item() >= 1
        med = x.cauchy_(1.0, 2.0).cpu().median().item()
        assert abs(med - 1.0) < 0.05

    def test_seeded_cpu_algorithms(self):
        rate = torch.full((N,), 3.0, device="openreg")
        m, v = _moments(torch.poisson(rate))
        assert abs(m - 3) < 0.03 and abs(v - 3) < 0.06
        m, v = _moments(torch.binomial(torch.full((N,), 10.0, device="openreg"),
                                       torch.full((N,), 0.3, device="openreg")))
        assert abs(m - 3) < 0.03 and abs(v - 2.1) < 0.05
        m, v = _moments(torch._standard_gamma(torch.full((N,), 2.0, device="openreg")))
        assert abs(m - 2) < 0.03 and abs(v - 2) < 0.06
        mean = torch.full((N,), 1.0, device="openreg")
        std = torch.full((N,), 2.0, device="openreg")
        m, v = _moments(torch.normal(mean, std))
        assert abs(m - 1) < 0.03 and abs(v - 4) < 0.08
        probs = torch.tensor([0.1, 0.2, 0.7], device="openreg")
        counts = torch.bincount(torch.multinomial(probs, N, replacement=True).cpu(), minlength=3)
        torch.testing.assert_close(counts.double() / N, probs.cpu().double(), atol=0.01, rtol=0)
        perm = torch.randperm(1000, device="openreg")
        assert perm.device.type == "openreg" and torch.equal(perm.cpu().sort().values,
                                                             torch.arange(1000))
        d = torch._sample_dirichlet(torch.ones(1000, 4, device="openreg"))
        torch.testing.assert_close(d.sum(1).cpu(), torch.ones(1000), atol=1e-5, rtol=0)

    def test_seed_reproduces(self):
        def draw():
            torch.openreg.manual_seed(1234)
            x = torch.empty(64, device="openreg")
            return [x.exponential_().cpu(), torch.poisson(x.abs() + 1).cpu(),
                    torch.multinomial(x.abs() + 0.1, 8).cpu(),
                    torch.randperm(16, device="openreg").cpu()]

        first, second = draw(), draw()
        for a, b in zip(first, second):
            assert torch.equal(a, b)
        torch.openreg.manual_seed(4321)
        assert not torch.equal(torch.empty(64, device="openreg").exponential_().cpu(), first[0])

    def test_generator_argument(self):
        g = torch.Generator(device="openreg").manual_seed(7)
        a = torch.poisson(torch.ones(32, device="openreg"), generator=g).cpu()
        g.manual_seed(7)
        b = torch.poisson(torch.ones(32, device="openreg"), generator=g).cpu()
        assert torch.equal(a, b)

    def test_torch_distributions(self):
        D = torch.distributions
        one = torch.ones((), device="openreg")
        for dist in [D.Normal(one, one), D.Gamma(one * 2, one), D.Beta(one * 2, one * 3),
                     D.Dirichlet(torch.ones(3, device="openreg")), D.Poisson(one * 4),
                     D.Exponential(one), D.Categorical(probs=torch.ones(4, device="openreg")),
                     D.Binomial(10, probs=one * 0.5), D.Cauchy(one, one),
                     D.LogNormal(one * 0, one), D.Geometric(one * 0.3)]:
            s = dist.sample((1000,))
            assert s.device.type == "openreg", type(dist).__name__
            assert torch.isfinite(dist.log_prob(s)).all().item(), type(dist).__name__

    def test_rrelu_training(self):
        x = -torch.ones(N, device="openreg")
        y = torch.nn.functional.rrelu(x, 0.1, 0.3, training=True).cpu()
        assert y.min().item() >= -0.3 and y.max().item() <= -0.1
        assert abs(y.mean().item() + 0.2) < 0.01


# ---- recurrent networks train on openreg and match the CPU ----
class TestRecurrent:
    def _compare(self, make):
        torch.manual_seed(0)
        cpu = make()
        dev = make().to("openreg")
        dev.load_state_dict(cpu.state_dict())
        x = torch.randn(5, 3, 4)
        out_c, _ = cpu(x)
        out_d, _ = dev(x.to("openreg"))
        torch.testing.assert_close(out_d.cpu(), out_c, rtol=1e-5, atol=1e-5)
        out_c.square().sum().backward()
        out_d.square().sum().backward()
        for (name, p_c), p_d in zip(cpu.named_parameters(), dev.parameters()):
            torch.testing.assert_close(p_d.grad.cpu(), p_c.grad, rtol=1e-4, atol=1e-5, msg=name)

    def test_lstm_gru_rnn(self):
        self._compare(lambda: torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True))
        self._compare(lambda: torch.nn.GRU(4, 6, num_layers=2, bidirectional=True))
        self._compare(lambda: torch.nn.RNN(4, 6, num_layers=2, nonlinearity="relu"))

    def test_lstm_runs_the_cpus_layer_kernel(self):
        """nn.LSTM on float32 takes oneDNN's layer kernel on openreg, as on the CPU: the same
        bits forward and backward, with dropout between layers, without biases, batch first;
        with a projection (which oneDNN's kernel lacks) it composes cells, as the CPU does."""
        configs = [dict(num_layers=2, bidirectional=True, batch_first=True),
                   dict(num_layers=2, bias=False), dict(num_layers=3, dropout=0.5)]
        for kw in configs:
            torch.manual_seed(0)
            cpu = torch.nn.LSTM(8, 16, **kw)
            dev = torch.nn.LSTM(8, 16, **kw).to("openreg")
            dev.load_state_dict(cpu.state_dict())
            x = torch.randn(5, 3, 8)
            with torch.profiler.profile() as prof:
                out_d, (h_d, c_d) = dev(x.to("openreg"))
                (out_d.sum() + h_d.sum() + c_d.sum()).backward()
            names = {e.key for e in prof.key_averages()}
            assert "aten::mkldnn_rnn_layer" in names and "aten::_thnn_fused_lstm_cell" not in names
            if kw.get("dropout"):
                continue  # the masks come from two generators: the shapes are what is checked
            out_c, (h_c, c_c) = cpu(x)
            (out_c.sum() + h_c.sum() + c_c.sum()).backward()
            for got, expected in ((out_d, out_c), (h_d, h_c), (c_d, c_c)):
                assert torch.equal(got.cpu(), expected), kw
            for p_c, p_d in zip(cpu.parameters(), dev.parameters()):
                assert torch.equal(p_d.grad.cpu(), p_c.grad), kw
        projected = torch.nn.LSTM(8, 16, proj_size=4).to("openreg")
        with torch.profiler.profile() as prof:
            projected(torch.randn(5, 3, 8, device="openreg"))
        assert "aten::mkldnn_rnn_layer" not in {e.key for e in prof.key_averages()}

    def test_packed_sequence_training(self):
        """Ten SGD steps on a packed batch: the same losses as on the CPU, decreasing."""
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        def train(device):
            torch.manual_seed(0)
            model = torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, batch_first=True)
            head = torch.nn.Linear(16, 1)
            model, head = model.to(device), head.to(device)
            opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.5)
            x = torch.randn(6, 7, 4).to(device)
            target = torch.randn(6, 7, 1).to(device)
            lengths = torch.tensor([7, 6, 5, 4, 3, 2])
            losses = []
            for _ in range(10):
                packed = pack_padded_sequence(x, lengths, batch_first=True)
                out, _ = pad_packed_sequence(model(packed)[0], batch_first=True)
                loss = (head(out) - target).square().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses

        on_cpu, on_device = train("cpu"), train("openreg")
        torch.testing.assert_close(on_device, on_cpu, rtol=1e-4, atol=1e-6)
        assert on_device[-1] < on_device[0]


# ---- sparse tensors: COO on the device, computed on the CPU; compressed layouts refused ----
def test_sparse_example_output():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "testing_sparse.py")],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "torch.sparse_coo openreg:0 indices on openreg:0 values on openreg:0",
        "moving it made no fallback: True",
        "w.grad = [[1.0, 1.0, 4.0], [5.0, 1.0, 6.0]]",
        "ran on the CPU: ['aten::add.Tensor', 'aten::mul.Tensor', 'aten::sum']",
        "CSR: 'aten::_to_sparse_csr' is not supported for layout torch.sparse_csr",
    ]


class TestSparse:
    """SPARSE_REGISTER_STRUCTURE, SPARSE_REGISTER_COMPUTE, SPARSE_REGISTER_BY_NAME,
    SPARSE_FALLBACK_KERNEL, SPARSE_CHECKED_INDICES, SPARSE_REGISTER_COMPRESSED, SPARSE_REFUSAL."""

    def setup_method(self):
        self.i = torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
        self.v = torch.tensor([3.0, -4.0, 5.0, 1.0])
        self.s = torch.sparse_coo_tensor(self.i, self.v, (2, 3))  # uncoalesced: (0, 2) twice

    def test_moves_without_falling_back(self):
        torch.openreg.reset_fallback_counts()
        d = self.s.to("openreg")
        assert (d.layout, d.device.type) == (torch.sparse_coo, "openreg")
        assert d._indices().device == d._values().device == d.device
        assert (d._nnz(), d.sparse_dim(), d.dense_dim(), d.is_coalesced()) == (4, 2, 0, False)
        back = d.cpu()
        assert torch.equal(back._indices(), self.i) and torch.equal(back._values(), self.v)
        assert torch.equal(d.clone().cpu().to_dense(), self.s.to_dense())
        made = torch.sparse_coo_tensor(self.i.to("openreg"), self.v.to("openreg"), (2, 3))
        assert made.device == d.device
        assert torch.zeros(2, 3, layout=torch.sparse_coo, device="openreg")._nnz() == 0
        assert torch.openreg.fallback_counts() == {}

    def test_operators_match_the_cpu_and_are_counted(self):
        d = self.s.to("openreg")
        w = torch.arange(6.0).reshape(3, 2)
        torch.openreg.reset_fallback_counts()
        cases = [
            (lambda t: t.coalesce(), True),
            (lambda t: (t + t).to_dense(), False),
            (lambda t: t.sum(), False),  # a SparseCPU kernel beside a composite: by name
            (lambda t: torch.sparse.mm(t, w.to(t.device)), False),
            (lambda t: t.coalesce().abs_(), True),
            (lambda t: t.permute(1, 0).to_dense(), False),  # a view: PyTorch's own kernel
            (lambda t: t.to_dense().to_sparse(), True),
        ]
        for f, sparse in cases:
            on_cpu, on_device = f(self.s), f(d)
            assert on_device.device.type == "openreg"
            if sparse:
                assert on_device.layout == torch.sparse_coo
                on_cpu, on_device = on_cpu.to_dense(), on_device.to_dense()
            torch.testing.assert_close(on_device.cpu(), on_cpu)
        counts = torch.openreg.fallback_counts()
        for name in ("aten::_coalesce", "aten::add.Tensor", "aten::sum", "aten::_to_dense",
                     "aten::_to_sparse"):
            assert counts.get(name, 0) >= 1, (name, counts)
        assert "aten::permute" not in counts

    def test_sparse_gradients_as_on_the_cpu(self):
        def run(device, dense_term):
            emb = torch.nn.Embedding(5, 3, sparse=True).to(device)
            with torch.no_grad():
                emb.weight.copy_(torch.arange(15.0).reshape(5, 3))
            idx = torch.tensor([[0, 2], [2, 4]], device=device)
            loss = emb(idx).square().sum()
            if dense_term:  # a dense gradient joins the sparse one: .grad becomes dense
                loss = loss + emb.weight.sum()
            loss.backward()
            return emb.weight.grad

        for dense_term, layout in ((False, torch.sparse_coo), (True, torch.strided)):
            got, want = run("openreg", dense_term), run("cpu", dense_term)
            assert got.layout == want.layout == layout
            assert got.device.type == "openreg"
            torch.testing.assert_close(got.cpu().to_dense(), want.to_dense())

    def test_gradcheck_through_the_constructor(self):
        i = self.i.to("openreg")
        values = torch.randn(4, 2, dtype=torch.float64, device="openreg", requires_grad=True)

        def f(v):
            return torch.sparse_coo_tensor(i, v, (2, 3, 2)).coalesce().values().tanh()

        assert torch.autograd.gradcheck(f, (values,))

    def test_bad_indices_raise(self):
        import pytest

        values = torch.tensor([1.0], device="openreg")
        for index, message in ((5, "size is inconsistent with indices"),
                               (-1, "found negative index")):
            indices = torch.tensor([[index]], device="openreg")
            with pytest.raises(RuntimeError, match=message):
                torch.sparse_coo_tensor(indices, values, (2,))
        with pytest.raises(RuntimeError, match="same device"):
            self.s.to("openreg") + self.s
        with pytest.raises(RuntimeError, match="only supported by strided"):
            torch.empty_like(self.s.to("openreg"), memory_format=torch.preserve_format)

    def test_compressed_layouts_refused(self):
        import pytest

        dense = torch.eye(3, device="openreg")
        csr = torch.eye(3).to_sparse_csr()
        for make, op, layout in (
                (lambda: dense.to_sparse_csr(), "_to_sparse_csr", "csr"),
                (lambda: dense.to_sparse(layout=torch.sparse_bsc, blocksize=(1, 1)),
                 "_to_sparse", "bsc"),
                (lambda: self.s.to("openreg").to_sparse_csc(), "_to_sparse_csc", "csc"),
                (lambda: csr.to("openreg"), "_sparse_compressed_tensor_unsafe", "csr"),
                (lambda: torch.empty(2, 2, layout=torch.sparse_csr, device="openreg"),
                 "empty.memory_format", "csr")):
            with pytest.raises(NotImplementedError,
                               match=rf"'aten::{op}' .*torch\.sparse_{layout} on openreg"):
                make()


class TestQuantized:
    """QUANTIZED_CHECKS, QUANTIZED_EMPTY, QUANTIZED_COPY, QUANTIZED_FALLBACK_KERNEL,
    QUANTIZED_REGISTER_STRUCTURE, QUANTIZED_REGISTER_COMPUTE, QUANTIZED_REGISTER_PER_CHANNEL,
    QUANTIZED_REGISTER_BY_NAME."""

    def setup_method(self):
        self.x = torch.tensor([[-1.0, 0.0, 0.25], [0.5, 2.0, 30.0]])

    def test_moves_and_views_without_falling_back(self):
        for dtype in (torch.quint8, torch.qint8, torch.qint32):
            q = torch.quantize_per_tensor(self.x, 0.1, 5, dtype)
            torch.openreg.reset_fallback_counts()
            d = q.to("openreg")
            assert (d.device.type, d.dtype, d.qscheme()) == ("openreg", dtype,
                                                             torch.per_tensor_affine)
            assert (d.q_scale(), d.q_zero_point()) == (0.1, 5)
            assert torch.equal(d.cpu().int_repr(), q.int_repr())
            views = (d.t(), d.flatten(), d.view(3, 2), d.unsqueeze(0).squeeze(0), d[1:, ::2])
            for view in views:
                assert view.is_quantized and view.untyped_storage().data_ptr() == \
                    d.untyped_storage().data_ptr()
            assert torch.equal(d.t().contiguous().cpu().int_repr(), q.t().contiguous().int_repr())
            # Not dense: PyTorch's _to_copy alone would leave the copy on the source's device.
            for moved, device in ((d[:, ::2].cpu(), "cpu"), (q[:, ::2].to("openreg"), "openreg")):
                assert moved.device.type == device
                assert torch.equal(moved.cpu().int_repr(), q[:, ::2].int_repr())
            assert torch.openreg.fallback_counts() == {}

    def test_save_and_load(self, tmp_path):
        d = torch.quantize_per_tensor(self.x, 0.1, 5, torch.qint8).to("openreg")[1:]
        torch.save(d, tmp_path / "q.pt")
        loaded = torch.load(tmp_path / "q.pt")
        assert (loaded.device, loaded.q_scale(), loaded.q_zero_point()) == (d.device, 0.1, 5)
        assert torch.equal(loaded.cpu().int_repr(), d.cpu().int_repr())

    def test_operators_match_the_cpu_and_are_counted(self):
        d = self.x.to("openreg")
        torch.openreg.reset_fallback_counts()
        for dtype in (torch.quint8, torch.qint8, torch.qint32):
            q, qd = (torch.quantize_per_tensor(t, 0.1, 5, dtype) for t in (self.x, d))
            assert qd.device.type == "openreg" and qd.is_quantized
            for f in (lambda t: t.flip(0, 1), lambda t: t.int_repr(), lambda t: t.dequantize(),
                      lambda t: torch.quantize_per_tensor(t.dequantize() * 2, 0.2, 3, dtype)):
                on_cpu, on_device = f(q), f(qd)
                assert on_device.device.type == "openreg"
                assert on_device.dtype == on_cpu.dtype
                if on_cpu.is_quantized:
                    assert on_device.q_scale() == on_cpu.q_scale()
                    on_cpu, on_device = on_cpu.int_repr(), on_device.int_repr()
                assert torch.equal(on_device.cpu(), on_cpu)
            assert torch.equal(qd, qd.flip(0).flip(0)) and not torch.equal(qd, qd.flip(1))
            torch.testing.assert_close(qd.flip(1), q.flip(1).to("openreg"))
        counts = torch.openreg.fallback_counts()
        for name in ("aten::quantize_per_tensor", "aten::flip", "aten::int_repr",
                     "aten::dequantize.self", "aten::equal"):
            assert counts.get(name, 0) >= 1, (name, counts)

    def test_unsupported_cases_raise(self):
        import pytest

        per_channel = torch.quantize_per_channel(self.x, torch.tensor([0.1, 0.2]),
                                                 torch.tensor([0, 1]), 0, torch.quint8)
        with pytest.raises(NotImplementedError, match="per_channel_affine is not supported on "
                                                      "openreg"):
            per_channel.to("openreg")
        with pytest.raises(NotImplementedError,
                           match="'aten::quantize_per_channel' is not supported on openreg"):
            torch.quantize_per_channel(self.x.to("openreg"), torch.tensor([0.1, 0.2]),
                                       torch.tensor([0, 1]), 0, torch.quint8)
        with pytest.raises(NotImplementedError, match="QUInt4x2 is not supported on openreg"):
            torch.quantize_per_tensor(self.x, 0.1, 5, torch.quint4x2).to("openreg")
        with pytest.raises(RuntimeError, match="use dequantize"):
            torch.empty(2, 3, device="openreg").copy_(
                torch.quantize_per_tensor(self.x, 0.1, 5, torch.quint8).to("openreg"))


# ---- tools/pytorch_tests.py: PyTorch's own test files, run on openreg and on the CPU ----
sys.path.insert(0, str(ROOT / "tools"))
import json  # noqa: E402

import pytorch_tests  # noqa: E402

SAMPLE = "device_generic_sample.py::TestSample"


def test_pytorch_tests_runner(tmp_path):
    """A crash and a hang cost one test each; the table counts what ran; --check objects."""
    tables = tmp_path / "tables.py"
    tables.write_text(f"EXPECTED_FAILURES = {{'{SAMPLE}.test_listed_but_passes': 'a listed pass',"
                      f" '{SAMPLE}.test_crash': 'os.abort on the device'}}\n")
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pytorch_tests.py"), "--tests-dir",
         str(ROOT / "tests" / "data"), "device_generic_sample.py", "--output", str(report),
         "--timeout", "3", "--tables", str(tables), "--check"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr
    (entry,) = json.loads(report.read_text())["files"]
    # test_only_cpu is skipped on openreg by onlyCPU: not counted.
    assert entry["counts"] == {"cpu tests": 8, "cpu passed": 8, "device-specific": 1,
                               "compared": 7, "openreg passed": 3, "mismatch": 1,
                               "not implemented": 1, "crash": 1, "timeout": 1}
    reasons = {f["test"].split(".")[-1]: (f["outcome"], f["reason"]) for f in entry["failures"]}
    assert reasons == {"test_mismatch": ("failed", "mismatch"),
                       "test_not_implemented": ("failed", "not implemented"),
                       "test_crash": ("crash", "crash"), "test_hang": ("timeout", "timeout"),
                       "test_listed_but_passes": ("passed", "expected to fail")}
    # The run went on past the crash and the hang: the test after them passed.
    assert "test_zz_after_the_crash" not in reasons
    problems = result.stdout.split("device_generic_sample.py: {", 1)[1]
    assert f"{SAMPLE}.test_listed_but_passes passes now" in problems
    assert f"{SAMPLE}.test_mismatch fails (mismatch)" in problems
    assert "test_crash" not in problems  # listed, and still failing
    assert "| `device_generic_sample.py` | 8 | 1 | 0 | 7 | 3 (42.9 %) |" in pytorch_tests.render(
        json.loads(report.read_text()))


def test_pytorch_tests_check_passes_when_every_failure_is_listed():
    """compare and check on results as the plugin records them, the device taken out."""
    cpu = {f"f.py::TestSampleCPU::test_{n}_cpu_float32": {"outcome": "passed", "message": ""}
           for n in ("a", "b", "c")}
    openreg = {"f.py::TestSamplePRIVATEUSE1::test_a_openreg_float32": {"outcome": "passed",
                                                                        "message": ""},
               "f.py::TestSampleOPENREG::test_b_openreg_float32": {
                   "outcome": "failed", "message": "RuntimeError: kernel failed on the device"},
               "f.py::TestSamplePRIVATEUSE1::test_c_openreg_float32": {
                   "outcome": "skipped", "message": "Only runs on ['cpu']"}}
    saved = dict(pytorch_tests.EXPECTED_FAILURES)
    try:
        pytorch_tests.EXPECTED_FAILURES.clear()
        entry = pytorch_tests.compare("f.py", cpu, openreg)
        assert entry["counts"] == {"cpu tests": 3, "cpu passed": 3, "compared": 2,
                                   "openreg passed": 1, "late kernel error": 1,
                                   "device-specific": 1}
        assert len(pytorch_tests.check(entry)) == 1
        pytorch_tests.EXPECTED_FAILURES["f.py::TestSample.test_b_*"] = "a known cause"
        assert pytorch_tests.check(pytorch_tests.compare("f.py", cpu, openreg)) == []
    finally:
        pytorch_tests.EXPECTED_FAILURES.clear()
        pytorch_tests.EXPECTED_FAILURES.update(saved)
