"""Print the figures of contextwise's architecture: layers, sizes and the paths of two calls.

Run it from the checkout, with the development environment::

    .venv/bin/python -m tools.architecture

It prints, from the code as it stands:

- the layers of the import graph between the package's parts (its subpackages and root modules),
  every import counted, those inside functions included, and the cycles left between modules;
- the imports of another part's private module;
- module sizes (count, total lines, the largest);
- the modules that a policy's processing (`process_context` on a chat history) and one LangChain
  model call through the middleware (a fake chat model, offline) pass through, and how many times
  the path re-enters a module it had left.

Nothing is asserted: the figures are for the architecture page and the closing notes of the house's
issues, measured the same way before and after a change.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from types import FrameType
from typing import Any

import grimp

PACKAGE = "contextwise"
SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE


def part(module: str) -> str:
    """Return the part a module belongs to: its subpackage, or itself for a root module."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def is_private(module: str) -> bool:
    """Whether a module's own name (its last component) is private."""
    last = module.rsplit(".", 1)[-1]
    return last.startswith("_") and not last.startswith("__")


def strongly_connected(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def layers(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Group the parts by depth: layer 0 imports no other part, layer n imports layer n-1."""
    components = strongly_connected(nodes, edges)
    owner = {member: i for i, component in enumerate(components) for member in component}
    depth: dict[int, int] = {}

    def level(i: int) -> int:
        if i not in depth:
            depth[i] = 0
            below = {owner[t] for m in components[i] for t in edges.get(m, ()) if owner[t] != i}
            depth[i] = 1 + max((level(j) for j in below), default=-1)
        return depth[i]

    grouped: dict[int, list[str]] = defaultdict(list)
    for i, component in enumerate(components):
        name = component[0] if len(component) == 1 else "{" + ", ".join(component) + "}"
        grouped[level(i)].append(name)
    return [sorted(grouped[d]) for d in sorted(grouped)]


def print_graph() -> None:
    """Print the layers, the module cycles and the cross-part private imports."""
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=True)
    modules = sorted(graph.modules)
    module_edges: dict[str, set[str]] = {
        m: set(graph.find_modules_directly_imported_by(m)) for m in modules
    }
    part_edges: dict[str, set[str]] = defaultdict(set)
    private: list[str] = []
    shared: dict[str, int] = defaultdict(int)
    declared: dict[str, int] = defaultdict(int)
    for importer, imported_set in module_edges.items():
        for imported in imported_set:
            if part(importer) != part(imported):
                part_edges[part(importer)].add(part(imported))
                if imported.endswith("._api"):
                    declared[imported] += 1
                elif imported.count(".") >= 2 and any(
                    is_private(piece) for piece in imported.split(".")[2:]
                ):
                    private.append(f"{importer} -> {imported}")
                elif is_private(imported):
                    shared[imported] += 1
    parts = {part(m) for m in modules if m != PACKAGE}
    print("## Layers of the import graph (parts; every import, function-level included)")
    for number, members in enumerate(layers(parts, {p: part_edges[p] & parts for p in parts})):
        print(f"  layer {number}: {', '.join(members)}")
    cycles = [c for c in strongly_connected(modules, module_edges) if len(c) > 1]
    print(
        f"## Module cycles: {len(cycles)}"
        + "".join(f"\n  {len(c)} modules: {', '.join(c)}" for c in cycles)
    )
    print(
        "## Root internals imported by the parts: "
        + ", ".join(f"{m} ({n})" for m, n in sorted(shared.items()))
    )
    print(
        "## Declared internal APIs (a subpackage's _api) imported by other parts: "
        + (", ".join(f"{m} ({n})" for m, n in sorted(declared.items())) or "none")
    )
    print(f"## Imports of another subpackage's private module: {len(private)}")
    for line in sorted(private):
        print(f"  {line}")


def print_sizes() -> None:
    """Print the module count, the total lines and the largest modules."""
    sizes = sorted(
        (
            (
                len(path.read_text(encoding="utf-8").splitlines()),
                path.relative_to(SOURCE).as_posix(),
            )
            for path in SOURCE.rglob("*.py")
        ),
        reverse=True,
    )
    total = sum(lines for lines, _ in sizes)
    print(
        f"## Module sizes: {len(sizes)} modules, {total} lines, median {sizes[len(sizes) // 2][0]}"
    )
    print(f"  over 600 lines: {sum(1 for lines, _ in sizes if lines > 600)}")
    for lines, name in sizes[:8]:
        print(f"  {lines:5d}  {name}")


def trace(action: Callable[[], Any]) -> tuple[list[str], int, int]:
    """Run ``action``; return the package modules it passes through, its entries and re-entries."""
    seen: list[str] = []
    entries = 0
    reentries = 0
    last: list[str | None] = [None]

    def own(frame: FrameType | None) -> str | None:
        name = frame.f_globals.get("__name__", "") if frame is not None else ""
        return name if isinstance(name, str) and name.startswith(PACKAGE) else None

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal entries, reentries
        if event != "call":
            return
        module = own(frame)
        if module is None or module == last[0]:
            if module is not None:
                last[0] = module
            return
        entries += 1
        if module in seen:
            reentries += 1
        else:
            seen.append(module)
        last[0] = module

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return seen, entries, reentries


def policy_processing() -> None:
    """Process a chat history with a trim step, as the context policies guide does."""
    from contextwise import ContextPolicy, MessagesFragment, process_context

    history: list[dict[str, Any]] = []
    for number in range(12):
        history += [
            {"role": "user", "content": f"Question {number}: " + "word " * 40},
            {"role": "assistant", "content": f"Answer {number}: " + "word " * 60},
        ]
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 2000,
            "targetInputChars": 1500,
            "steps": [
                {"id": "turns", "kind": "trim", "fragmentId": "history", "targetChars": 1500}
            ],
        }
    )
    process_context(policy, [MessagesFragment("history", messages=history)])


def langchain_call() -> Callable[[], Any]:
    """Build a LangChain agent with the middleware; return one model call through it."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    policy = {
        "mode": "reduce",
        "trigger_chars": 2000,
        "target_input_chars": 1500,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 1500}],
    }
    history: list[Any] = []
    for number in range(12):
        history += [HumanMessage(f"Question {number}: " + "word " * 40), AIMessage("word " * 60)]
    model = GenericFakeChatModel(messages=iter(["Done."] * 4))
    agent = create_agent(
        model, system_prompt="You are terse.", middleware=[ContextPolicyMiddleware(policy)]
    )
    agent.invoke({"messages": history}, {"configurable": {"thread_id": "warm"}})
    history.append(HumanMessage("One more."))
    return lambda: agent.invoke({"messages": history}, {"configurable": {"thread_id": "warm"}})


def print_paths() -> None:
    """Print the modules passed through by a policy's processing and a LangChain model call."""
    policy_processing()  # imports and caches warmed: the trace shows the call, not the import
    call = langchain_call()
    for title, action in (
        ("process_context (trim on a chat history)", policy_processing),
        ("a LangChain model call through the middleware", call),
    ):
        seen, entries, reentries = trace(action)
        print(f"## {title}: {len(seen)} modules, {entries} module entries, {reentries} re-entries")
        print("  " + " -> ".join(m.removeprefix(PACKAGE + ".") for m in seen))


def main() -> None:
    """Print every figure."""
    print_graph()
    print_sizes()
    print_paths()


if __name__ == "__main__":
    main()
