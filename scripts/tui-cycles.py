#!/usr/bin/env python3
"""Prints the import graph among the workbench's top-level modules (src/tui/<module>)
and every group of modules that import each other (strongly connected components).

Reads `crate::tui::x` and `super::x` paths outside `#[cfg(test)]` code; a folder module
and its files count as one module. Usage: scripts/tui-cycles.py [src/tui]
Exits 1 when there is a cycle.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "src/tui"


def top_module(path):
    first = os.path.relpath(path, root).split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def is_module(name):
    return os.path.exists(os.path.join(root, name + ".rs")) or os.path.isdir(os.path.join(root, name))


edges = {}
for dirpath, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".rs"):
            continue
        path = os.path.join(dirpath, name)
        module = top_module(path)
        if module == "mod":
            continue
        with open(path, encoding="utf-8") as file:
            text = file.read().split("#[cfg(test)]")[0]
        for used in re.findall(r"(?:crate::tui::|super::)+([a-z_]+)", text):
            if used != module and is_module(used):
                edges.setdefault(module, set()).add(used)


def components(graph):
    """Tarjan's algorithm: the strongly connected components of `graph`."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            found.append(sorted(group))

    nodes = sorted(set(graph) | {n for targets in graph.values() for n in targets})
    for node in nodes:
        if node not in index:
            visit(node)
    return nodes, found


nodes, groups = components(edges)
for module in sorted(edges):
    print(f"{module} -> {', '.join(sorted(edges[module]))}")
cycles = [group for group in groups if len(group) > 1]
print(f"\n{len(nodes)} modules, {len(cycles)} group(s) importing each other")
for group in cycles:
    print(f"  {len(group)}: {' '.join(group)}")
sys.exit(1 if cycles else 0)
