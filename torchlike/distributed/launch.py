"""torch.distributed.launch (deprecated in torch): torchrun that passes ``--local-rank=N`` to the
script unless ``--use-env``. Standard library only, for the same reason as ``run``."""

from __future__ import annotations

import os
import sys
import warnings

if __package__:
    from .run import get_args_parser, run
else:  # re-executed by file path (see run.py)
    from run import get_args_parser, run  # type: ignore[no-redef]


def parse_args(args: list[str] | None) -> object:
    parser = get_args_parser()
    parser.add_argument("--use-env", "--use_env", default=False, action="store_true")
    return parser.parse_args(args)


def main(args: list[str] | None = None) -> None:
    warnings.warn(
        "The module torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\n"
        "Note that --use-env is set by default in torchrun.\nIf your script expects `--local-rank` argument "
        "to be set, please\nchange it to read from `os.environ['LOCAL_RANK']` instead. See \n"
        "https://pytorch.org/docs/stable/distributed.html#launch-utility for \nfurther instructions\n",
        FutureWarning,
        stacklevel=2,
    )
    parsed = parse_args(args)
    if parsed.no_python and not parsed.use_env:
        raise ValueError("When using the '--no-python' flag, you must also set the '--use-env' flag.")
    extra = (lambda lr: []) if parsed.use_env else (lambda lr: [f"--local-rank={lr}"])
    sys.exit(run(parsed, extra))


if __name__ == "__main__":
    if __package__:  # started with -m: JAX holds the GPUs in this process; start over without it
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    main()
