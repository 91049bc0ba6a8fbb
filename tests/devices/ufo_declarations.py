"""The tools UFO's Windows MCP servers declare, read from UFO's own source (not run: they
need Windows): every function decorated `@<server>.tool(...)` inside a factory registered
with `@MCPRegistry.register_factory_decorator("NAMESPACE")`, in
ufo/client/mcp/local_servers/*.py. Prints one JSON object: tool name -> a list of
declarations ({namespace, file, line, params: {name: {type, required}}}), a tool that two
servers declare (`save_as`) listed twice.

usage: python3 ufo_declarations.py UFO_SOURCE
"""

import ast
import json
import os
import sys


def json_type(annotation):
    """The JSON type a Python annotation accepts (`Annotated[T, ...]` is `T`)."""
    if annotation is None:
        return "any"
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "Annotated":
        inner = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) else annotation.slice
        return json_type(inner)
    text = ast.unparse(annotation)
    if text.startswith("Optional[") or text.startswith("Union["):
        return "any"
    return {
        "str": "string",
        "int": "integer",
        "float": "number",
        "bool": "boolean",
    }.get(text, "array" if text.startswith("List") else "object" if text.startswith("Dict") else "any")


def declarations(source):
    folder = os.path.join(source, "ufo", "client", "mcp", "local_servers")
    found = {}
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(folder, file), encoding="utf-8-sig").read())
        for factory in ast.walk(tree):
            if not isinstance(factory, ast.FunctionDef):
                continue
            namespace = None
            for d in factory.decorator_list:
                if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("register_factory_decorator") and d.args:
                    namespace = d.args[0].value
            if namespace is None:
                continue
            for node in ast.walk(factory):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node is factory:
                    continue
                if not any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "tool"
                           for d in node.decorator_list):
                    continue
                args = node.args.args
                defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
                params = {
                    a.arg: {"type": json_type(a.annotation), "required": default is None}
                    for a, default in zip(args, defaults)
                    if a.arg != "self"
                }
                found.setdefault(node.name, []).append(
                    {"namespace": namespace, "file": file, "line": node.lineno, "params": params})
    return found


if __name__ == "__main__":
    print(json.dumps(declarations(sys.argv[1]), indent=1, sort_keys=True))
