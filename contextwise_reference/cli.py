"""The command line: ``contextwise-reference`` (or ``python -m contextwise_reference``).

    contextwise-reference extract         # messages -> locales/reference.pot
    contextwise-reference update          # merge the .pot into each locale's reference.po
    contextwise-reference stats           # translated / fuzzy / untranslated, per page
    contextwise-reference render          # the pages of every language, and the .pot
    contextwise-reference render --check  # change nothing; exit 1 if stale or fuzzy
    contextwise-reference migrate         # old module-keyed contexts -> public paths

The settings come from ``[tool.contextwise-reference]`` in the project's ``pyproject.toml``
(:mod:`contextwise_reference.config`); a flag overrides the key of the same name. A wrong setting,
or a griffe warning (a documented parameter missing from the signature, for example), stops every
subcommand with exit status 2 and one line on standard error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from contextwise_reference import catalog, files, migrate, po, project
from contextwise_reference.collect import GriffeWarningsError
from contextwise_reference.config import ConfigError
from contextwise_reference.stats import Coverage

COMMAND = "contextwise-reference"
FUZZY = (
    "A fuzzy translation is never published: check it against the English text, then remove its "
    "fuzzy flag."
)


def extract(target: project.Project) -> list[str]:
    """Write the project's template (``reference.pot``)."""
    state = project.load(target)
    text = catalog.render_template(state.reference, state.messages, target.header)
    written = files.write_if_changed(target.pot, text)
    return [f"{target.relative(target.pot)}: {'written' if written else 'unchanged'}"]


def update(target: project.Project) -> list[str]:
    """Write the template, then merge it into each locale (obsolete kept as #~, changes fuzzy),
    after moving any old module-keyed context to its public path (see ``migrate``)."""
    lines = extract(target)
    state = project.load(target)
    template = catalog.template(state.reference, state.messages, target.header)
    mapping = migrate.context_map(state.reference)
    for locale in target.translated:
        path = target.po(locale)
        existing = state.catalogs[locale]
        if existing is not None:  # contexts of before the public paths: moved, never lost
            migrate.migrate(existing, mapping)
        merged = catalog.merge(template, existing, locale)
        written = files.write_if_changed(path, po.render_po(merged))
        lines.append(f"{target.relative(path)}: {'written' if written else 'unchanged'}")
    return lines


def migrate_catalogs(target: project.Project) -> list[str]:
    """Rewrite the contexts of each locale's catalog keyed by a page's module to the public paths
    of today (``pkg.budget.BudgetSegment`` -> ``pkg.BudgetSegment``), keeping every translation;
    then write the template. Idempotent: run it on any catalog still old-style."""
    state = project.load(target)
    mapping = migrate.context_map(state.reference)
    lines: list[str] = []
    for locale in target.translated:
        path = target.po(locale)
        found = state.catalogs[locale]
        if found is None:
            continue
        changed = migrate.migrate(found, mapping)
        written = files.write_if_changed(path, po.render_po(found))
        state_word = "written" if written else "unchanged"
        lines.append(f"{target.relative(path)}: {changed} contexts moved, {state_word}")
    return lines + extract(target)


def stats_lines(coverage: list[Coverage], pages: list[str]) -> list[str]:
    """The coverage table: per page first, then the totals (the last lines, for ``tail``)."""
    width = max([len(page) for page in pages] + [12])
    lines = ["page".ljust(width) + "".join(f"  {c.locale:>8}" for c in coverage)]
    for page in pages:
        cells = "".join(
            f"  {c.pages[page].ratio:>7.1%}" if page in c.pages else f"  {'-':>8}" for c in coverage
        )
        lines.append(page.ljust(width) + cells)
    lines.append("")
    lines.append("locale  translated  fuzzy  untranslated  total  coverage")
    for c in coverage:
        t = c.total
        lines.append(
            f"{c.locale:<6}  {t.translated:>10}  {t.fuzzy:>5}  {t.untranslated:>12}  {t.total:>5}"
            f"  {t.ratio:>8.1%}"
        )
    met = all(c.releasable for c in coverage)
    lines.append(f"release rule (100 % translated, 0 fuzzy): {'met' if met else 'not met'}")
    return lines


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; every setting flag defaults to None (the pyproject key then)."""
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="the project's folder")
    settings = (
        ("--package", "the package to document (import name)"),
        ("--source", "the folder that holds the package"),
        ("--languages", "the language codes, comma-separated, the source language first"),
        ("--catalogs", "the folder of the catalogs"),
        ("--output", "where the pages go, with {language}"),
        ("--source-link", "a URL with {path}: links each page's source file"),
        ("--title", "the index page's title"),
    )
    for flag, text in settings:
        parser.add_argument(flag, default=None, help=text)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("extract", help="write the template, reference.pot")
    commands.add_parser("update", help="merge the template into each locale's catalog")
    stats = commands.add_parser("stats", help="print the translation coverage")
    stats.add_argument(
        "--strict", action="store_true", help="exit 1 unless every locale is 100 %% translated"
    )
    render = commands.add_parser("render", help="write the reference pages")
    render.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if stale or fuzzy"
    )
    commands.add_parser(
        "migrate", help="rewrite old module-keyed contexts of the catalogs to public paths"
    )
    return parser


def configured(args: argparse.Namespace, root: Path) -> project.Project:
    """The project of the parsed arguments (raises :class:`ConfigError`)."""
    return project.Project.configured(
        (args.root or root).resolve(),
        package=args.package,
        source=args.source,
        languages=args.languages,
        catalogs=args.catalogs,
        output=args.output,
        title=args.title,
        **{"source-link": args.source_link},
    )


def run(target: project.Project, args: argparse.Namespace, command: str) -> tuple[int, list[str]]:
    """Run one subcommand: its exit status and the lines to print."""
    if args.command == "extract":
        return 0, extract(target)
    if args.command == "update":
        return 0, update(target)
    if args.command == "migrate":
        return 0, migrate_catalogs(target)
    if args.command == "stats":
        state = project.load(target)
        pages = [page.slug for page in state.reference.pages] + ["label"]
        failed = args.strict and not all(c.releasable for c in state.coverage)
        return (1 if failed else 0), stats_lines(state.coverage, pages)
    state, found = project.generate(target)
    if args.check:
        problems = project.check(target, found, state)
        if any(not line.startswith("fuzzy:") for line in problems):
            problems.append(f"The reference is stale: run `{command} render`.")
        if any(line.startswith("fuzzy:") for line in problems):
            problems.append(FUZZY)
        return (1 if problems else 0), problems
    return 0, project.write(target, found) or ["the reference is up to date"]


def main(
    argv: Sequence[str] | None = None, *, root: Path | None = None, command: str = COMMAND
) -> int:
    """The command line; ``root`` is the default project folder (the current one when None)."""
    args = parser(command).parse_args(argv)
    try:
        target = configured(args, root or Path.cwd())
        status, lines = run(target, args, command)
    except (ConfigError, GriffeWarningsError) as error:
        print(error, file=sys.stderr)
        return 2
    if lines:
        print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
