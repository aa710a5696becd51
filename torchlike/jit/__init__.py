"""torch.jit: TorchScript's API on eager code (see _script.py for what that means and what differs)."""

from typing import Final

from ._async import Future, fork, wait
from ._isinstance import jit_isinstance as isinstance
from ._script import (Attribute, FunctionModifiers, RecursiveScriptModule, ScriptFunction, ScriptModule, annotate,
                      export, freeze, ignore, is_scripting, load, optimize_for_inference, save, script,
                      script_method, unused)  # fmt: skip
from ._trace import TopLevelTracedModule, TracedModule, is_tracing, trace, trace_module

__all__ = ["Attribute", "Final", "Future", "ScriptFunction", "ScriptModule", "annotate", "export", "fork", "freeze",
           "ignore", "isinstance", "is_scripting", "is_tracing", "load", "optimize_for_inference", "save", "script", "trace",
           "trace_module", "unused", "wait"]  # fmt: skip
