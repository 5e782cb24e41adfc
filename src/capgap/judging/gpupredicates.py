"""Which of a module's helpers are predicates of the GPU alone: `major, _ =
torch.cuda.get_device_capability(); return major == 10`, with nothing else asked (no setting, no
library, no shape). Such a predicate is judged where it is called; the reading side keeps its
calls in the statement cut (reading.fileparse) when its name holds no hint word."""

from __future__ import annotations

import ast
import builtins
import re

from capgap.judging.records import HelperDef
from capgap.judging.statements import CAPISH


def of_the_gpu_alone(helper: HelperDef) -> bool:
    """Does everything the predicate's body calls and reads speak of the GPU (`major, _ =
    torch.cuda.get_device_capability()`, `return major == 10`), besides its own locals,
    constants, builtins and whether CUDA is there at all?"""
    try:
        body = helper.statements()
    except SyntaxError:
        return False
    nodes = [node for stmt in body for node in ast.walk(stmt)]
    bound = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    asked: set[int] = set()  # the names inside a call of the GPU (`torch` of `torch.cuda.is_available()`)
    for node in nodes:
        if isinstance(node, ast.Call):
            if not _OF_THE_GPU.search(ast.unparse(node.func)):
                return False
            asked.update(id(n) for n in ast.walk(node.func))
    return bool(body) and all(
        id(n) in asked or n.id in bound or n.id in _BUILTINS or CAPISH.search(n.id)
        for n in nodes
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


_OF_THE_GPU = re.compile(r"capab|(^|_)sm|arch|(^|_)cc($|_)|major|is_available|is_cuda|device", re.I)
_BUILTINS = frozenset(dir(builtins))
