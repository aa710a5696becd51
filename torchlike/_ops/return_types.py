"""torch.return_types: named tuples of several outputs (``torch.max(x, 1).values``)."""

from __future__ import annotations

from typing import Any


def _structseq(name: str, fields: tuple) -> type:
    def __new__(cls, *values: Any) -> Any:
        if len(values) == 1 and isinstance(values[0], (tuple, list)) and len(fields) != 1:
            values = tuple(values[0])
        if len(values) != len(fields):
            raise TypeError(f"torch.return_types.{name} takes a {len(fields)}-sequence ({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self: Any) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self: Any) -> tuple:
        return (cls, tuple(self))

    ns = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__, "__slots__": (), "_fields": fields,
          "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0,
          "__module__": "torchlike.return_types"}  # fmt: skip
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (tuple,), ns)
    return cls


_VI = ("values", "indices")
max = _structseq("max", _VI)
min = _structseq("min", _VI)
sort = _structseq("sort", _VI)
topk = _structseq("topk", _VI)
kthvalue = _structseq("kthvalue", _VI)
median = _structseq("median", _VI)
nanmedian = _structseq("nanmedian", _VI)
mode = _structseq("mode", _VI)
cummax = _structseq("cummax", _VI)
cummin = _structseq("cummin", _VI)
aminmax = _structseq("aminmax", ("min", "max"))
slogdet = _structseq("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))
qr = _structseq("qr", ("Q", "R"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
svd = _structseq("svd", ("U", "S", "V"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_inv_ex = _structseq("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ("L", "info"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
geqrf = _structseq("geqrf", ("a", "tau"))
