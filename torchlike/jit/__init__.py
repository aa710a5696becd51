"""torch.jit: TorchScript's API on eager code (see _script.py for what that means and what differs)."""

from typing import Final

from ._async import Future, fork, wait
from ._fuser import (Error, enable_onednn_fusion, fuser, interface, onednn_fusion_enabled, optimized_execution,
                     script_if_tracing, set_fusion_strategy, strict_fusion)  # fmt: skip
from ._isinstance import jit_isinstance as isinstance
from ._script import (Attribute, CompilationUnit, FunctionModifiers, RecursiveScriptModule, ScriptFunction,
                      ScriptModule, ScriptWarning, _overload, _overload_method, annotate, export, export_opnames,
                      freeze, ignore, is_scripting, load, optimize_for_inference, save, script, script_method,
                      unused)  # fmt: skip
from ._trace import (TopLevelTracedModule, TracedModule, TracerWarning, TracingCheckError, is_tracing, trace,
                     trace_module)  # fmt: skip

_fork = fork
_wait = wait
_script_if_tracing = script_if_tracing

__all__ = ["Attribute", "CompilationUnit", "Error", "export_opnames", "Final", "Future", "ScriptFunction", "ScriptModule", "annotate", "enable_onednn_fusion",
           "export", "fork", "freeze", "fuser", "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution", "save", "script",
           "script_if_tracing", "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused",
           "wait"]  # fmt: skip
